"""The gateway as users meet it: a silent downstream does not block the first listing, a crashed
one is withdrawn, reconnected and republished. Real stdio servers; the host's own MCP session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from toolweave.host import ToolHost, parse_config
from toolweave.mcp import MCPError
from toolweave.mcp.server.testing import connect

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# Blocks before serving until the test creates the go-file: a downstream that is silent for as
# long as the test wants, with no timing in the test itself.
LATE_SERVER = """
import os, sys, time
go = sys.argv[1]
while not os.path.exists(go):
    time.sleep(0.02)
sys.argv = sys.argv[:1]
exec(compile(open({weather!r}).read(), {weather!r}, "exec"))
"""

CRASHY_SERVER = """
import os
from toolweave.mcp import MCPServer

server = MCPServer("crashy")


@server.tool
def ping() -> str:
    return "pong"


@server.tool
def crash() -> str:
    os._exit(3)


server.run()
"""


async def test_a_silent_downstream_does_not_block_the_first_listing(tmp_path: Path) -> None:
    late = tmp_path / "late_server.py"
    late.write_text(LATE_SERVER.format(weather=str(EXAMPLES / "weather_server.py")))
    go = tmp_path / "go"
    config = parse_config(
        {
            "serve": {"providers": ["demo"], "connect_deadline": 0.2},
            "mcpServers": {"late": {"command": sys.executable, "args": [str(late), str(go)]}},
        }
    )
    host = ToolHost(config)
    try:
        async with connect(host.server) as client:
            first = sorted(t["name"] for t in await client.list_tools())
            local = await client.call_tool("calculate", {"expression": "6 * 7"})
            go.write_text("")
            await client.wait_for_notification("notifications/tools/list_changed")
            after = sorted(t["name"] for t in await client.list_tools())
            proxied = await client.call_tool("late__get_weather", {"city": "London"})
    finally:
        await host.close()
    assert first == ["calculate", "celsius_to_fahrenheit", "get_weather"]
    assert local["structuredContent"] == {"result": 42.0}
    assert "late__get_weather" in after and set(first) < set(after)
    assert proxied.get("isError") is not True


async def test_a_crashed_downstream_is_withdrawn_reconnected_and_republished(
    tmp_path: Path,
) -> None:
    script = tmp_path / "crashy.py"
    script.write_text(CRASHY_SERVER)
    config = parse_config(
        {
            "serve": {"providers": []},
            "mcpServers": {"crashy": {"command": sys.executable, "args": [str(script)]}},
        }
    )
    host = ToolHost(config)
    try:
        async with connect(host.server) as client:
            before = sorted(t["name"] for t in await client.list_tools())
            with pytest.raises(MCPError, match="exited with code 3"):
                await client.call_tool("crashy__crash")  # a transport failure, not a tool error
            await client.wait_for_notification("notifications/tools/list_changed")
            await client.wait_for_notification("notifications/tools/list_changed", count=2)
            after = sorted(t["name"] for t in await client.list_tools())
            pong = await client.call_tool("crashy__ping")
    finally:
        await host.close()
    assert before == ["crashy__crash", "crashy__ping"]
    assert after == before
    assert pong["content"][0]["text"] == "pong"
