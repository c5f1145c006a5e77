"""A durable run of four tool calls across a SIGKILL, driven by test_durable.py.

`python -m tests.agent.durable_run first DIR DATABASE ID` starts the run (workflow id ID); after
the second tool call it prints `two-done` and blocks, for the test to SIGKILL it. `... recover DIR
DATABASE ID` launches DBOS on the same database, which recovers the run, and prints its outcome
as JSON. `pause DIR DATABASE ID` runs tests.agent.paused_run's agent durably until it pauses for
an approval; `answer DIR DATABASE ID yes|no` reads that paused run back from DBOS in a new
process and finishes it with the answer, durably. Each tool call appends a line to
DIR/<tool or work-n>.log, each model call one to DIR/model.log, so the test counts what really
ran in either life.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from tests.agent.paused_run import build
from toolweave.agent import Agent, RunPaused, RunState
from toolweave.agent.durable import DurableAgent, launch_dbos
from toolweave.llm import FunctionModel, Message, ModelRequest, ToolCallPart
from toolweave.tools import tool

CALLS = 4


def count(folder: Path, name: str) -> int:
    log = folder / f"{name}.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def durable_agent(folder: Path, first_life: bool) -> DurableAgent[str]:
    @tool
    def work(n: int) -> str:
        """Do step n of the job."""
        with (folder / f"work-{n}.log").open("a") as log:
            log.write("ran\n")
        return f"step {n} done"

    def answer(request: ModelRequest) -> Message:
        with (folder / "model.log").open("a") as log:
            log.write("called\n")
        done = [p for m in request.messages if m.role == "tool" for p in m.tool_results]
        if len(done) == 2 and first_life:
            print("two-done", flush=True)
            sys.stdin.readline()  # blocks until the test kills this process
        if len(done) < CALLS:
            n = len(done) + 1
            return Message.assistant("", [ToolCallPart(f"w{n}", "work", {"n": n})])
        return Message.assistant(f"all {CALLS} steps done")

    return DurableAgent(Agent(FunctionModel(answer), [work], name="job"))


async def approval(command: str, folder: Path, database: str, workflow_id: str, yes: bool) -> None:
    durable = DurableAgent(build(folder))
    launch_dbos(database)
    try:
        if command == "pause":
            await durable.run("ship it", workflow_id=workflow_id)
        else:
            await durable.result(workflow_id)  # the paused run, as DBOS recorded it
    except RunPaused as paused:
        state: RunState = paused.state
        if command == "pause":
            print(json.dumps([p.prompt() for p in state.pending]))
            return
        answers = {p.call_id: yes for p in state.pending}
        result = await durable.resume(state, answers, workflow_id=f"{workflow_id}-answer")
        print(json.dumps({"output": result.output, "turns": result.turns}))
        return
    raise SystemExit("the run did not pause")


async def main(command: str, folder: Path, database: str, workflow_id: str, *rest: str) -> None:
    if command in ("pause", "answer"):
        await approval(command, folder, database, workflow_id, rest[:1] == ("yes",))
        return
    durable = durable_agent(folder, command == "first")
    launch_dbos(database)
    if command == "first":
        await durable.run("do the job", workflow_id=workflow_id)
        raise SystemExit("the first life was meant to be killed")
    result = await durable.result(workflow_id)
    print(json.dumps({"output": result.output, "turns": result.turns}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4], *sys.argv[5:]))
