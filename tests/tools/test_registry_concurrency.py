"""`ToolRegistry` under concurrency: per-call timeouts, `invoke_all` (concurrent, ordered,
errors kept per call) and cancellation reaching each call's context without ending the run."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from toolweave.tools import (
    ExecutionFailed,
    ToolCancelled,
    ToolContext,
    ToolNotFound,
    ToolRegistry,
    ToolTimeout,
    tool,
)


@tool(tags=["math"], category="calc")
def add(a: int, b: int = 0) -> int:
    """Add two integers."""
    return a + b


@tool(category="io")
def fail(reason: str) -> None:
    """Always fails."""
    raise RuntimeError(reason)


def make_registry(*tools: Any) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_all(tools or (add, fail))
    return registry


async def test_per_call_timeout_cancels_the_context() -> None:
    seen: list[ToolContext] = []

    @tool
    async def hang(ctx: ToolContext) -> str:
        """Wait forever."""
        seen.append(ctx)
        await asyncio.Event().wait()
        return "never"

    registry = make_registry(hang, add)
    run_ctx = ToolContext(session_id="run", state={"k": 1}, call_id="c1")
    invocation = await registry.invoke("hang", {}, run_ctx, timeout=0.01)
    assert isinstance(invocation.error, ToolTimeout)
    assert invocation.error.timeout == 0.01 and invocation.error.recoverable
    assert "timed out after 0.01s" in invocation.error.message
    assert seen[0].cancelled and seen[0].state is run_ctx.state and seen[0].call_id == "c1"
    # Only that call was stopped: the caller's context (the run) goes on.
    assert not run_ctx.cancelled
    assert (await registry.invoke("add", {"a": 1}, run_ctx, timeout=5)).ok


async def test_tool_timeout_option_applies_and_the_tighter_limit_wins() -> None:
    @tool(timeout=0.01)
    async def slow() -> str:
        """Slower than its own limit."""
        await asyncio.Event().wait()
        return "never"

    @tool(timeout=60)
    async def patient() -> str:
        """Has a generous limit of its own; the call's is tighter."""
        await asyncio.Event().wait()
        return "never"

    registry = make_registry(slow, patient)
    invocation = await registry.invoke("slow", {}, timeout=30)
    assert isinstance(invocation.error, ToolTimeout) and invocation.error.timeout == 0.01
    invocation = await registry.invoke("patient", {}, timeout=0.01)
    assert isinstance(invocation.error, ToolTimeout) and invocation.error.timeout == 0.01


async def test_sync_tool_sees_cancellation_after_timeout() -> None:
    noticed = threading.Event()

    @tool
    def poll(ctx: ToolContext) -> str:
        """Cooperative sync work: poll the context between steps."""
        while not ctx.cancellation.is_set():
            noticed.wait(0.001)
        noticed.set()
        return "stopped"

    invocation = await make_registry(poll).invoke("poll", {}, timeout=0.01)
    assert isinstance(invocation.error, ToolTimeout)
    assert await asyncio.to_thread(noticed.wait, 10)


async def test_a_tools_own_timeout_error_is_an_execution_failure() -> None:
    @tool
    async def upstream() -> str:
        """An upstream service timed out."""
        raise TimeoutError("upstream took too long")

    invocation = await make_registry(upstream).invoke("upstream", {}, timeout=30)
    assert isinstance(invocation.error, ExecutionFailed)
    assert "upstream took too long" in invocation.error.message


async def test_already_cancelled_context_does_not_run_the_tool() -> None:
    ctx = ToolContext()
    ctx.cancel()
    invocation = await make_registry().invoke("add", {"a": 1}, ctx)
    assert isinstance(invocation.error, ToolCancelled)
    assert invocation.error.recoverable is False


async def test_invoke_all_is_concurrent_and_keeps_input_order() -> None:
    finished: list[str] = []
    first_may_finish = asyncio.Event()

    @tool
    async def first() -> str:
        """Finishes only after `second` ran: proves the calls overlap."""
        await first_may_finish.wait()
        finished.append("first")
        return "1"

    @tool
    async def second() -> str:
        """Lets `first` finish."""
        first_may_finish.set()
        finished.append("second")
        return "2"

    registry = make_registry(first, second, add)
    calls: list[Any] = [("first", {}), ("second", "{}", "id-2"), ("add", {"a": 1, "b": 1})]
    results = await registry.invoke_all(calls, ToolContext(session_id="s"))
    assert [r.name for r in results] == ["first", "second", "add"]
    assert [r.result.text for r in results] == ["1", "2", "2"]
    assert results[1].call_id == "id-2"
    assert finished == ["second", "first"]


