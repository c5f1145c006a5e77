"""An agent whose run pauses for an approval, driven across processes by test_run_state.py.

`python -m tests.agent.paused_run pause DIR` runs until the `deploy` call needs a person, saves
the sealed state to DIR/state.json and exits; `... resume DIR yes|no` loads it in a fresh
process, answers, finishes the run and prints the outcome as JSON. Each tool appends a line to
DIR/<tool>.log per execution, so a test counts what really ran.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from toolweave.agent import Agent, RunPaused, RunState
from toolweave.governance import Governance, Rules, defer_approval
from toolweave.llm import FunctionModel, Message, ModelRequest, ModelResponse, ToolCallPart, Usage
from toolweave.tools import tool

SECRET = "paused-run-test-secret"
TURN_USAGE = Usage(input_tokens=10, output_tokens=5)


def count(folder: Path, name: str) -> int:
    log = folder / f"{name}.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def answer(request: ModelRequest) -> ModelResponse:
    """Calls both tools for the prompt; then reports every tool result it read."""
    if request.messages[-1].role == "user":
        parts = [
            ToolCallPart("c1", "read_note", {"name": "plan"}),
            ToolCallPart("c2", "deploy", {"target": "prod"}),
        ]
        return ModelResponse(Message.assistant("", parts), usage=TURN_USAGE)
    results = [p for m in request.messages if m.role == "tool" for p in m.tool_results]
    text = " | ".join(f"{p.name}={p.text}" for p in results)
    return ModelResponse(Message.assistant(text), usage=TURN_USAGE)


def build(folder: Path, *, instructions: str = "Ship carefully.", **options: Any) -> Agent:
    @tool
    def read_note(name: str) -> str:
        """Read a note."""
        with (folder / "read_note.log").open("a") as log:
            log.write(f"{name}\n")
        return f"note {name}: deploy on Friday"

    @tool
    def deploy(target: str) -> str:
        """Deploy the service."""
        with (folder / "deploy.log").open("a") as log:
            log.write(f"{target}\n")
        return f"deployed to {target}"

    governance = Governance(rules=Rules(default="allow", ask=["deploy"]), approver=defer_approval)
    return Agent(
        FunctionModel(answer),
        [read_note, deploy],
        instructions=instructions,
        governance=governance,
        name="shipper",
        **options,
    )


def main(command: str, folder: Path, *rest: str) -> None:
    agent = build(folder)
    state_file = folder / "state.json"
    if command == "pause":
        try:
            agent.run_sync("ship it")
        except RunPaused as paused:
            state_file.write_text(paused.state.to_json(secret=SECRET))
            print(json.dumps([p.prompt() for p in paused.state.pending]))
            return
        raise SystemExit("the run did not pause")
    state = RunState.from_json(state_file.read_text(), secret=SECRET)
    yes = rest[0] == "yes"
    result = agent.resume_sync(state, {p.call_id: yes for p in state.pending})
    usage = result.usage
    print(
        json.dumps({"output": result.output, "turns": result.turns, "tokens": usage.total_tokens})
    )


if __name__ == "__main__":
    main(sys.argv[1], Path(sys.argv[2]), *sys.argv[3:])
