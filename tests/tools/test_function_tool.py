"""`@tool` and `FunctionTool`: options, sync functions in worker threads, result conversion, and
every failure mode turning into a `ToolError`."""

from __future__ import annotations

import asyncio
import datetime
import decimal
import enum
import functools
import json
import pathlib
import sys
import threading
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from toolweave.tools import (
    ExecutionFailed,
    FunctionTool,
    ImageContent,
    Permission,
    TextContent,
    Tool,
    ToolAnnotations,
    ToolCancelled,
    ToolContext,
    ToolError,
    ToolResult,
    tool,
)


def test_bare_and_configured_decorator() -> None:
    @tool
    def bare(x: int) -> int:
        """Bare."""
        return x

    @tool(
        name="renamed",
        description="Configured tool.",
        permissions=["read", Permission.NETWORK, "db:query"],
        read_only=True,
        open_world=True,
        primary_arg="url",
        tags=["web", "fetch"],
        category="net",
        timeout=5.0,
    )
    async def configured(url: str) -> str:
        """Ignored docstring."""
        return url

    assert isinstance(bare, FunctionTool) and isinstance(configured, FunctionTool)
    assert isinstance(bare, Tool) and isinstance(configured, Tool)
    assert (bare.name, bare.description) == ("bare", "Bare.")
    assert bare.parameters["required"] == ["x"]
    assert bare.annotations == ToolAnnotations(
        read_only=False, destructive=True, idempotent=False, open_world=False
    )
    assert bare.permissions == frozenset() and bare.primary_arg is None
    assert configured.name == "renamed"
    assert configured.description == "Configured tool."
    assert configured.permissions == {
        Permission.READ,
        Permission.NETWORK,
        Permission.custom("db:query"),
    }
    assert configured.annotations == ToolAnnotations(
        read_only=True, destructive=False, idempotent=True, open_world=True
    )
    assert configured.primary_arg == "url"
    assert configured.tags == {"web", "fetch"}
    assert configured.category == "net"
    assert configured.timeout == 5.0
    assert configured.__wrapped__.__name__ == "configured"


