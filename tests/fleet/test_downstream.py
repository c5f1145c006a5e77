"""A downstream MCP server crashing behind a fleet replica's gateway: the call that crashed it
fails with an error naming the server, the replica reconnects it (its listeners hear the tools
withdrawn and republished, on every replica through the change relay), and calls through
HAProxy reach it again. Nothing is replayed: the crashing call ran once and is not retried."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ToolsListChanged

from tests.fleet.harness import Fleet, needs_haproxy
from tests.host.test_gateway import CRASHY_SERVER
from tests.postgres_server import Cluster

pytestmark = needs_haproxy


async def test_a_crashed_downstream_is_named_reconnected_and_served_again_through_haproxy(
    tmp_path: Path, fleet_cluster: Cluster
) -> None:
    script = tmp_path / "crashy.py"
    script.write_text(CRASHY_SERVER)
    tables = (
        '[serve.rules]\nallow = ["crashy__*"]\n'
        f'[mcpServers.crashy]\ncommand = "{sys.executable}"\nargs = ["{script}"]\n'
    )
    async with Fleet(tmp_path, fleet_cluster, replicas=2, tables=tables) as fleet:
        async with (
            Client(fleet.replicas[0].url) as on_r0,
            Client(fleet.replicas[1].url) as on_r1,
            on_r1.listen(tools_list_changed=True) as heard_on_r1,
        ):
            await on_r0.list_tools()
            with pytest.raises(MCPError, match="MCP server 'crashy' exited with code 3"):
                await on_r0.call_tool("crashy__crash", {})
            withdrawn = await heard_on_r1.__anext__()
            republished = await heard_on_r1.__anext__()
        async with Client(fleet.url) as client:
            pongs = [(await client.call_tool("crashy__ping", {})).content[0].text for _ in range(4)]
    assert withdrawn == republished == ToolsListChanged()
    assert pongs == ["pong"] * 4
