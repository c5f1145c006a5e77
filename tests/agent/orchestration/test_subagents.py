"""Subagents driven by ScriptedModel: results and metadata, no recursion, timeouts as results,
the timeout budget, cancellation, usage roll-up, tool sets, and scheduled background runs."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest

from toolweave.agent import Agent
from toolweave.agent.orchestration import Children
from toolweave.agent.orchestration.subagents import (
    SUBAGENT_RESERVE,
    resolve_subagent_timeout,
    subagent_registry,
)
from toolweave.llm import FunctionModel, Message, ModelRequest, ScriptedModel, ToolCallPart, Usage
from toolweave.scheduler import Scheduler
from toolweave.tools import ExecutionFailed, ToolRegistry, tool


def call(tool_name: str, cid: str, /, **args: object) -> Message:
    return Message.assistant("", [ToolCallPart(cid, tool_name, dict(args))])


def results(request: ModelRequest) -> list[str]:
    """The tool results the model saw, without the data-not-instructions wrapper."""
    texts = [p.text for m in request.messages if m.role == "tool" for p in m.tool_results]
    return [unwrap(t) for t in texts]


def unwrap(text: str) -> str:
    if text.startswith("<tool_output"):
        text = text.split("\n", 1)[1]
        text = text[: text.rindex("</tool_output>")].rstrip("\n")
    return text


@tool(read_only=True)
def lookup(city: str) -> str:
    """Look up a city.

    Args:
        city: The city.
    """
    return f"{city}: 12°C"


@tool
def write_note(text: str) -> str:
    """Write a note.

    Args:
        text: The note.
    """
    return "written"


async def test_only_the_final_answer_returns_with_metadata_truncated() -> None:
    child = ScriptedModel(
        [
            Message.assistant(
                "let me look (never shown to the parent)",
                [ToolCallPart("c1", "lookup", {"city": "北京"})],
            ),
            Message.assistant("答案" + "x" * 9000),
        ],
        usage=Usage(100, 20),
    )
    parent = ScriptedModel(
        [call("subagent_run", "p1", task="Find the weather in 北京"), Message.assistant("done")],
        usage=Usage(10, 5),
    )
    agent = Agent(
        parent,
        [lookup, write_note],
        orchestration=Children(subagents=True, subagent_model=child, subagent_max_result_chars=500),
    )
    result = await agent.run("delegate it")
    (text,) = results(parent.requests[1])
    first_line, _, body = text.partition("\n")
    assert "[subagent task: success," in first_line
    assert "2 model calls, 240 tokens]" in first_line
    assert "never shown" not in text and "答案" in body
    assert len(body) <= 500 and "truncated" in body and body.startswith("答案")
    # The subagent's tokens are part of the parent's usage.
    assert result.usage.total_tokens == 2 * 15 + 240
    # The child got the task, the subagent instructions, and only read-only tools.
    first = child.requests[0]
    assert first.messages[-1].text == "Find the weather in 北京"
    assert "You are a subagent" in first.messages[0].text
    assert [d.name for d in first.tools] == ["lookup", "read_result"]  # its own saved results


async def test_subagents_cannot_start_subagents_or_teams() -> None:
    child = ScriptedModel(
        [call("subagent_run", "c1", task="recurse"), Message.assistant("gave up")]
    )
    parent = ScriptedModel([call("subagent_run", "p1", task="go"), Message.assistant("ok")])
    agent = Agent(
        parent,
        [lookup],
        orchestration=Children(
            subagents=True, teams=True, subagent_model=child, subagent_tools="inherit"
        ),
    )
    await agent.run("go")
    assert [d.name for d in child.requests[0].tools] == ["lookup", "read_result"]
    (refused,) = results(child.requests[1])
    assert refused.startswith("Unknown tool 'subagent_run'")
    assert "gave up" in results(parent.requests[1])[0]


async def test_a_timed_out_subagent_is_a_tool_result_not_a_failure() -> None:
    hanging = asyncio.Event()

    async def never(request: ModelRequest) -> Message:
        await hanging.wait()
        raise AssertionError("unreachable")

    parent = ScriptedModel(
        [call("subagent_run", "p1", task="slow", timeout_sec=0.01), Message.assistant("fine")]
    )
    agent = Agent(
        parent, [], orchestration=Children(subagents=True, subagent_model=FunctionModel(never))
    )
    result = await agent.run("go")  # the 0.01 s request is clamped up to 1 s
    (text,) = results(parent.requests[1])
    assert "[subagent task: timeout" in text and "did not finish within 1s" in text
    assert result.output == "fine"


async def test_the_per_call_tool_timeout_does_not_cut_a_subagent_short() -> None:
    async def worker(request: ModelRequest) -> Message:
        await asyncio.sleep(0.3)  # the subagent's own work, longer than tool_timeout
        return Message.assistant("finished")

    parent = ScriptedModel([call("subagent_run", "p1", task="t"), Message.assistant("ok")])
    agent = Agent(
        parent,
        [],
        tool_timeout=0.05,
        orchestration=Children(subagents=True, subagent_model=FunctionModel(worker)),
    )
    await agent.run("go")
    (text,) = results(parent.requests[1])
    assert "[subagent task: success" in text and "finished" in text


async def test_little_time_left_refuses_to_start_and_the_parent_continues() -> None:
    child = ScriptedModel([Message.assistant("never asked")])
    parent = ScriptedModel([call("subagent_run", "p1", task="t"), Message.assistant("done")])
    agent = Agent(parent, [], orchestration=Children(subagents=True, subagent_model=child))
    result = await agent.run("go", timeout=SUBAGENT_RESERVE + 0.5)
    (text,) = results(parent.requests[1])
    assert "not enough time left" in text and result.output == "done"
    assert child.requests == []


def test_timeout_budget_clamps_before_arithmetic_and_keeps_30s_back() -> None:
    assert resolve_subagent_timeout(120, None, None, 0) == 120
    assert resolve_subagent_timeout(120, 1e308, None, 0) == 3600
    assert resolve_subagent_timeout(120, math.inf, None, 0) == 3600
    assert resolve_subagent_timeout(120, -5, None, 0) == 1
    assert resolve_subagent_timeout(120, None, 100.0, 0.0) == 70.0
    assert resolve_subagent_timeout(120, 10, 100.0, 0.0) == 10
    with pytest.raises(ExecutionFailed, match="not enough time"):
        resolve_subagent_timeout(120, None, 30.5, 0.0)
    with pytest.raises(ExecutionFailed, match="number of seconds"):
        resolve_subagent_timeout(120, math.nan, None, 0.0)


async def test_cancelling_the_parent_cancels_the_subagent() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    async def child(request: ModelRequest) -> Message:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        raise AssertionError("unreachable")

    parent = ScriptedModel([call("subagent_run", "p1", task="t")])
    agent = Agent(
        parent, [], orchestration=Children(subagents=True, subagent_model=FunctionModel(child))
    )
    run = asyncio.create_task(agent.run("go"))
    await started.wait()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    assert cancelled.is_set()


def test_tool_sets() -> None:
    registry = ToolRegistry()
    registry.register(lookup)
    registry.register(write_note)

    @tool(category="memory")
    def memory_add(text: str) -> str:
        """Remember.

        Args:
            text: What.
        """
        return "ok"

    registry.register(memory_add)
    assert subagent_registry(registry, "read_only").names() == ["lookup", "memory_add"]
    assert subagent_registry(registry, "inherit").names() == ["lookup", "memory_add", "write_note"]
    assert subagent_registry(registry, ["write_note"]).names() == ["write_note"]
    with pytest.raises(ValueError, match="subagent_tools='all'"):
        Agent(ScriptedModel([]), orchestration=Children(subagents=True, subagent_tools="all"))  # type: ignore[arg-type]


async def test_scheduled_runs_use_background_subagents_and_synthesise(tmp_path: Path) -> None:
    child = ScriptedModel([Message.assistant("北京 12°C, sunny")], usage=Usage(30, 10))
    main = ScriptedModel(
        [
            call("subagent_run", "s1", task="weather in 北京"),
            call("subagent_list", "s2"),
            Message.assistant("waiting for the subagent"),
            lambda request: Message.assistant(f"Report: {request.messages[-1].text[-40:]}"),
        ],
        usage=Usage(5, 5),
    )
    agent = Agent(main, [lookup], orchestration=Children(subagents=True, subagent_model=child))
    inbox: list[tuple[str, str]] = []
    now = [1_000_000.0]
    scheduler = Scheduler(
        agent, tmp_path / "s.db", deliver=lambda t, x: inbox.append((t, x)), clock=lambda: now[0]
    )
    try:
        task_id = scheduler.create("@every 1m", "morning weather", "chat-9", run_once=True)
        now[0] += 60
        (run,) = await scheduler.tick()
    finally:
        await scheduler.close()
    assert run.status == "success"
    started = results(main.requests[1])[0]
    assert "started background subagent sub-1" in started
    ((target, text),) = inbox
    assert target == "chat-9" and text.startswith("Report: ") and "12°C, sunny" in text
    synthesis_prompt = main.requests[3].messages[-1].text
    assert "Results of the background subagents" in synthesis_prompt
    assert "[subagent sub-1: success" in synthesis_prompt
    assert run.tokens == 4 * 10 + 40  # four main calls and the subagent's one
    assert scheduler.tasks is not None and task_id
