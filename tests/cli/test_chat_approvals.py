"""`toolweave chat` asks approvals inline: y (this call), n, a (always, this session)."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from toolweave.agent import Agent, Session
from toolweave.cli.agent_cmd import chat_loop, terminal_approver
from toolweave.governance import Governance, Hooks
from toolweave.llm import Message, ScriptedModel, ToolCallPart
from toolweave.tools import Permission, tool

ran: list[str] = []


@tool(permissions=[Permission.SHELL], primary_arg="command")
def bash(command: str) -> str:
    """Pretend shell."""
    ran.append(command)
    return f"ran {command}"


def _turn(*commands: str) -> Message:
    return Message(
        "assistant",
        [ToolCallPart(f"c{i}-{c}", "bash", {"command": c}) for i, c in enumerate(commands)],
    )


def test_inline_answers_yes_no_always() -> None:
    ran.clear()
    model = ScriptedModel(
        [
            _turn("make"),
            Message.assistant("built"),
            _turn("rm -rf build"),
            Message.assistant("kept"),
            _turn("ls"),
            _turn("pwd"),
            Message.assistant("listed"),
        ]
    )
    out = io.StringIO()
    console = Console(file=out, width=200, highlight=False)
    chat_lines = iter(["build", "clean", "list"])
    answers = iter(["y", "maybe", "n", "a"])
    prompts: list[str] = []

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        return next(answers)

    def read_line() -> str:
        try:
            return next(chat_lines)
        except StopIteration:
            raise EOFError from None

    agent = Agent(model, [bash], governance=Governance(approver=terminal_approver(console, ask)))
    chat_loop(agent, Session(), console, read_line)
    text = out.getvalue()
    assert ran == ["make", "ls", "pwd"]  # "pwd" was covered by "always"
    assert len(prompts) == 4  # make, rm (asked twice: "maybe" is not an answer), ls
    assert "answer y (yes, this call), n (no) or a (always)" in text
    assert "bash blocked (approval)" in text and "the approver said no" in text
    assert 'bash({"command": "make"}) needs approval' in text


def test_end_of_input_answers_no() -> None:
    ran.clear()
    model = ScriptedModel([_turn("make"), Message.assistant("ok")])
    out = io.StringIO()
    console = Console(file=out, width=200, highlight=False)

    def ask(prompt: str) -> str:
        raise EOFError

    lines = iter(["go"])

    def read_line() -> str:
        try:
            return next(lines)
        except StopIteration:
            raise EOFError from None

    hooks = Hooks()
    ended: list[str] = []

    @hooks.on("SessionEnd")
    async def end(payload: dict[str, Any]) -> None:
        ended.append(payload["reason"])

    agent = Agent(
        model, [bash], governance=Governance(approver=terminal_approver(console, ask), hooks=hooks)
    )
    chat_loop(agent, Session(), console, read_line)
    assert ran == [] and "the approver said no" in out.getvalue()
    assert ended == ["prompt_input_exit"]
