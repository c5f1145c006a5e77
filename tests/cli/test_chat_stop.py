"""`/stop` typed while a turn of `toolweave chat` runs (the real chat loop and agent): the turn
is cancelled, its running tool sees the cancellation, the session stays valid and the chat goes
on; lines typed during a turn answer its approval question or wait their turn."""

from __future__ import annotations

import asyncio
import io
import threading

from rich.console import Console

from tests.cli.test_chat_clock_cmd import _reader as _lines
from toolweave.agent import Agent, Session
from toolweave.cli.agent_cmd import chat_loop, terminal_approver
from toolweave.cli.chat_input import ChatInput
from toolweave.llm import FunctionModel, Message, ModelRequest, ToolCallPart
from toolweave.tools import tool


def _model(call: ToolCallPart) -> FunctionModel:
    """Calls `call` for the first prompt, then echoes each prompt."""

    def answer(request: ModelRequest) -> Message:
        last = request.messages[-1]
        if last.role == "user" and last.text == "第一个问题":
            return Message.assistant("", [call])
        return Message.assistant(f"echo: {last.text}")

    return FunctionModel(answer)


def test_stop_typed_during_a_turn_cancels_it_and_the_chat_goes_on() -> None:
    started, seen = threading.Event(), threading.Event()

    @tool
    async def wait_here() -> str:
        """Waits until it is cancelled."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            seen.set()  # the tool sees the cancellation
            raise
        return "unreachable"

    agent = Agent(_model(ToolCallPart("w1", "wait_here", {})), [wait_here])
    session = Session("chat-stop")
    out = io.StringIO()
    # The second line is read while the first turn runs: /stop, once the tool is running.
    lines = ["第一个问题", lambda: "/stop" if started.wait(30) else "", "第二个问题"]
    chat_loop(agent, session, Console(file=out, width=200), _lines(lines))
    text = out.getvalue()
    assert "(stopped: /stop)" in text and seen.is_set()
    assert "echo: 第二个问题" in text  # the chat went on in the same session
    roles = [m.role for m in session.messages]
    assert roles == ["user", "assistant", "tool", "user", "assistant"], roles
    assert session.messages[2].tool_results[0].call_id == "w1"  # the cut call has its result


def test_lines_typed_during_a_turn_answer_its_question_then_wait_their_turn() -> None:
    ran: list[str] = []

    @tool(destructive=True)
    def wipe(what: str) -> str:
        """Wipes `what`."""
        ran.append(what)
        return "wiped"

    out = io.StringIO()
    console = Console(file=out, width=200)
    typed = ChatInput(_lines(["第一个问题", "y", "下一个", "/exit"]), console=console)
    approver = terminal_approver(console, typed.ask)
    from toolweave.governance import Governance

    call = ToolCallPart("c1", "wipe", {"what": "缓存"})
    agent = Agent(_model(call), [wipe], governance=Governance(approver=approver))
    chat_loop(agent, Session(), console, typed)
    text = out.getvalue()
    assert ran == ["缓存"] and "allow?" in text
    assert "echo: 下一个" in text and "(stopped" not in text
