"""Pausing a run for an approval, saving it as JSON and finishing it elsewhere (`RunState`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent.paused_run import SECRET, build, count
from tests.agent.script import call, calls
from toolweave.accounting.query_log import QueryLog
from toolweave.agent import (
    Agent,
    RunCompleted,
    RunPaused,
    RunState,
    RunStateError,
    Session,
    SQLiteSessionStore,
    ToolExecutionStarted,
)
from toolweave.agent.orchestration import RunLimits
from toolweave.governance import Governance, defer_approval
from toolweave.llm import FunctionModel, Message, ModelRequest, ToolCallPart
from toolweave.tools import ApprovalRequired, ToolContext, tool

ROOT = Path(__file__).parents[2]


def step(command: str, folder: Path, *rest: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "tests.agent.paused_run", command, str(folder), *rest],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


async def paused(agent: Agent) -> RunState:
    with pytest.raises(RunPaused) as info:
        await agent.run("ship it")
    state: RunState = info.value.state
    return state


def test_a_run_saved_by_one_process_is_approved_and_finished_by_another(tmp_path: Path) -> None:
    shown = json.loads(step("pause", tmp_path))
    assert shown == [
        'deploy({"target": "prod"}) needs approval: needs approval by \'deploy\' from Rules(...)'
    ]
    assert (count(tmp_path, "read_note"), count(tmp_path, "deploy")) == (1, 0)
    done = json.loads(step("resume", tmp_path, "yes"))
    assert "deployed to prod" in done["output"] and "deploy on Friday" in done["output"]
    assert (done["turns"], done["tokens"]) == (2, 30)  # both turns' usage, across processes
    assert (count(tmp_path, "read_note"), count(tmp_path, "deploy")) == (1, 1)


def test_a_refusal_given_in_another_process_reaches_the_model(tmp_path: Path) -> None:
    step("pause", tmp_path)
    done = json.loads(step("resume", tmp_path, "no"))
    assert "the approver said no" in done["output"] and "deployed" not in done["output"]
    assert (count(tmp_path, "read_note"), count(tmp_path, "deploy")) == (1, 0)


async def test_resume_streams_the_rest_with_results_in_call_order(tmp_path: Path) -> None:
    agent = build(tmp_path)
    state = RunState.from_json((await paused(agent)).to_json())
    assert [(p.call_id, p.tool_name, p.args) for p in state.pending] == [
        ("c2", "deploy", {"target": "prod"})
    ]
    assert [p.call_id for p in state.completed] == ["c1"] and state.turns == 1
    events = [e async for e in agent.resume_stream(state, {"c2": True})]
    started = [e.call.name for e in events if isinstance(e, ToolExecutionStarted)]
    assert started == ["deploy"] and isinstance(events[-1], RunCompleted)
    result = events[-1].result
    tool_ids = [p.call_id for m in result.messages if m.role == "tool" for p in m.tool_results]
    assert tool_ids == ["c1", "c2"] and result.turns == 2
    assert (count(tmp_path, "read_note"), count(tmp_path, "deploy")) == (1, 1)


async def test_a_state_from_another_agent_configuration_is_refused(tmp_path: Path) -> None:
    state = await paused(build(tmp_path))
    other = build(tmp_path, instructions="Ship fast.")
    with pytest.raises(RunStateError, match="instructions=") as info:
        await other.resume(state, {"c2": True})
    assert "resume it with the agent that paused it" in str(info.value)
    assert count(tmp_path, "deploy") == 0


async def test_pending_arguments_edited_in_the_saved_text_are_detected(tmp_path: Path) -> None:
    text = (await paused(build(tmp_path))).to_json(secret=SECRET)
    edited = text.replace('"target": "prod"', '"target": "staging"')
    assert edited != text
    with pytest.raises(RunStateError, match="changed after it was saved"):
        RunState.from_json(edited, secret=SECRET)
    # Edited and re-sealed by someone without the secret: still refused where it is used.
    state = RunState.from_json(text, secret=SECRET)
    state.pending[0].args["target"] = "staging"
    with pytest.raises(RunStateError, match="another secret"):
        RunState.from_json(state.to_json(), secret=SECRET)


async def test_a_sealed_text_of_another_layout_is_a_run_state_error(tmp_path: Path) -> None:
    from toolweave.agent.run_state import _seal

    body = json.loads((await paused(build(tmp_path))).to_json())  # sealed with the public key
    del body["seal"], body["prompt"]
    body["seal"] = _seal(body, None)  # anyone can re-seal without a secret: not a KeyError
    with pytest.raises(RunStateError, match=r"not a RunState layout \(KeyError"):
        RunState.from_json(json.dumps(body))


async def test_a_call_edited_after_the_question_is_asked_again(tmp_path: Path) -> None:
    agent = build(tmp_path)
    state = await paused(agent)
    read = ToolCallPart("c1", "read_note", {"name": "plan"})
    state.messages[-1] = calls(read, call("deploy", "c2", target="staging"))
    with pytest.raises(RunPaused) as again:
        await agent.resume(state, {"c2": True})
    assert [p.args for p in again.value.state.pending] == [{"target": "staging"}]
    assert count(tmp_path, "deploy") == 0  # the yes was for "prod"


async def test_an_unanswered_call_pauses_again_and_unknown_ids_are_named(tmp_path: Path) -> None:
    agent = build(tmp_path)
    state = await paused(agent)
    with pytest.raises(RunStateError, match=r"answers call 'c9', which is not pending"):
        await agent.resume(state, {"c9": True})
    with pytest.raises(RunPaused) as again:
        await agent.resume(state)
    assert [p.call_id for p in again.value.state.pending] == ["c2"]
    result = await agent.resume(again.value.state, {"c2": "always"})
    assert "deployed to prod" in result.output and count(tmp_path, "deploy") == 1


def test_resume_sync_finishes_a_run(tmp_path: Path) -> None:
    agent = build(tmp_path)
    with pytest.raises(RunPaused) as info:
        agent.run_sync("ship it")
    result = agent.resume_sync(info.value.state, {"c2": True})
    assert "deployed to prod" in result.output and result.turns == 2


async def test_a_tool_asking_for_approval_pauses_and_reruns_approved() -> None:
    seen: list[bool] = []

    @tool
    async def wipe(disk: str, ctx: ToolContext) -> str:
        """Erase a disk."""
        seen.append(ctx.tool_call_approved)
        if not ctx.tool_call_approved:
            raise ApprovalRequired(f"erasing {disk} cannot be undone")
        return f"{disk} erased"

    def model(request: ModelRequest) -> Message:
        if request.messages[-1].role == "user":
            return calls(call("wipe", "w1", disk="sdb"))
        return Message.assistant(request.messages[-1].tool_results[0].text)

    agent = Agent(FunctionModel(model), [wipe], governance=Governance(approver=defer_approval))
    with pytest.raises(RunPaused) as info:
        await agent.run("wipe sdb")
    pending = info.value.state.pending
    assert [p.reason for p in pending] == ["erasing sdb cannot be undone"]
    result = await agent.resume(info.value.state, {"w1": True})
    assert "sdb erased" in result.output and seen == [False, False, True]


async def test_a_stored_session_resumes_where_it_paused(tmp_path: Path) -> None:
    agent, db = build(tmp_path), tmp_path / "sessions.db"
    with pytest.raises(RunPaused) as info:
        await agent.run("ship it", Session("ops", store=SQLiteSessionStore(db)))
    state = RunState.from_json(info.value.state.to_json())
    stored = Session("ops", store=SQLiteSessionStore(db))  # as another process opens it
    result = await agent.resume(state, {"c2": True}, session=stored)
    assert "deployed to prod" in result.output
    again = Session("ops", store=SQLiteSessionStore(db))
    roles = [m.role for m in await again.load()]
    assert roles == ["user", "assistant", "tool", "tool", "assistant"]
    with pytest.raises(RunStateError, match="has moved on since the run paused"):
        await agent.resume(state, {"c2": True}, session=again)
    with pytest.raises(RunStateError, match="pass that session or none"):
        await agent.resume(state, {"c2": True}, session=Session("other"))
    assert count(tmp_path, "deploy") == 1


async def test_the_query_log_records_a_pause_and_then_the_finish(tmp_path: Path) -> None:
    log = QueryLog(tmp_path / "queries.db")
    agent = build(tmp_path, orchestration=RunLimits(query_log=log))
    try:
        state = await paused(agent)
        assert [r.status for r in await log.search(kind="run")] == ["paused"]
        await agent.resume(state, {"c2": False})
        assert [r.status for r in await log.search(kind="run")] == ["success", "paused"]
    finally:
        await log.close()
