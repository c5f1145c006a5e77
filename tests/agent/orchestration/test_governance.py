"""Governance inside subagents and team members: approvals reach the parent's approver, the
parent's rules and plan mode hold (a child narrows, never widens), and hook payloads name the
agent and its parent chain."""

from __future__ import annotations

from typing import Any

from tests.agent.orchestration.test_subagents import call, results, write_note
from toolweave.agent import Agent, Session
from toolweave.agent.orchestration import Children
from toolweave.governance import ApprovalRequest, Governance, Hooks, Rules
from toolweave.llm import Message, ScriptedModel


def delegating(child: ScriptedModel, **governance: Any) -> tuple[Agent, ScriptedModel]:
    """A parent that delegates one task to a subagent (on `child`) with all its tools."""
    parent = ScriptedModel([call("subagent_run", "p1", task="t"), Message.assistant("ok")])
    agent = Agent(
        parent,
        [write_note],
        governance=Governance(**governance),
        orchestration=Children(subagents=True, subagent_model=child, subagent_tools="inherit"),
    )
    return agent, parent


async def test_a_subagents_approval_reaches_the_parents_approver_with_its_identity() -> None:
    asked: list[ApprovalRequest] = []
    seen: list[dict[str, Any]] = []
    hooks = Hooks()

    @hooks.on("PreToolUse")
    async def record(payload: dict[str, Any]) -> None:
        seen.append(payload)

    def approve(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    child = ScriptedModel([call("write_note", "c1", text="笔记"), Message.assistant("noted")])
    agent, _ = delegating(
        child,
        rules=Rules(ask=["write_note"], allow=["subagent_run"]),
        hooks=hooks,
        approver=approve,
    )
    await agent.run("go", Session("chat-1", requester="alice"))
    (request,) = asked
    assert request.tool_name == "write_note" and request.requester == "alice"
    assert request.agent_id is not None and request.agent_id.startswith("subagent-task-")
    assert "written" in results(child.requests[1])[0]  # approved, so it ran
    by_tool = {p["tool_name"]: p for p in seen}
    assert by_tool["subagent_run"]["agent_type"] == "main"
    inner = by_tool["write_note"]
    assert inner["agent_id"] == request.agent_id and inner["agent_type"] == "subagent"
    assert inner["parent_agent_ids"] == ["main"]


async def test_the_parents_rules_hold_inside_a_subagent_and_plan_mode_blocks_delegation() -> None:
    child = ScriptedModel(
        [
            call("write_note", "c1", text="x"),
            call("write_note", "c2", text="y"),
            Message.assistant(""),
        ]
    )
    agent, _ = delegating(child, rules=Rules(deny=["write_note"], allow=["subagent_run"]))
    await agent.run("go")
    assert "blocked (rules)" in results(child.requests[1])[0]

    planner = ScriptedModel([call("write_note", "c1", text="x"), Message.assistant("planned")])
    agent, parent = delegating(planner, rules=Rules(allow=["subagent_run", "write_note"]))
    await agent.run("go", Session(permission_mode="plan"))
    # Plan mode blocks delegation itself (subagents can write), as the seed's gate does.
    assert "plan mode is on" in results(parent.requests[1])[0]
    assert planner.requests == []


async def test_scheduled_runs_are_named_in_hook_payloads(tmp_path: Any) -> None:
    from toolweave.scheduler import Scheduler

    seen: list[dict[str, Any]] = []
    hooks = Hooks()

    @hooks.on("PreToolUse")
    async def record(payload: dict[str, Any]) -> None:
        seen.append(payload)

    model = ScriptedModel([call("write_note", "s1", text="晨报"), Message.assistant("sent")])
    agent = Agent(
        model, [write_note], governance=Governance(hooks=hooks, rules=Rules(allow=["write_note"]))
    )
    now = [1_000_000.0]
    scheduler = Scheduler(agent, tmp_path / "s.db", clock=lambda: now[0])
    try:
        scheduler.create("@every 1m", "write the morning note", "chat-1")
        now[0] += 60
        (run,) = await scheduler.tick()
    finally:
        await scheduler.close()
    assert run.status == "success" and run.output == "sent"
    (payload,) = seen
    assert payload["agent_type"] == "scheduled" and payload["agent_id"].startswith("scheduled-")
