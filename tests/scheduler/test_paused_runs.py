"""Scheduled runs that wait for an approval: stored with their firing, answered later by any
scheduler on the same store (`Scheduler.paused`, `Scheduler.answer`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.scheduler.test_scheduler import Clock, Inbox
from tests.support import store_args
from toolweave.agent import Agent, RunStateError
from toolweave.errors import ConfigError
from toolweave.governance import Governance, Rules, defer_approval
from toolweave.llm import FunctionModel, Message, ModelRequest, ToolCallPart
from toolweave.scheduler import Scheduler
from toolweave.tools import tool

__all__ = ["store_args"]


def deploying_agent(log: Path) -> Agent:
    """Deploys when scheduled; `deploy` needs an approval, which the admin gives later."""

    @tool
    def deploy(target: str) -> str:
        """Deploy the service."""
        with log.open("a") as out:
            out.write(f"{target}\n")
        return f"deployed to {target}"

    def answer(request: ModelRequest) -> Message:
        last = request.messages[-1]
        if last.role == "user":
            return Message.assistant("", [ToolCallPart("d1", "deploy", {"target": "prod"})])
        text = last.tool_results[0].text
        return Message.assistant("deployed" if "deployed to prod" in text else f"failed: {text}")

    governance = Governance(
        rules=Rules(default="allow", ask=["deploy"]), admin_approver=defer_approval
    )
    return Agent(FunctionModel(answer), [deploy], governance=governance, name="nightly")


def runs(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


async def test_a_paused_firing_is_stored_and_answered_by_another_scheduler(
    store_args: dict[str, Any], tmp_path: Path
) -> None:
    clock, inbox, log = Clock(), Inbox(), tmp_path / "deploy.log"
    first = Scheduler(deploying_agent(log), deliver=inbox, clock=clock, **store_args)
    second = Scheduler(deploying_agent(log), deliver=inbox, clock=clock, **store_args)
    try:
        task_id = first.create("@every 5s", "deploy tonight", "ops", run_once=True)
        clock.now += 5
        (fired,) = await first.tick()
        assert fired.status == "paused" and fired.output.startswith("Waiting for approval: deploy")
        assert runs(log) == 0 and [t.id for t in first.list()] == [task_id]  # kept meanwhile
        (waiting,) = second.paused()
        assert (waiting.task_id, waiting.fire_time, waiting.target) == (
            task_id,
            fired.fire_time,
            "ops",
        )
        (pending,) = waiting.state.pending
        assert (pending.call_id, pending.tool_name, pending.args) == (
            "d1",
            "deploy",
            {"target": "prod"},
        )
        done = await second.answer(task_id, fired.fire_time, {"d1": True})
        assert (done.status, done.output) == ("success", "deployed")
        assert runs(log) == 1 and inbox.items[-1] == ("ops", "deployed")
        assert [r.status for r in first.log(task_id)] == ["success"]
        assert first.paused() == [] and first.list() == []  # a run-once task ends with its run
        with pytest.raises(ConfigError, match="no paused firing"):
            await first.answer(task_id, fired.fire_time, {"d1": True})
    finally:
        await first.close()
        await second.close()


async def test_a_refused_firing_reports_the_refusal(tmp_path: Path) -> None:
    clock, log = Clock(), tmp_path / "deploy.log"
    db = tmp_path / "s.db"
    scheduler = Scheduler(deploying_agent(log), db, clock=clock, state_secret="k")
    try:
        task_id = scheduler.create("@every 5s", "deploy tonight", "ops")
        clock.now += 5
        assert [r.status for r in await scheduler.tick()] == ["paused"]
        unsealed = Scheduler(deploying_agent(log), db, clock=clock)  # no secret: refused
        try:
            with pytest.raises(RunStateError, match="another secret"):
                unsealed.paused()
        finally:
            await unsealed.close()
        (waiting,) = await scheduler.apaused("ops")
        done = await scheduler.answer(task_id, waiting.fire_time, {"d1": False})
        assert done.status == "success" and "the approver said no" in done.output
        assert runs(log) == 0 and await scheduler.apaused() == []
    finally:
        await scheduler.close()
