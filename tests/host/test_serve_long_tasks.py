"""A served tool that outlives the client's request timeout and `[serve].tool_timeout`
completes as an MCP task (SEP-2663, the 2026-07-28 wire), bounded by `[serve].task_timeout`
instead: for the official SDK client (2026 mode, the tasks extension its users write with the
SDK's `ClientExtension`: examples/long_task.py's) and for toolweave's own `MCPClient`, with
progress; cancelling stops the tool; another client (another `[serve.tokens]` principal) can
neither see nor cancel it.

No test waits for a timeout by the clock: the tool waits on an event the test sets only once a
call of the same tool by a client without tasks was cut by `tool_timeout` (which started later,
so the task would have been cut before it)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from examples.long_task import SDKTasks, TaskState
from tests.host.test_governance import serve_config
from toolweave.host import parse_config
from toolweave.host.providers import base as host_providers
from toolweave.mcp.client import MCPClient
from toolweave.mcp.shared.errors import JSONRPCError
from toolweave.tools import ToolContext, tool

TOKENS = {"alice": "alice-" + "a" * 32, "bob": "bob-" + "b" * 32}
TOOL_TIMEOUT = 1.0  # the plain call's bound and the clients' request timeout
GATE: dict[str, Any] = {}  # fresh per test: events bind to one event loop


@tool(read_only=True)
async def long_report(topic: str, ctx: ToolContext) -> str:
    """Write a long report on a topic (waits for the test's go-ahead)."""
    try:
        await GATE["release"].wait()
        await ctx.report_progress(2, 3, f"drafting {topic}")
        await GATE["finish"].wait()  # set once the client saw the progress
    except asyncio.CancelledError:
        GATE["cancelled"][topic].set()
        raise
    return f"report on {topic}"


class LongProvider:
    name = "long"

    def __init__(self, config: Any) -> None:
        self.config = config

    async def tools(self) -> list[Any]:
        return [long_report]

    async def close(self) -> None:
        return None


@pytest.fixture(autouse=True)
def _provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(host_providers.PROVIDERS, "long", f"{__name__}:LongProvider")
    topics = ("sdk", "agent", "plain", "cancel")
    GATE.update(
        release=asyncio.Event(),
        following=asyncio.Event(),
        finish=asyncio.Event(),
        cancelled={t: asyncio.Event() for t in topics},
    )


@asynccontextmanager
async def serving(tmp_path: Path) -> AsyncIterator[str]:
    serve = {
        "providers": ["long"],
        "transport": "http",
        "port": 0,
        "data_dir": str(tmp_path),
        "tokens": TOKENS,
        "tool_timeout": TOOL_TIMEOUT,
        "task_after": 0.05,
        "task_timeout": 60.0,
    }
    config = parse_config({"serve": serve}, source=tmp_path / "toolweave.toml")
    async for url in serve_config(config):
        yield url


def _auth(who: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[who]}"}


async def _cut_by_tool_timeout(url: str) -> str:
    """Call the tool as a client without tasks: `tool_timeout` ends it (awaited, not timed)."""
    async with MCPClient.http(url, headers=_auth("alice"), protocol_mode="legacy") as plain:
        result = await plain.call_tool("long_report", {"topic": "plain"})
    await GATE["cancelled"]["plain"].wait()
    return result.text


async def _following(call: asyncio.Future[Any]) -> None:
    """Return once the client follows the task (or fail with the call's own error)."""
    following = asyncio.ensure_future(GATE["following"].wait())
    await asyncio.wait({call, following}, return_when=asyncio.FIRST_COMPLETED)
    following.cancel()
    if call.done():
        raise AssertionError(f"the call ended before it became a task: {call.result()!r}")


# -- the official SDK client: the tasks extension written with the SDK's extension API ---------


def _sdk_tasks(messages: list[str]) -> SDKTasks:
    """The example's SDK tasks extension, polling fast and telling the test what it saw."""

    def seen(state: TaskState) -> None:
        GATE["following"].set()
        if state.status_message and state.status_message not in messages:
            messages.append(state.status_message)
            GATE["finish"].set()

    return SDKTasks(seen, max_interval=0.05)


async def test_the_official_sdk_client_gets_a_long_call_as_a_task(tmp_path: Path) -> None:
    messages: list[str] = []
    tasks = _sdk_tasks(messages)
    async with (
        serving(tmp_path) as url,
        httpx.AsyncClient(headers=_auth("alice")) as http,
        Client(streamable_http_client(url, http_client=http), extensions=[tasks]) as client,
    ):
        call = asyncio.ensure_future(
            client.call_tool("long_report", {"topic": "sdk"}, read_timeout_seconds=TOOL_TIMEOUT)
        )
        await _following(call)
        cut = await _cut_by_tool_timeout(url)
        GATE["release"].set()
        result = await call
    assert (
        f"timed out after {TOOL_TIMEOUT:g}s" in cut
    )  # a call without tasks is bounded by tool_timeout
    assert not result.is_error and result.content[0].text == "report on sdk"  # type: ignore[union-attr]
    assert not GATE["cancelled"]["sdk"].is_set()
    assert messages == ["2/3 drafting sdk"]


async def test_toolweaves_client_follows_the_task_with_progress(tmp_path: Path) -> None:
    events: list[tuple[float, str | None]] = []

    def progress(done: float, total: float | None, message: str | None) -> None:
        events.append((done, message))
        GATE["following"].set()
        if message == "2/3 drafting agent":
            GATE["finish"].set()

    async with serving(tmp_path) as url, MCPClient.http(url, headers=_auth("alice")) as client:
        call = asyncio.ensure_future(
            client.call_tool("long_report", {"topic": "agent"}, TOOL_TIMEOUT, progress)
        )
        await _following(call)
        cut = await _cut_by_tool_timeout(url)
        GATE["release"].set()
        result = await call
    assert f"timed out after {TOOL_TIMEOUT:g}s" in cut
    assert not result.is_error and result.text == "report on agent"
    assert "2/3 drafting agent" in [message for _, message in events]
    assert [done for done, _ in events] == sorted(done for done, _ in events)


async def test_cancelling_stops_the_tool_and_another_client_cannot_touch_it(
    tmp_path: Path,
) -> None:
    async with (
        serving(tmp_path) as url,
        MCPClient.http(url, headers=_auth("alice")) as alice,
        MCPClient.http(url, headers=_auth("bob")) as bob,
    ):
        created = await alice.request(
            "tools/call", {"name": "long_report", "arguments": {"topic": "cancel"}}
        )
        task_id = created["taskId"]
        with pytest.raises(JSONRPCError, match="not yours"):
            await bob.request("tasks/get", {"taskId": task_id})
        with pytest.raises(JSONRPCError, match="not yours"):
            await bob.request("tasks/cancel", {"taskId": task_id})
        assert not GATE["cancelled"]["cancel"].is_set()
        await alice.request("tasks/cancel", {"taskId": task_id})
        await GATE["cancelled"]["cancel"].wait()  # the tool saw its cancellation
        seen = await alice.request("tasks/get", {"taskId": task_id})
    assert created["resultType"] == "task"
    assert seen["status"] == "cancelled"
