"""A run's lifecycle: cancellation, closing streams and clients, sessions shared between runs,
the output channel to the user, and the sync wrapper."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any, ClassVar

import pytest

from tests.agent.fake_openai import FakeOpenAI, Reply
from tests.agent.script import call, calls, collect, tool_messages
from toolweave.agent import (
    Agent,
    Output,
    Session,
    SessionBusy,
    ToolExecutionStarted,
    UserOutputSent,
)
from toolweave.governance import Governance
from toolweave.llm import (
    Finished,
    Message,
    ModelRequest,
    ModelResponse,
    OpenAIChatModel,
    ScriptedModel,
    StreamEvent,
    TextDelta,
)
from toolweave.tools import (
    PermissionDenied,
    PermissionPolicy,
    TextContent,
    ToolContext,
    ToolRegistry,
    ToolResult,
    tool,
)
from toolweave.tools.demo import get_weather


async def test_cancellation_cancels_tools_and_keeps_the_history_consistent() -> None:
    started = asyncio.Event()
    saw_cancel = asyncio.Event()

    @tool
    async def quick() -> str:
        """Finishes at once."""
        return "quick result"

    @tool
    async def forever(ctx: ToolContext) -> str:
        """Runs until cancelled."""
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            if ctx.cancelled:
                saw_cancel.set()
        return "never"

    session = Session()
    model = ScriptedModel([calls(call("quick", "q"), call("forever", "f"))])
    task = asyncio.create_task(Agent(model, [quick, forever]).run("go", session))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert saw_cancel.is_set()
    quick_part, forever_part = tool_messages(session.messages)
    assert "quick result" in quick_part.text and not quick_part.is_error
    assert forever_part.is_error and "cancelled" in forever_part.text
    # The session can be resumed: the next request pairs every call with a result.
    resumed = ScriptedModel([Message.assistant("resumed")])
    assert (await Agent(resumed, [quick, forever]).run("again", session)).output == "resumed"


async def test_closing_the_stream_early_cancels_the_run() -> None:
    saw_cancel = asyncio.Event()

    @tool
    async def forever(ctx: ToolContext) -> str:
        """Runs until cancelled."""
        await ctx.wait_cancelled()
        saw_cancel.set()
        return "stopped"

    session = Session()
    stream = Agent(ScriptedModel([calls(call("forever", "f"))]), [forever]).run_stream(
        "go", session
    )
    async for event in stream:
        if isinstance(event, ToolExecutionStarted):
            break
    await stream.aclose()
    assert saw_cancel.is_set()
    assert tool_messages(session.messages)[0].call_id == "f"


async def test_tools_can_send_text_images_and_files_to_the_user(tmp_path: Any) -> None:
    report = tmp_path / "report.csv"
    report.write_text("a,b\n1,2\n")

    @tool
    async def work(ctx: ToolContext) -> str:
        """Reports as it goes."""
        await ctx.send_text("halfway there")
        await ctx.send_image(b"\x89PNG", "image/png")
        await ctx.send_file(report)
        await ctx.send_file(data=b"{}", filename="out.json")
        return "done"

    script = [calls(call("work", "w1")), Message.assistant("ok")]
    events = await collect(Agent(ScriptedModel(script), [work]), "go")
    sent = [e for e in events if isinstance(e, UserOutputSent)]
    assert [e.output.kind for e in sent] == ["text", "image", "file", "file"]
    assert all(e.tool == "work" and e.output.call_id == "w1" for e in sent)
    assert sent[0].output.text == "halfway there" and sent[1].output.data == b"\x89PNG"
    assert sent[2].output.path == str(report) and sent[2].output.mime_type == "text/csv"
    assert sent[3].output.filename == "out.json" and sent[3].output.mime_type == "application/json"

    background = Agent(ScriptedModel(script), [work], output_type=Output(user_output="media_only"))
    result = await background.run("go")
    assert [o.kind for o in result.user_outputs] == ["image", "file", "file"]


async def test_sessions_carry_history_and_refuse_concurrent_runs() -> None:
    session = Session()
    first = ScriptedModel([Message.assistant("hello")])
    await Agent(first).run("hi", session)
    second = ScriptedModel([Message.assistant("again")])
    await Agent(second).run("and now?", session)
    assert [m.text for m in second.requests[0].messages] == ["hi", "hello", "and now?"]

    gate, entered = asyncio.Event(), asyncio.Event()

    async def slow_step(request: Any) -> Message:
        entered.set()
        await gate.wait()
        return Message.assistant("late")

    busy = asyncio.create_task(Agent(ScriptedModel([slow_step])).run("one", session))
    await entered.wait()
    with pytest.raises(SessionBusy):
        await Agent(ScriptedModel([Message.assistant("x")])).run("two", session)
    gate.set()
    assert (await busy).output == "late"


def test_run_sync_and_settings_validation() -> None:
    result = Agent(ScriptedModel([Message.assistant("sync ok")])).run_sync("go")
    assert result.output == "sync ok"
    with pytest.raises(ValueError, match="max_turns"):
        Agent(ScriptedModel([]), max_turns=0)
    with pytest.raises(ValueError, match="on_max_turns"):
        Agent(ScriptedModel([]), output_type=Output(on_max_turns="explode"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="model"):
        Agent(object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="gates"):
        Agent(ScriptedModel([]), governance=Governance(gates=[lambda request: None]))  # type: ignore[list-item]


async def test_run_sync_refuses_a_running_loop() -> None:
    with pytest.raises(RuntimeError, match=r"await agent\.run"):
        Agent(ScriptedModel([])).run_sync("go")


async def test_a_history_ending_in_unanswered_calls_is_repaired_before_the_next_run() -> None:
    session = Session()
    session.messages += [Message.user("hi"), calls(call("get_weather", "old", city="Beijing"))]
    model = ScriptedModel([Message.assistant("hello again")])
    await Agent(model, [get_weather]).run("still there?", session)
    roles = [m.role for m in model.requests[0].messages]
    assert roles == ["user", "assistant", "tool", "user"]
    (repaired,) = tool_messages(model.requests[0].messages)
    assert repaired.call_id == "old" and repaired.is_error


class HangingStream:
    """A model whose stream sends one delta, then waits forever; records when it is closed."""

    model_name = "hanging"

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.closed = False

    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise AssertionError("streamed runs call stream()")

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        try:
            yield TextDelta("thinking about it")
            self.started.set()
            await asyncio.Event().wait()
            yield Finished(ModelResponse(Message.assistant("never")))
        finally:
            await asyncio.sleep(0)  # like an HTTP response's aclose(), cleanup awaits
            self.closed = True


async def test_cancelling_a_streamed_model_call_closes_the_model_stream() -> None:
    model = HangingStream()
    session = Session()

    async def consume() -> None:
        async for _ in Agent(model).run_stream("go", session):
            pass

    task = asyncio.create_task(consume())
    await model.started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert model.closed  # its connection is released before the run's task finishes
    assert [m.role for m in session.messages] == ["user"]


async def test_a_call_failing_outside_the_registry_cancels_its_siblings() -> None:
    saw_cancel = asyncio.Event()
    started = asyncio.Event()

    class Malformed:
        """A hand-written tool whose result holds something that is not content."""

        name = "malformed"
        description = "Returns a broken result."
        parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
        permissions: frozenset[Any] = frozenset()
        annotations = get_weather.annotations
        primary_arg = None

        async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
            await started.wait()
            return ToolResult(content=[TextContent("ok"), "not content"])  # type: ignore[list-item]

    @tool
    async def patient(ctx: ToolContext) -> str:
        """Waits until cancelled."""
        started.set()
        await ctx.wait_cancelled()
        saw_cancel.set()
        return "stopped"

    session = Session()
    model = ScriptedModel([calls(call("patient", "p"), call("malformed", "m"))])
    with pytest.raises(AssertionError):
        await Agent(model, [patient, Malformed()]).run("go", session)
    assert saw_cancel.is_set()
    assert [p.call_id for p in tool_messages(session.messages)] == ["p", "m"]


async def test_a_run_refused_as_busy_leaves_the_policy_of_the_running_one_alone() -> None:
    ran: list[str] = []

    @tool(permissions=["shell"])
    def shell() -> str:
        """Runs a command."""
        ran.append("shell")
        return "ran"

    registry = ToolRegistry()
    registry.register(shell)
    entered, release = asyncio.Event(), asyncio.Event()

    async def slow_then_shell(request: ModelRequest) -> Message:
        entered.set()
        await release.wait()
        return calls(call("shell", "s"))

    session = Session()
    strict = Agent(
        ScriptedModel([slow_then_shell]),
        registry,
        governance=Governance(policy=PermissionPolicy(denied=["shell"])),
    )
    running = asyncio.create_task(strict.run("go", session))
    await entered.wait()
    with pytest.raises(SessionBusy):
        await Agent(ScriptedModel([Message.assistant("x")]), registry).run("two", session)
    release.set()
    with pytest.raises(PermissionDenied):
        await running
    assert ran == []


def test_run_sync_closes_the_model_client_it_opened_and_can_run_again() -> None:
    class Closing(OpenAIChatModel):
        closes = 0

        async def aclose(self) -> None:
            type(self).closes += 1
            await super().aclose()

    replies = [Reply("first"), Reply("second")]
    with FakeOpenAI(replies) as server:
        agent = Agent(Closing("fake", base_url=server.base_url, api_key="sk-test"))
        assert agent.run_sync("one").output == "first"
        assert Closing.closes == 1
        assert agent.run_sync("two").output == "second"  # a fresh client on the new loop
    assert Closing.closes == 2


async def test_the_stream_is_an_async_generator_that_can_be_closed() -> None:
    stream = Agent(ScriptedModel([Message.assistant("hi there")])).run_stream("go")
    async with contextlib.aclosing(stream):
        first = await anext(stream)
    assert type(first).__name__ == "RunStarted"


async def test_the_output_channel_checks_its_arguments_and_is_silent_unattended() -> None:
    received: list[Any] = []

    async def sink(item: Any) -> None:  # sinks may be async
        received.append(item)

    ctx = ToolContext(call_id="c1", output_sink=sink)
    await ctx.send_text("hello")
    with pytest.raises(ValueError, match="exactly one of `path` or `data`"):
        await ctx.send_file()
    with pytest.raises(ValueError, match="exactly one of `path` or `data`"):
        await ctx.send_file("a.txt", data=b"x")
    with pytest.raises(ValueError, match="needs a `filename`"):
        await ctx.send_file(data=b"x")
    await ctx.send_file(data=b"\x00", filename="blob.weird-ext")
    assert [(o.kind, o.call_id) for o in received] == [("text", "c1"), ("file", "c1")]
    assert received[1].mime_type == "application/octet-stream"
    await ToolContext().send_image(b"png")  # nobody listening: nothing happens, nothing raised