async def test_invoke_all_per_call_timeout_and_errors_stay_per_call() -> None:
    @tool
    async def hang() -> str:
        """Never returns."""
        await asyncio.Event().wait()
        return "never"

    registry = make_registry(hang, add, fail)
    results = await registry.invoke_all(
        [("hang", {}), ("add", {"a": 3}), ("fail", {"reason": "r"}), ("ghost", {})],
        timeout=0.5,  # `hang` waits this long; `add` must not time out on a busy machine
    )
    assert isinstance(results[0].error, ToolTimeout)
    assert results[1].ok and results[1].result.structured == 3
    assert isinstance(results[2].error, ExecutionFailed)
    assert isinstance(results[3].error, ToolNotFound)
    assert await registry.invoke_all([]) == []


async def test_cancelling_invoke_all_cancels_every_calls_context() -> None:
    contexts: list[ToolContext] = []
    started = asyncio.Event()
    sync_noticed = threading.Event()

    @tool
    async def wait_async(ctx: ToolContext) -> str:
        """Wait until cancelled."""
        contexts.append(ctx)
        if len(contexts) == 2:
            started.set()
        await asyncio.Event().wait()
        return "never"

    @tool
    def wait_sync(ctx: ToolContext) -> str:
        """Poll until cancelled, in a worker thread."""
        while not ctx.cancelled:
            sync_noticed.wait(0.001)
        sync_noticed.set()
        return "stopped"

    registry = make_registry(wait_async, wait_sync)
    parent = ToolContext()
    task = asyncio.create_task(
        registry.invoke_all(
            [("wait_async", {}), ("wait_async", {}), ("wait_sync", {})], parent, timeout=None
        )
    )
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(contexts) == 2 and all(c.cancelled for c in contexts)
    assert await asyncio.to_thread(sync_noticed.wait, 10)
    assert not parent.cancelled  # the run goes on: only the batch's calls were stopped
    assert (await registry.invoke_all([("wait_sync", {})], parent, timeout=0.01))[0].error


async def test_cancelling_a_single_call_batch_cancels_its_context() -> None:
    entered = asyncio.Event()
    seen: list[ToolContext] = []

    @tool
    async def wait_forever(ctx: ToolContext) -> str:
        """Wait until cancelled."""
        seen.append(ctx)
        entered.set()
        await asyncio.Event().wait()
        return "never"

    task = asyncio.create_task(make_registry(wait_forever).invoke_all([("wait_forever", {})]))
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert seen[0].cancelled


async def test_cancelling_the_parent_context_reaches_running_calls() -> None:
    observed: list[str] = []
    entered: list[str] = []
    both_running = asyncio.Event()

    @tool
    async def cooperative(ctx: ToolContext) -> str:
        """Stop politely when the run is cancelled."""
        entered.append(ctx.call_id or "")
        if len(entered) == 2:
            both_running.set()
        await ctx.wait_cancelled()
        observed.append(ctx.call_id or "")
        return "stopped early"

    registry = make_registry(cooperative)
    parent = ToolContext()
    task = asyncio.create_task(
        registry.invoke_all([("cooperative", {}, "a"), ("cooperative", {}, "b")], parent)
    )
    await both_running.wait()
    parent.cancel()
    results = await task
    assert [r.result.text for r in results] == ["stopped early", "stopped early"]
    assert sorted(observed) == ["a", "b"]


async def test_invoke_all_children_share_state_but_not_ids() -> None:
    @tool
    def record(ctx: ToolContext, key: str) -> str:
        """Write into the shared run state."""
        ctx.state[key] = ctx.call_id
        return key

    parent = ToolContext(session_id="s", state={})
    await make_registry(record).invoke_all(
        [("record", {"key": "x"}, "c1"), ("record", {"key": "y"}, "c2")], parent
    )
    assert parent.state == {"x": "c1", "y": "c2"}
    assert not parent.cancelled
