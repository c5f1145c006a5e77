"""Tasks through the gateway (issue 34): a downstream tool's `execution.taskSupport` is
republished, and a call of it reaches the client as a task whose `tasks/get` follows the
downstream task and whose `tasks/cancel` stops it. Against server-everything (npm), whose
`simulate-research-query` runs only as a task, with toolweave's `MCPClient` and the official
SDK client (2026 mode, examples/long_task.py's tasks extension)."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path

import httpx
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from examples.long_task import SDKTasks
from tests.host.serving import serving_gateway
from tests.host.test_gateway import EVERYTHING, NODE, needs_node
from toolweave.mcp.client import MCPClient
from toolweave.mcp.shared.errors import MCPError

pytestmark = needs_node
RESEARCH = "everything__simulate-research-query"


def gateway(tmp_path: Path) -> AbstractAsyncContextManager[str]:
    servers = {"everything": {"command": str(NODE), "args": [str(EVERYTHING)]}}
    return serving_gateway(tmp_path, servers, [RESEARCH])


async def test_a_downstream_task_only_tool_is_republished_and_runs_as_a_task(
    tmp_path: Path,
) -> None:
    steps: list[str | None] = []
    async with gateway(tmp_path) as url, MCPClient.http(url, timeout=60) as client:
        tools = {t.name: t for t in await client.list_tools()}
        result = await client.call_tool(
            RESEARCH, {"topic": "梅雨"}, on_progress=lambda done, total, m: steps.append(m)
        )
    assert tools[RESEARCH].execution == {"taskSupport": "required"}
    assert not result.is_error and "Research Report: 梅雨" in result.text
    assert steps and steps[0] == "working"  # the call became a task at the gateway


async def test_the_official_sdk_client_runs_it_and_cancel_reaches_the_task(
    tmp_path: Path,
) -> None:
    async with (
        gateway(tmp_path) as url,
        httpx.AsyncClient() as http,
        Client(
            streamable_http_client(url, http_client=http),
            extensions=[SDKTasks(max_interval=0.2)],
        ) as sdk,
        MCPClient.http(url, timeout=60) as client,
    ):
        result = await sdk.call_tool(RESEARCH, {"topic": "tides"}, read_timeout_seconds=30)
        created = await client.request(
            "tools/call", {"name": RESEARCH, "arguments": {"topic": "moss"}}
        )
        cancelled = await client.cancel_task(created["taskId"])
        with pytest.raises(MCPError, match="cancelled"):
            await client.task_result(cancelled)
    assert not result.is_error
    assert "Research Report: tides" in result.content[0].text  # type: ignore[union-attr]
    assert created["resultType"] == "task" and cancelled.status == "cancelled"
