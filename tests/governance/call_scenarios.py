"""The governance scenario table both call paths must agree on: an agent's turn and a tool
served by `toolweave serve` (driven by the official MCP SDK client).

One configuration serves every row: `RULES` (git allowed, rm denied, other shell commands
asked about by the safe default), a PreToolUse hook (`hook_script`) that blocks commands
mentioning "forbidden" and rewrites "git rewrite ..." to "git rewritten", and `TOOL_TIMEOUT`, which
the slow approver outlasts. Each row names the call, the approver's answer and delay, the
permission mode and whether the circuit is open, and what must come of it: the command the
tool ran with (None: it never ran), whether the result is an error, and a fragment of its text.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolweave.tools import ApprovalRequired, Permission, ToolContext, tool

TOOL_TIMEOUT = 0.5
"""Seconds running a tool may take; the slow approver answers after twice as long."""
SLOW_ANSWER = 2 * TOOL_TIMEOUT
RULES: dict[str, Any] = {"allow": ["act(git *)"], "deny": ["act(rm *)"]}

RAN: list[str] = []
"""What the tools ran, in order (a test clears it before each row)."""


@tool(permissions=[Permission.SHELL], primary_arg="command")
def act(command: str) -> str:
    """Run a shell command (records it)."""
    RAN.append(command)
    return f"ran {command}"


@tool
def deploy(target: str, ctx: ToolContext) -> str:
    """Deploy; asks for approval itself before doing anything."""
    if not ctx.tool_call_approved:
        raise ApprovalRequired(f"deploying to {target} is irreversible")
    RAN.append(f"deploy {target}")
    return f"deployed {target}"


@tool(read_only=True)
async def stall(ctx: ToolContext) -> str:
    """Never finishes on its own: only its timeout stops it."""
    await ctx.wait_cancelled()
    return "stopped"


TOOLS = [act, deploy, stall]

_HOOK = """
import json, sys
command = json.load(sys.stdin)["tool_input"].get("command", "")
if "forbidden" in command:
    print("no forbidden commands", file=sys.stderr)
    sys.exit(2)
if command.startswith("git rewrite "):
    output = {"hookEventName": "PreToolUse", "updatedInput": {"command": "git rewritten"}}
    print(json.dumps({"hookSpecificOutput": output}))
"""


def hook_script(directory: Path) -> Path:
    """A hooks.json in `directory` whose PreToolUse hook on `act` runs the script above."""
    script = directory / "pre_tool_use.py"
    script.write_text(_HOOK)
    hooks = directory / "hooks.json"
    command = f"{json.dumps(sys.executable)} {json.dumps(str(script))}"
    entry = {"matcher": "act", "hooks": [{"type": "command", "command": command}]}
    hooks.write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    return hooks


@dataclass(frozen=True)
class Scenario:
    name: str
    tool: str
    args: dict[str, Any]
    ran: str | None
    error: bool
    text: str
    answer: bool | None = None
    """The approver's answer; None when nobody may be asked."""
    delay: float = 0.0
    asked: int = 0
    """How many times the person is asked."""
    mode: str | None = None
    circuit_open: bool = False


SCENARIOS = [
    Scenario("allow", "act", {"command": "git status"}, "git status", False, "ran git status"),
    Scenario("deny", "act", {"command": "rm -rf build"}, None, True, "act(rm *)"),
    Scenario("ask-yes", "act", {"command": "make"}, "make", False, "ran make", True, asked=1),
    Scenario("ask-no", "act", {"command": "make"}, None, True, "said no", False, asked=1),
    Scenario(
        "ask-slow", "act", {"command": "make"}, "make", False, "ran make", True, SLOW_ANSWER, 1
    ),
    Scenario("hook-block", "act", {"command": "forbidden"}, None, True, "no forbidden commands"),
    Scenario(
        "hook-rewrite", "act", {"command": "git rewrite x"}, "git rewritten", False, "ran git"
    ),
    Scenario(
        "approval-required",
        "deploy",
        {"target": "生产"},
        "deploy 生产",
        False,
        "deployed 生产",
        True,
        asked=1,
    ),
    Scenario("plan-mode", "act", {"command": "git status"}, None, True, "plan mode", mode="plan"),
    Scenario(
        "circuit-open", "act", {"command": "git status"}, None, True, "paused", circuit_open=True
    ),
]
