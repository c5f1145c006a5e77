"""A 2025 downstream question while another caller's call is held (issue 34, review): a
2025-11-25 request does not say which call it belongs to, so the gateway forwards it only when
one call to that server is in flight. A call held between its 2026 caller's rounds is still in
flight downstream (its tool runs on), so it counts: a question asked then is refused, never put
to the other caller. Downstream: `tests/peers/survey_server.mjs` (official TypeScript SDK, 2025)
whose `survey` asks a follow-up once `peek` is called. Upstream: two official SDK clients in
their default (2026) mode through `toolweave serve`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mcp import types
from mcp.client import Client

from tests.host.serving import serving_gateway
from tests.host.test_gateway import NODE, needs_node
from tests.host.test_gateway_elicitation import _text

pytestmark = needs_node
SURVEY = Path(__file__).parents[1] / "peers" / "survey_server.mjs"


class Answering:
    """An upstream person: records each question and answers it with `answer`, once `ready`."""

    def __init__(self, answer: str) -> None:
        self.answer = answer
        self.asked: list[str] = []
        self.first_asked = asyncio.Event()
        self.ready = asyncio.Event()

    async def __call__(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(params.message)
        self.first_asked.set()
        await self.ready.wait()
        return types.ElicitResult(action="accept", content={"answer": self.answer})


async def test_a_question_while_another_callers_call_is_held_is_not_put_to_the_other(
    tmp_path: Path,
) -> None:
    servers = {"survey": {"command": str(NODE), "args": [str(SURVEY)]}}
    alice, bob = Answering("from alice"), Answering("from bob")
    bob.ready.set()
    async with (
        serving_gateway(tmp_path, servers, ["survey__survey", "survey__peek"]) as url,
        Client(url, mode="auto", elicitation_callback=alice) as first,
        Client(url, mode="auto", elicitation_callback=bob) as second,
    ):
        survey = asyncio.ensure_future(first.call_tool("survey__survey", {}))
        await alice.first_asked.wait()  # alice's call is held until she answers
        peek = await second.call_tool("survey__peek", {})
        alice.ready.set()
        surveyed = await survey
    assert bob.asked == []  # alice's follow-up never reached bob
    assert "follow-up refused" in _text(peek) and "held" in _text(peek), _text(peek)
    assert alice.asked == ["Survey: your name?"]
    assert _text(surveyed).startswith("first answered from alice; follow-up refused"), _text(
        surveyed
    )
