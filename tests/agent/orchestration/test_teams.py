"""Teams driven by ScriptedModel/FunctionModel: parallel members (a barrier proves it), the cap
of 10, saved teams per session and global, per-member results."""

from __future__ import annotations

import asyncio

from tests.agent.orchestration.test_subagents import call, results
from toolweave.agent import Agent
from toolweave.agent.orchestration import Children, TeamStore
from toolweave.governance import ApprovalRequest, Governance
from toolweave.llm import FunctionModel, Message, ModelRequest, ScriptedModel, Usage


async def test_six_members_run_at_the_same_time() -> None:
    """Each member's model call waits on a 6-party barrier: it can only pass if all six
    members are in flight at once (run one after another, the first would wait forever)."""
    barrier = asyncio.Barrier(6)
    seen: list[str] = []

    async def member(request: ModelRequest) -> Message:
        role = request.messages[0].text.rsplit("as ", 1)[1].split(":")[0]
        seen.append(role)
        async with asyncio.timeout(10):
            await barrier.wait()
        return Message.assistant(f"{role} finished")

    members = [{"name": f"m{i}", "role": f"Do part {i}."} for i in range(6)]
    parent = ScriptedModel(
        [call("team_run", "t1", task="split the work", members=members), Message.assistant("ok")]
    )
    agent = Agent(
        parent, [], orchestration=Children(teams=True, subagent_model=FunctionModel(member))
    )
    await agent.run("go")
    (text,) = results(parent.requests[1])
    assert text.startswith("Team results (6 members):")
    # Collected per member, in the order given.
    positions = [text.index(f"## m{i}\n[subagent m{i}: success") for i in range(6)]
    assert positions == sorted(positions)
    assert all(f"m{i} finished" in text for i in range(6))
    assert sorted(seen) == [f"m{i}" for i in range(6)]


async def test_more_than_ten_members_are_refused() -> None:
    members = [{"name": f"m{i}", "role": "r"} for i in range(11)]
    child = ScriptedModel([])
    parent = ScriptedModel(
        [call("team_run", "t1", task="t", members=members), Message.assistant("ok")]
    )
    agent = Agent(parent, [], orchestration=Children(teams=True, subagent_model=child))
    await agent.run("go")
    (text,) = results(parent.requests[1])
    assert "at most 10" in text and child.requests == []


async def test_saved_teams_are_scoped_and_run_by_name() -> None:
    store = TeamStore()
    child = FunctionModel(lambda request: Message.assistant("研究完成"))
    parent = ScriptedModel(
        [
            call(
                "team_save",
                "a",
                name="调研小组",
                members=[{"name": "研究员", "role": "查资料"}, {"name": "writer", "role": "写"}],
            ),
            call(
                "team_save", "g", name="公共", members=[{"name": "a", "role": "r"}], scope="global"
            ),
            call("team_list", "b"),
            call("team_run", "c", task="写一份报告", team="调研小组"),
            call("team_delete", "d", name="调研小组"),
            Message.assistant("done"),
        ],
        usage=Usage(1, 1),
    )
    asked: list[str] = []

    def approve(request: ApprovalRequest) -> bool:
        asked.append(request.tool_name)
        return True

    # Deleting is destructive, so governance asks first (safe by default).
    agent = Agent(
        parent,
        [],
        governance=Governance(approver=approve),
        orchestration=Children(teams=store, subagent_model=child),
    )
    result = await agent.run("go")
    assert asked == ["team_delete"]
    saved, _, listed, ran, deleted = (results(parent.requests[i])[-1] for i in range(1, 6))
    assert "saved team '调研小组' with 2 members (session)" in saved
    assert '"name": "调研小组"' in listed and '"scope": "' in listed
    assert "## 研究员" in ran and "## writer" in ran and "研究完成" in ran
    assert "deleted team '调研小组'" in deleted
    assert [t.name for t in await store.list(scope=result.session_id)] == ["公共"]
    # The session team never showed in other sessions; the global one does.
    assert [t.name for t in await store.list(scope="another-session")] == ["公共"]
