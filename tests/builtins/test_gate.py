"""The built-ins through governance's gate: the shell's own lists join the one rule set, an
unmatched command reaches the one approver, denials and missing approvers refuse, and config
changes always need the admin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolweave.builtins import AgentConfig, ConfigKey, config_tools, shell_tool
from toolweave.governance.approvals import ApprovalRequest
from toolweave.governance.pipeline import CallBlocked, GateContext, Governance
from toolweave.governance.rules import Rules
from toolweave.tools import ApprovalRequired, Tool, ToolContext, ToolResult


class Approver:
    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Any:
        self.requests.append(request)
        return self.answer


async def gated(gov: Governance, tool: Tool, args: dict[str, Any]) -> ToolResult:
    """One call as the pipeline runs it: clear, execute, and on ApprovalRequired ask and re-run
    the call approved."""
    gate = GateContext(session_id="s1")
    cleared = await gov.clear(tool.name, "c1", args, tool, gate)
    ctx = ToolContext(session_id="s1", call_id="c1", tool_call_cleared=True)
    try:
        return await tool.execute(cleared.args, ctx)
    except ApprovalRequired as request:
        await gov.approve_request(request, tool.name, "c1", cleared.args, tool, gate)
        ctx.tool_call_approved = True
        return await tool.execute(cleared.args, ctx)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "victim.txt").write_text("unchanged")
    return tmp_path


async def test_allowed_commands_run_without_asking(workdir: Path) -> None:
    approver = Approver(True)
    result = await gated(
        Governance(approver=approver),
        shell_tool(workdir, allow=["echo *"]),
        {"command": "echo 好"},
    )
    assert "exit code 0" in result.text and "好" in result.text
    assert approver.requests == []  # the tool's allow list vouched for it: nobody is asked


async def test_an_unmatched_command_asks_once_and_runs_when_approved(workdir: Path) -> None:
    approver = Approver(True)
    tool = shell_tool(workdir, allow=["echo *"])
    result = await gated(Governance(approver=approver), tool, {"command": "echo x; rm victim.txt"})
    assert "exit code 0" in result.text and not (workdir / "victim.txt").exists()
    [request] = approver.requests
    assert request.tool_name == "bash" and "no rule matched ['rm victim.txt']" in request.reason


@pytest.mark.parametrize("answer", [False, None])
async def test_denied_or_unanswerable_approval_refuses(answer: Any, workdir: Path) -> None:
    gov = Governance(approver=Approver(answer)) if answer is not None else Governance()
    with pytest.raises(CallBlocked) as blocked:
        await gated(gov, shell_tool(workdir, allow=["echo *"]), {"command": "rm victim.txt"})
    assert blocked.value.stage == "approval" and blocked.value.recoverable
    assert (workdir / "victim.txt").read_text() == "unchanged"


async def test_rules_still_apply_to_the_shell(workdir: Path) -> None:
    approver = Approver(True)
    gov = Governance(rules=Rules(deny=["bash(echo *)"]), approver=approver)
    with pytest.raises(CallBlocked) as blocked:
        await gated(gov, shell_tool(workdir, allow=["echo *"]), {"command": "ls; echo hi"})
    assert blocked.value.stage == "rules" and approver.requests == []
    with pytest.raises(CallBlocked, match="denied by 'Bash"):  # the tool's deny list
        await gated(Governance(approver=approver), shell_tool(workdir), {"command": "rm -rf ."})
    assert (workdir / "victim.txt").read_text() == "unchanged"


async def test_config_changes_always_need_the_admin(tmp_path: Path) -> None:
    config = AgentConfig(tmp_path / "settings.json", [ConfigKey("model", "Model name")])
    tools = {t.name: t for t in config_tools(config)}
    user, admin = Approver(True), Approver(True)
    allow_all = Rules(default="allow", allow=["config_set", "config_file_set"])
    with pytest.raises(CallBlocked):  # no admin approver: refused, whatever the rules say
        await gated(Governance(rules=allow_all, approver=user), tools["config_set"],
                    {"key": "model", "value": "x"})  # fmt: skip
    assert not (tmp_path / "settings.json").exists()
    gov = Governance(rules=allow_all, approver=user, admin_approver=admin)
    await gated(gov, tools["config_set"], {"key": "model", "value": "qwen"})
    await gated(gov, tools["config_file_set"], {"file": "hooks.json", "content": "{}"})
    assert config.get("model") == "qwen" and len(admin.requests) == 2
    read = await gated(Governance(), tools["config_get"], {"key": "model"})
    assert read.text == 'model = "qwen"'
