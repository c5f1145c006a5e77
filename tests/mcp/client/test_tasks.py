"""Tasks as a client, against server-everything (npm), whose `simulate-research-query` runs only
as a task (`execution.taskSupport: "required"`, 2025-11-25 tasks): a plain `call_tool` becomes
a task transparently, with each status change as a progress event; a task can also be started,
watched at the server's poll interval and cancelled by hand."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.mcp.client.mcp_peers import EVERYTHING, NODE, requires_node
from toolweave.mcp import MCPClient, MCPError
from toolweave.mcp.client._tasks import MCPTask

pytestmark = requires_node
RESEARCH = "simulate-research-query"


@pytest.fixture
async def everything() -> AsyncIterator[MCPClient]:
    async with MCPClient.stdio(NODE, [EVERYTHING], name="everything", timeout=60) as client:
        yield client


async def test_a_task_only_tool_runs_as_a_task_transparently(everything: MCPClient) -> None:
    steps: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        steps.append((progress, message))

    result = await everything.call_tool(RESEARCH, {"topic": "梅雨"}, on_progress=on_progress)
    assert not result.is_error and "Research Report: 梅雨" in result.text
    assert steps, "each status change is a progress event"
    assert [p for p, _ in steps] == [float(n) for n in range(1, len(steps) + 1)]
    assert all(m for _, m in steps)  # the task's status message (the stages it went through)


async def test_start_watch_and_cancel_a_task(everything: MCPClient) -> None:
    task = await everything.start_tool_task(RESEARCH, {"topic": "tides"}, ttl_ms=60_000)
    assert isinstance(task, MCPTask) and task.status == "working"
    assert task.poll_interval == 1.0  # the server's pollInterval of 1000 ms
    assert (await everything.get_task(task.task_id)).task_id == task.task_id
    cancelled = await everything.cancel_task(task.task_id)
    assert cancelled.status == "cancelled" and cancelled.done
    with pytest.raises(MCPError, match="cancelled"):
        await everything.task_result(cancelled)


async def test_watching_follows_the_task_to_its_result(everything: MCPClient) -> None:
    task = await everything.start_tool_task(RESEARCH, {"topic": "moss"})
    assert isinstance(task, MCPTask)
    seen = [state async for state in everything.watch_task(task)]
    assert seen[-1].status == "completed"
    assert all(state.task_id == task.task_id for state in seen)
    result = await everything.task_result(seen[-1])
    assert "Research Report: moss" in result.text