def test_explicit_annotation_flags_override_read_only_defaults() -> None:
    @tool(destructive=False, idempotent=True)
    def put(key: str) -> None:
        """Idempotent write."""

    assert put.annotations.read_only is False
    assert put.annotations.destructive is False
    assert put.annotations.idempotent is True
    assert put.annotations.to_mcp() == {
        "readOnlyHint": False,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    assert ToolAnnotations.from_mcp(put.annotations.to_mcp()) == put.annotations


async def test_sync_functions_run_in_a_worker_thread_without_blocking_the_loop() -> None:
    gate = threading.Event()
    loop_thread = threading.get_ident()

    @tool
    def blocking() -> dict[str, Any]:
        """Wait for the event loop to open the gate."""
        released = gate.wait(timeout=10)
        return {"released": released, "thread": threading.get_ident()}

    task = asyncio.create_task(blocking())
    await asyncio.sleep(0)  # let the task start; the loop must stay free while the tool blocks
    gate.set()  # only reachable because the loop is not blocked by the tool
    result = await task
    assert result.structured["released"] is True
    assert result.structured["thread"] != loop_thread


async def test_sync_tools_see_contextvars_and_context() -> None:
    import contextvars

    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    var.set("from-caller")

    @tool
    def read_var(ctx: ToolContext) -> str:
        """Read a context variable from the worker thread."""
        return f"{var.get()} {ctx.deps}"

    assert (await read_var.execute({}, ToolContext(deps="deps"))).text == "from-caller deps"


class Weather(BaseModel):
    city: str
    celsius: float


@dataclass
class Reading:
    value: int


class Level(enum.Enum):
    HIGH = "high"


@pytest.mark.parametrize(
    ("returned", "structured", "text"),
    [
        ("plain text", None, "plain text"),
        ({"a": 1, "城市": "北京"}, {"a": 1, "城市": "北京"}, '{"a": 1, "城市": "北京"}'),
        ([1, "two"], [1, "two"], '[1, "two"]'),
        (3.5, 3.5, "3.5"),
        (7, 7, "7"),
        (True, True, "true"),
        (
            Weather(city="Paris", celsius=9.5),
            {"city": "Paris", "celsius": 9.5},
            '{"city": "Paris", "celsius": 9.5}',
        ),
        (Reading(3), {"value": 3}, '{"value": 3}'),
        (Level.HIGH, "high", '"high"'),
        ((1, 2), [1, 2], "[1, 2]"),
        ({"b", "a"}, ["a", "b"], '["a", "b"]'),
        (
            {"day": datetime.date(2024, 5, 1), "id": uuid.UUID(int=1)},
            {"day": "2024-05-01", "id": "00000000-0000-0000-0000-000000000001"},
            '{"day": "2024-05-01", "id": "00000000-0000-0000-0000-000000000001"}',
        ),
        ([decimal.Decimal("1.5"), pathlib.PurePosixPath("/tmp/x")], ["1.5", "/tmp/x"], None),
        (Permission.READ, "read", '"read"'),  # has a `.value` but is no enum: its str()
    ],
)
async def test_return_values_are_converted(returned: Any, structured: Any, text: str) -> None:
    @tool
    def produce() -> Any:
        """Return a fixed value."""
        return returned

    result = await produce.execute({}, ToolContext())
    assert result.structured == structured
    text = json.dumps(structured, ensure_ascii=False) if text is None else text
    assert result.text == text
    assert result.is_error is False
    assert result.content == [TextContent(text)]


async def test_none_results_and_content_parts_pass_through() -> None:
    image = ImageContent(data="aGk=", mime_type="image/png")
    explicit = ToolResult(content=[TextContent("x")], metadata={"k": 1})

    @tool
    def nothing() -> None:
        """Nothing."""

    @tool
    def picture() -> ImageContent:
        """An image."""
        return image

    @tool
    def custom() -> ToolResult:
        """A ready result."""
        return explicit

    @tool
    def caption_and_picture() -> list[TextContent | ImageContent]:
        """Several content parts."""
        return [TextContent("a cat"), image]

    @tool
    def empty_list() -> list[int]:
        """An empty list is a JSON value, not an empty set of parts."""
        return []

    assert (await nothing.execute({}, ToolContext())) == ToolResult()
    assert (await picture.execute({}, ToolContext())).content == [image]
    both = await caption_and_picture.execute({}, ToolContext())
    assert both.content == [TextContent("a cat"), image] and both.structured is None
    assert (await empty_list.execute({}, ToolContext())).structured == []
    assert (await custom.execute({}, ToolContext())) is explicit
    assert ToolResult.error("bad").is_error and ToolResult.error("bad").text == "bad"


@pytest.mark.parametrize("is_async", [False, True])
async def test_exceptions_become_execution_failed(is_async: bool) -> None:
    def boom(x: int) -> int:
        raise KeyError(f"missing {x}")

    async def aboom(x: int) -> int:
        raise KeyError(f"missing {x}")

    t = tool(name="boom")(aboom if is_async else boom)
    with pytest.raises(ExecutionFailed) as info:
        await t.execute({"x": 4}, ToolContext())
    assert info.value.recoverable is True
    assert info.value.tool == "boom"
    assert "KeyError: 'missing 4'" in info.value.message
    assert isinstance(info.value.__cause__, KeyError)


async def test_unusual_exceptions_never_escape() -> None:
    @tool
    def stop() -> int:
        """StopIteration cannot cross into an asyncio future; it must not hang the call."""
        raise StopIteration("done early")

    @tool
    def exits() -> int:
        """Helpers built on argparse call sys.exit."""
        sys.exit(2)

    @tool
    async def gives_up(ctx: ToolContext) -> int:
        """A tool that stops itself by raising CancelledError."""
        raise asyncio.CancelledError

    with pytest.raises(ExecutionFailed, match="StopIteration: done early"):
        await stop.execute({}, ToolContext())
    with pytest.raises(ExecutionFailed, match="SystemExit: 2"):
        await exits.execute({}, ToolContext())
    with pytest.raises(ToolCancelled) as info:
        await gives_up.execute({}, ToolContext())
    assert info.value.recoverable is False


async def test_tool_errors_raised_by_the_function_keep_their_type() -> None:
    @tool
    def refuse() -> None:
        """Raise a typed tool error."""
        raise ToolError("quota exhausted", recoverable=True)

    with pytest.raises(ToolError) as info:
        await refuse.execute({}, ToolContext())
    assert type(info.value) is ToolError
    assert info.value.recoverable is True


async def test_callable_objects_and_direct_call() -> None:
    class Greeter:
        __name__ = "greet"

        async def __call__(self, name: str) -> str:
            return f"hello {name}"

    greet = FunctionTool(Greeter())
    assert (await greet(name="Ada")).text == "hello Ada"
    double = FunctionTool(lambda n: n * 2, name="double")
    assert (await double(n=2)).structured == 4


async def test_report_progress_reaches_the_callback() -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    @tool
    async def work(ctx: ToolContext, steps: int) -> str:
        """Count to `steps`, reporting progress."""
        for i in range(1, steps + 1):
            await ctx.report_progress(i, steps, f"step {i}")
        return "done"

    ctx = ToolContext(progress_callback=on_progress)
    assert (await work.execute({"steps": 2}, ctx)).text == "done"
    assert seen == [(1, 2, "step 1"), (2, 2, "step 2")]
    await ToolContext().report_progress(1)  # nobody listening: a no-op
    sync_seen: list[float] = []
    await ToolContext(progress_callback=lambda p, t, m: sync_seen.append(p)).report_progress(0.5)
    assert sync_seen == [0.5]


def test_timeout_must_be_positive() -> None:
    def f() -> None:
        """Nothing."""

    for bad in (0, -1.0):
        with pytest.raises(ValueError, match=r"tool 'f': timeout must be a positive number"):
            tool(timeout=bad)(f)


async def test_an_async_function_behind_a_sync_decorator_is_awaited() -> None:
    def logged(func: Any) -> Any:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return func(*args, **kwargs)  # returns the coroutine without awaiting it

        return wrapper

    @tool
    @logged
    async def greet(name: str) -> str:
        """Greet someone."""
        await asyncio.sleep(0)
        return f"hello {name}"

    assert (await greet.execute({"name": "Ada"}, ToolContext())).text == "hello Ada"
