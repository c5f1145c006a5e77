"""A five-minute tool served by `toolweave serve`, completed as an MCP task (SEP-2663).

The host serves one tool, `survey`, that works for `--minutes` (default 5) and reports progress
every few seconds. With `[serve].task_after = 2` a call still running after two seconds becomes
a task for a 2026-07-28 client that declared the tasks extension, bounded by
`[serve].task_timeout` rather than `[serve].tool_timeout` (left at 60 s here). Three clients
call it at once:

- the official MCP SDK client, following the task with `SDKTasks` (below): the SDK ships no
  tasks helper, so a user writes this `ClientExtension` claiming `resultType: "task"`;
- toolweave's own `MCPClient`, which follows tasks transparently, progress as events;
- a second `MCPClient` that cancels its call after the first progress report (the tool sees
  the cancellation), while a client with another token can neither see nor cancel the tasks.

Run: `python examples/long_task.py` (or `--minutes 0.2` for a quick look). It prints what each
client saw and how long each call took.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar, Literal

import httpx
from mcp.client import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult, Request, Result
from pydantic import BaseModel, ConfigDict, Field

from toolweave.host import ToolHost, parse_config
from toolweave.host.providers import base as host_providers
from toolweave.mcp.client import MCPClient
from toolweave.mcp.shared.constants import TASKS_EXTENSION
from toolweave.mcp.shared.errors import MCPError
from toolweave.tools import ToolContext, tool

TOKENS = {"alice": "alice-" + "a" * 32, "mallory": "mallory-" + "m" * 32}
REPORT_EVERY = 5.0  # seconds between the tool's progress reports
MINUTES = {"value": 5.0}  # set from --minutes before the host starts
CANCELLED: dict[str, asyncio.Event] = {}  # per topic, made in main (an Event binds to a loop)


@tool(read_only=True)
async def survey(topic: str, ctx: ToolContext) -> str:
    """Survey a topic for several minutes, reporting progress as it goes."""
    total = MINUTES["value"] * 60
    steps = max(1, round(total / REPORT_EVERY))
    try:
        for step in range(1, steps + 1):
            await asyncio.sleep(total / steps)  # waiting on a remote job, say
            await ctx.report_progress(step, steps, f"surveyed {topic}")
    except asyncio.CancelledError:
        if topic in CANCELLED:
            CANCELLED[topic].set()
        raise
    return f"survey of {topic}: done in {total:g}s"


class SurveyProvider:
    name = "survey"

    def __init__(self, config: Any) -> None:
        self.config = config

    async def tools(self) -> list[Any]:
        return [survey]

    async def close(self) -> None:
        return None


# -- the official SDK client's side: a tasks extension written with its extension API ----------


class _Wire(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="allow")


class CreatedTask(Result):
    """`resultType: "task"`: the call became a task."""

    result_type: Literal["task"] = Field(alias="resultType")
    task_id: str = Field(alias="taskId")
    status: str
    poll_interval_ms: int | None = Field(None, alias="pollIntervalMs")


class GetTask(Request[dict[str, Any], Literal["tasks/get"]]):
    """`tasks/get`; its `taskId` goes in the Mcp-Name header too (SEP-2243)."""

    method: Literal["tasks/get"] = "tasks/get"
    name_param: ClassVar[str | None] = "taskId"


class TaskState(_Wire):
    task_id: str = Field(alias="taskId")
    status: str
    status_message: str | None = Field(None, alias="statusMessage")
    result: dict[str, Any] | None = None


class SDKTasks(ClientExtension):
    """Follow a task by polling `tasks/get` at the server's interval (at most `max_interval`);
    `on_state` sees each state, the first one when following starts."""

    identifier = TASKS_EXTENSION

    def __init__(
        self,
        on_state: Callable[[TaskState], Awaitable[None] | None] = lambda state: None,
        max_interval: float = 5.0,
    ) -> None:
        self.on_state = on_state
        self.max_interval = max_interval

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self._follow)]

    async def _follow(self, created: CreatedTask, ctx: ClaimContext) -> CallToolResult:
        interval = min((created.poll_interval_ms or 1000) / 1000, self.max_interval)
        request = GetTask(params={"taskId": created.task_id})
        state = await ctx.session.send_request(request, TaskState)
        while True:
            outcome = self.on_state(state)
            if outcome is not None:
                await outcome
            if state.status in ("completed", "failed", "cancelled"):
                break
            await asyncio.sleep(interval)  # the poll interval the server asked for
            state = await ctx.session.send_request(request, TaskState)
        if state.result is None:
            raise RuntimeError(f"task {state.task_id} ended {state.status}: {state.status_message}")
        return CallToolResult.model_validate(state.result)


# -- the run ---------------------------------------------------------------------------------


async def _official_sdk(url: str) -> str:
    seen: list[str] = []
    tasks = SDKTasks(lambda state: seen.append(state.status_message or state.status))
    headers = {"Authorization": f"Bearer {TOKENS['alice']}"}
    async with (
        httpx.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(url, http_client=http), extensions=[tasks]) as client,
    ):
        result = await client.call_tool("survey", {"topic": "rivers"}, read_timeout_seconds=60)
    text = result.content[0].text if result.content else ""  # type: ignore[union-attr]
    return f"{text} ({len(set(seen))} distinct states polled, last {seen[-1]!r})"


async def _toolweave(url: str) -> str:
    events: list[str | None] = []
    headers = {"Authorization": f"Bearer {TOKENS['alice']}"}
    async with MCPClient.http(url, headers=headers, timeout=60) as client:
        result = await client.call_tool(
            "survey", {"topic": "lakes"}, on_progress=lambda d, t, m: events.append(m)
        )
    return f"{result.text} ({len(events)} progress events, last {events[-1]!r})"


async def _cancelled_and_private(url: str) -> str:
    alice = MCPClient.http(url, headers={"Authorization": f"Bearer {TOKENS['alice']}"})
    mallory = MCPClient.http(url, headers={"Authorization": f"Bearer {TOKENS['mallory']}"})
    async with alice, mallory:
        created = await alice.request(
            "tools/call", {"name": "survey", "arguments": {"topic": "glaciers"}}
        )
        task_id = created["taskId"]
        refused = []
        for method in ("tasks/get", "tasks/cancel"):
            try:
                await mallory.request(method, {"taskId": task_id})
            except MCPError as exc:
                refused.append(f"{method}: {exc}")
        async for state in alice.watch_task(await alice.get_task(task_id)):
            if state.status_message is not None and not state.done:  # under way: stop it now
                break
        else:
            return "the task ended before its first progress report; try more --minutes"
        await alice.cancel_task(task_id)
        await CANCELLED["glaciers"].wait()  # the tool saw its cancellation
        status = (await alice.get_task(task_id)).status
    return f"cancelled: task {status}, tool saw it; another token refused: {refused}"


async def main(minutes: float) -> None:
    MINUTES["value"] = minutes
    CANCELLED["glaciers"] = asyncio.Event()
    host_providers.PROVIDERS["survey"] = f"{__name__}:SurveyProvider"
    data = Path(tempfile.mkdtemp(prefix="toolweave-long-task-"))
    serve = {
        "providers": ["survey"],
        "transport": "http",
        "port": 0,
        "data_dir": str(data),
        "tokens": TOKENS,
        "task_after": 2.0,
        "task_timeout": minutes * 60 + 120,
    }
    host = ToolHost(parse_config({"serve": serve}, source=data / "toolweave.toml"))
    ready = asyncio.Event()
    serving = asyncio.ensure_future(host.serve_http(on_ready=ready.set))
    await ready.wait()
    url = f"http://127.0.0.1:{host.config.port}/mcp"
    print(f"serving {url}; tool_timeout {host.config.tool_timeout:g}s, a {minutes:g}-minute tool")
    try:
        started = time.perf_counter()

        async def timed(name: str, run: Awaitable[str]) -> None:
            outcome = await run
            print(f"[{time.perf_counter() - started:7.1f}s] {name}: {outcome}", flush=True)

        await asyncio.gather(
            timed("official SDK client (2026 mode)", _official_sdk(url)),
            timed("toolweave MCPClient", _toolweave(url)),
            timed("cancel + privacy", _cancelled_and_private(url)),
        )
    finally:
        host.stop()
        await serving


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    asyncio.run(main(parser.parse_args().minutes))
