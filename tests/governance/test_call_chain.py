"""The one call chain (`toolweave.tools.calls`): its order, the shared governance scenario table
through an agent (the same table runs through `toolweave serve` in tests/host), the timeout
rule, and that nothing but the chain's terminal runs a governed call."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.governance.call_scenarios import (
    RAN,
    RULES,
    SCENARIOS,
    SLOW_ANSWER,
    TOOL_TIMEOUT,
    TOOLS,
    Scenario,
    hook_script,
)
from toolweave import Agent
from toolweave.agent import Session
from toolweave.errors import ConfigError
from toolweave.governance import ApprovalRequest, Governance, Hooks, Rules
from toolweave.llm import Message, ScriptedModel, ToolCallPart
from toolweave.tools import (
    PermissionPolicy,
    ToolCall,
    ToolContext,
    ToolInvocation,
    ToolRegistry,
    chain,
    tool,
)
from toolweave.tools.calls import CallHandler

SRC = Path(__file__).resolve().parents[2] / "src" / "toolweave"


class Approver:
    """Answers `answer` after `delay` seconds (a person taking their time), counting requests."""

    def __init__(self, answer: bool, delay: float = 0.0) -> None:
        self.answer, self.delay = answer, delay
        self.asked: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> bool:
        self.asked.append(request)
        if self.delay:
            await asyncio.sleep(self.delay)  # the person's answer, not a wait for work
        return self.answer


async def run_row(row: Scenario, hooks: Path) -> tuple[bool, str, int]:
    """The row through an agent: (is_error, the tool result's text, approvals asked)."""
    approver = Approver(row.answer, row.delay) if row.answer is not None else None
    governance = Governance(
        rules=Rules.from_mapping(RULES, source="the table", root=str(hooks.parent)),
        hooks=Hooks.from_file(hooks, cwd=str(hooks.parent)),
        approver=approver,
        mode=row.mode,  # type: ignore[arg-type]
    )
    call = ToolCallPart("c1", row.tool, row.args)
    model = ScriptedModel([Message("assistant", [call]), Message.assistant("done")])
    agent = Agent(model, TOOLS, governance=governance, tool_timeout=TOOL_TIMEOUT)
    session = Session()
    if row.circuit_open:
        breaker = agent.orchestration.limits.circuit
        assert breaker is not None
        for _ in range(breaker.failures):
            breaker.record(session.id, row.tool, True)
    result = await agent.run("go", session=session)
    (part,) = [p for m in result.messages for p in m.tool_results]
    return part.is_error, part.text, len(approver.asked) if approver is not None else 0


@pytest.mark.parametrize("row", SCENARIOS, ids=[row.name for row in SCENARIOS])
async def test_the_scenario_table_through_an_agent(row: Scenario, tmp_path: Path) -> None:
    RAN.clear()
    is_error, text, asked = await run_row(row, hook_script(tmp_path))
    assert ([row.ran] if row.ran is not None else []) == RAN
    assert is_error is row.error and row.text in text
    assert asked == row.asked


async def test_an_approval_after_the_tool_timeout_runs_the_tool(tmp_path: Path) -> None:
    """The issue's case: the tool's timeout is shorter than the person's answer, who says yes:
    the tool runs, because its timeout covers running it, never the wait for a person."""
    RAN.clear()
    approver = Approver(True, SLOW_ANSWER)
    call = ToolCallPart("c1", "act", {"command": "make 构建"})
    model = ScriptedModel([Message("assistant", [call]), Message.assistant("done")])
    agent = Agent(model, TOOLS, governance=Governance(approver=approver), tool_timeout=TOOL_TIMEOUT)
    result = await agent.run("build it")
    assert RAN == ["make 构建"] and len(approver.asked) == 1
    (inv,) = result.invocations
    assert inv.ok and inv.result.text == "ran make 构建"


async def test_the_tool_timeout_still_bounds_running_the_tool() -> None:
    call = ToolCallPart("c1", "stall", {})
    model = ScriptedModel([Message("assistant", [call]), Message.assistant("done")])
    agent = Agent(model, TOOLS, tool_timeout=TOOL_TIMEOUT)
    result = await agent.run("go")
    (inv,) = result.invocations
    assert inv.error is not None and f"timed out after {TOOL_TIMEOUT:g}s" in inv.error.message


async def test_chain_nests_the_first_middleware_outermost_around_the_terminal() -> None:
    seen: list[str] = []

    class Mark:
        def __init__(self, name: str) -> None:
            self.name = name

        async def __call__(self, call: ToolCall, next: CallHandler) -> ToolInvocation:
            seen.append(f"{self.name}>")
            call.args = {**dict(call.args or {}), "text": f"{self.name}:{call.args}"}  # type: ignore[arg-type]
            inv = await next(call)
            seen.append(f"<{self.name}")
            call.notes.append(self.name)
            return inv

    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    registry = ToolRegistry()
    registry.register(echo)
    call = ToolCall("echo", "c1", {"text": "x"}, echo, ToolContext(call_id="c1"))
    inv = await chain([Mark("outer"), Mark("inner")], registry.run_call)(call)
    assert seen == ["outer>", "inner>", "<inner", "<outer"]
    assert inv.ok and inv.result.text.startswith("inner:") and call.notes == ["inner", "outer"]
    assert call.invocation is inv and registry.stats()["echo"].calls == 1


async def test_an_exception_raised_by_a_tool_becomes_an_outcome_only_at_the_terminal() -> None:
    @tool
    def broken() -> str:
        """Always fails."""
        raise RuntimeError("disk on fire")

    class Observe:
        outcome: Any = None

        async def __call__(self, call: ToolCall, next: CallHandler) -> ToolInvocation:
            self.outcome = await next(call)  # never raises for the tool's failure
            return self.outcome

    registry = ToolRegistry()
    registry.register(broken)
    observe = Observe()
    call = ToolCall("broken", None, {}, broken, ToolContext())
    inv = await chain([observe], registry.run_call)(call)
    assert observe.outcome is inv and inv.error is not None and "disk on fire" in inv.error.message


# What may call `invoke` / `execute` by name outside the terminal, and why it is no governed call.
_ALLOWED_CALLS = {
    ("agent/agent.py", "commands.invoke"),  # a slash command's expansion, no tool call
    ("agent/agent.py", "run.execute"),  # a Run (the loop), no tool call
    ("agent/agent.py", "self._new_run(prompt, session, deps, None, timeout).execute"),
    ("agent/agent.py", "self._new_run(prompt, scope.session, deps, None, None, scope).execute"),
    # `tool_call` in serve's tool-search mode enters a published tool, whose `execute` is the
    # host's chain (accounting, governance, `ToolRegistry.run_call`): the same entry as MCP's.
    ("host/tool_search.py", "tool.execute"),
    # A durable agent's `StepTool.execute` is what the terminal calls; it runs the wrapped tool
    # inside a DBOS step (after the whole chain), so it is the same execution, checkpointed.
    ("agent/durable.py", "tool.execute"),
}
_GOVERNED_PACKAGES = ("agent", "governance", "host", "accounting", "scheduler", "cli")


def _calls_by_name(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        func = node.func if isinstance(node, ast.Call) else None
        if isinstance(func, ast.Attribute) and func.attr in {"invoke", "invoke_all", "execute"}:
            found.append(ast.unparse(func))
    return found


def test_nothing_but_the_chain_runs_a_governed_call() -> None:
    """The agent, slash commands, the host and everything above `tools/` reach a tool only
    through the chain (`ToolRegistry.run_call`); a new `registry.invoke(...)` or
    `tool.execute(...)` there is a second executor and fails this test."""
    offenders, used = [], set()
    for package in _GOVERNED_PACKAGES:
        for path in sorted((SRC / package).rglob("*.py")):
            relative = path.relative_to(SRC).as_posix()
            for name in _calls_by_name(path):
                if (relative, name) in _ALLOWED_CALLS:
                    used.add((relative, name))
                elif not name.startswith(("conn.", "cursor.", "db.", "connection.")):
                    offenders.append(f"{relative}: {name}(...)")
    assert offenders == []
    assert used == _ALLOWED_CALLS  # no stale exemption


def test_the_permission_policy_has_one_holder() -> None:
    """A registry's policy and the governance's may not disagree: the run would silently use
    one of them. The same policy object in both places is one policy."""
    model = ScriptedModel([Message.assistant("ok")])
    registry = ToolRegistry(PermissionPolicy(allowed=["read"]))
    with pytest.raises(ConfigError, match=r"two permission policies; keep one"):
        Agent(model, registry, governance=Governance(policy=PermissionPolicy.allow_all()))
    shared = PermissionPolicy.allow_all()
    agent = Agent(model, ToolRegistry(shared), governance=Governance(policy=shared))
    assert agent.governance.policy is shared
    assert Agent(model, registry).registry.policy is registry.policy  # the registry's alone
