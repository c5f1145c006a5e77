"""The shell tool through the real gate pipeline: the agent loop with an approver, and
`toolweave serve` asking the person through MCP elicitation (the official SDK client answers)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

from toolweave import Agent
from toolweave.builtins import shell_tool
from toolweave.governance import ApprovalRequest, Governance
from toolweave.llm import Message, ScriptedModel, ToolCallPart

TOOLWEAVE = Path(sys.executable).with_name("toolweave")


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "victim.txt").write_text("unchanged")
    return tmp_path


def turn(*commands: str) -> Message:
    return Message(
        "assistant", [ToolCallPart(str(i), "bash", {"command": c}) for i, c in enumerate(commands)]
    )


def tool_texts(messages: list[Message]) -> dict[str, str]:
    found = {}
    for message in messages:
        for part in message.parts:
            call_id = getattr(part, "call_id", None)
            if call_id is not None:
                found[call_id] = str(part.content)
    return found


@pytest.mark.parametrize("answer", [True, False])
async def test_agent_asks_its_approver_only_for_unmatched_commands(
    answer: bool, workdir: Path
) -> None:
    asked: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> bool:
        asked.append(request)
        return answer

    model = ScriptedModel([turn("echo 你好", "rm victim.txt"), Message.assistant("done")])
    bash = shell_tool(workdir, allow=["echo *"])
    result = await Agent(model, [bash], governance=Governance(approver=approver)).run("tidy up")
    texts = tool_texts(result.messages)
    assert "exit code 0" in texts["0"] and "你好" in texts["0"]
    [request] = asked  # echo was vouched for by the allow list; only rm was asked about
    assert "no rule matched" in request.reason
    assert (workdir / "victim.txt").exists() is not answer
    if not answer:
        assert "exit code" not in texts["1"]


async def test_agent_without_an_approver_refuses_and_runs_nothing(workdir: Path) -> None:
    model = ScriptedModel([turn("rm victim.txt"), Message.assistant("done")])
    result = await Agent(model, [shell_tool(workdir, allow=["echo *"])]).run("go")
    assert "approver" in tool_texts(result.messages)["0"]
    assert (workdir / "victim.txt").read_text() == "unchanged"


class Elicitor:
    def __init__(self, action: str) -> None:
        self.action = action
        self.messages: list[str] = []

    async def __call__(self, context: Any, params: Any) -> types.ElicitResult:
        self.messages.append(params.message)
        return types.ElicitResult(action=self.action, content={})  # type: ignore[arg-type]


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


@pytest.mark.parametrize("action", ["accept", "decline"])
async def test_serve_asks_through_elicitation(action: str, workdir: Path, tmp_path: Path) -> None:
    (tmp_path / "toolweave.toml").write_text(
        f'[serve]\nproviders = ["builtins"]\ndata_dir = "{tmp_path / "data"}"\n'
        f'[builtins]\nroot = "{workdir}"\nshell = true\nshell_allow = ["echo *"]\n',
        encoding="utf-8",
    )
    params = StdioServerParameters(
        command=str(TOOLWEAVE), args=["serve", "--stdio", "-c", "toolweave.toml"], cwd=tmp_path
    )
    elicitor = Elicitor(action)
    async with Client(params, mode="legacy", elicitation_callback=elicitor) as client:
        echoed = await client.call_tool("bash", {"command": "echo 好"})
        removed = await client.call_tool("bash", {"command": "rm victim.txt"})
    assert not echoed.is_error and "好" in text(echoed)
    assert len(elicitor.messages) == 1 and "rm victim.txt" in elicitor.messages[0]
    if action == "accept":
        assert not removed.is_error and not (workdir / "victim.txt").exists()
    else:
        assert removed.is_error and (workdir / "victim.txt").read_text() == "unchanged"
