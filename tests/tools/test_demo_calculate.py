"""The demo calculator keeps integers integers (`17 * 23` is 391, not 391.0) and rounds only a
fractional result to the asked precision."""

from __future__ import annotations

import json

from toolweave.tools.context import ToolContext
from toolweave.tools.demo import calculate


async def result(expression: str, **extra: object) -> object:
    out = await calculate.execute({"expression": expression, **extra}, ToolContext())
    assert out.structured is not None and not out.is_error
    return out.structured


async def test_integers_stay_integers() -> None:
    value = await result("17 * 23")
    assert value == 391 and isinstance(value, int) and json.dumps(value) == "391"
    assert await result("2 ** 10") == 1024 and isinstance(await result("-(3 - 5)"), int)


async def test_fractions_are_rounded() -> None:
    assert await result("(3 + 4) * 2 / 7") == 2.0
    assert await result("1 / 3", precision=2) == 0.33
