"""`[serve] tool_search = true` in front of real downstream servers (the weather example over
stdio, the reference filesystem server): past `tool_search_threshold`, the official MCP SDK
client (2025 and 2026 modes) and toolweave's own agent see `tool_search`, `tool_call` and the
pinned tools; they find a tool and call it through `tool_call`, or, announced with
`notifications/tools/list_changed`, from their own refreshed list; either call is governed as a
listed one (rules, approval by elicitation); a tool a rule denies outright is neither found nor
callable; at or under the threshold every tool is listed and the search tools are not."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from mcp import types
from mcp.client import Client
from mcp.shared.subscriptions import ToolsListChanged

from tests.host.serving import serving_http
from tests.peers.node_platform import SKIP_REASON, find_node
from toolweave.agent import Agent
from toolweave.errors import ConfigError
from toolweave.governance import Rules
from toolweave.host import ToolHost, parse_config
from toolweave.host.tool_search import ServedSearch
from toolweave.llm import Message, ScriptedModel, ToolCallPart
from toolweave.mcp import MCPManager
from toolweave.tools import ToolContext
from toolweave.tools.search_mode import ToolSearch

ROOT = Path(__file__).resolve().parents[2]
WEATHER = ROOT / "examples" / "weather_server.py"
PEERS = ROOT / "tests" / "peers" / "node_modules"
NODE = find_node(PEERS)
FILESYSTEM = PEERS / ".bin" / "mcp-server-filesystem"
pytestmark = pytest.mark.skipif(NODE is None, reason=SKIP_REASON)


@asynccontextmanager
async def serving(tmp_path: Path, threshold: int = 5) -> AsyncIterator[ToolHost]:
    files = tmp_path / "files"
    files.mkdir()
    (files / "notes.txt").write_text("launch at 09:00\n", encoding="utf-8")
    toml = tmp_path / "toolweave.toml"
    toml.write_text("")
    config = parse_config(
        {
            "serve": {
                "providers": ["demo"],
                "transport": "http",
                "port": 0,
                "data_dir": str(tmp_path / "data"),
                "tool_search": True,
                "tool_search_threshold": threshold,
                "tool_search_pinned": ["calculate"],
                "rules": {
                    "deny": ["filesystem__write_file"],
                    "ask": ["weather__get_weather"],
                },
            },
            "mcpServers": {
                "weather": {"command": sys.executable, "args": [str(WEATHER)]},
                "filesystem": {"command": str(FILESYSTEM), "args": [str(files)]},
            },
        },
        source=toml,
    )
    async with serving_http(ToolHost(config)) as host:
        yield host


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def accepting(asked: list[str]) -> Any:
    """An elicitation callback that accepts once and notes each question in `asked`."""

    async def person(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"always": False})

    return person


async def test_the_sdk_client_searches_and_calls_a_found_tool_governed(tmp_path: Path) -> None:
    asked: list[str] = []
    person = accepting(asked)
    async with (
        serving(tmp_path) as host,
        Client(host.url, mode="legacy", elicitation_callback=person) as client,
    ):
        listed = sorted(t.name for t in (await client.list_tools()).tools)
        found = await client.call_tool("tool_search", {"query": "read a text file"})
        files = (tmp_path / "files" / "notes.txt").resolve()
        read = await client.call_tool(
            "tool_call",
            {"name": "filesystem__read_text_file", "arguments": {"path": str(files)}},
        )
        writes = await client.call_tool("tool_search", {"query": "write a file", "k": 20})
        denied = await client.call_tool(
            "tool_call",
            {"name": "filesystem__write_file", "arguments": {"path": "x", "content": "y"}},
        )
        weather = await client.call_tool(
            "tool_call", {"name": "weather__get_weather", "arguments": {"city": "Beijing"}}
        )
    assert listed == ["calculate", "tool_call", "tool_search"]
    found_names = [t["name"] for t in found.structured_content["tools"]]
    assert "filesystem__read_text_file" in found_names
    schema = found.structured_content["tools"][found_names.index("filesystem__read_text_file")]
    assert "path" in schema["inputSchema"]["properties"]
    assert read.is_error is not True and "launch at 09:00" in text(read)
    write_names = [t["name"] for t in writes.structured_content["tools"]]
    assert write_names and "filesystem__write_file" not in write_names
    assert denied.is_error and "tool_search" in text(denied)
    assert weather.is_error is not True and "sunny" in text(weather)
    assert len(asked) == 1 and "weather__get_weather" in asked[0]  # asked as a listed call is


async def test_toolweave_s_agent_finds_and_calls_through_the_host(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            Message.assistant(
                tool_calls=[ToolCallPart("s", "host__tool_search", {"query": "list a directory"})]
            ),
            Message.assistant(
                tool_calls=[
                    ToolCallPart(
                        "c",
                        "host__tool_call",
                        {
                            "name": "filesystem__list_directory",
                            "arguments": {"path": str((tmp_path / "files").resolve())},
                        },
                    )
                ]
            ),
            Message.assistant("notes.txt is there."),
        ]
    )
    async with serving(tmp_path) as host:
        servers = {"mcpServers": {"host": {"url": host.url}}}
        async with MCPManager.from_config(servers) as manager:
            # tool_call may reach any served tool, so a client asks before it by default; the
            # host still governs the tool it calls.
            allow = Rules(allow=["host__tool_call"])
            agent = Agent(model, manager.model_tools(lazy=False), governance=allow)
            result = await agent.run("What is in my files folder?")
    assert sorted(d.name for d in model.requests[0].tools) == [
        "host__calculate",
        "host__tool_call",
        "host__tool_search",
        "read_result",  # the agent's own pager of long results
    ]
    searched, called = result.invocations
    assert "filesystem__list_directory" in searched.result.text
    assert called.ok and "notes.txt" in called.result.text


async def test_under_the_threshold_every_tool_is_listed_and_no_search_tool(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path, threshold=1000) as host, Client(host.url) as client:
        listed = {t.name for t in (await client.list_tools()).tools}
    assert {"calculate", "filesystem__read_text_file", "weather__get_weather"} <= listed
    assert not listed & {"tool_search", "tool_call"}
    assert "filesystem__write_file" not in listed  # denied outright: never published
    assert len(listed) <= 1000 and len(host.registry.names()) == len(listed)


async def test_a_found_tool_joins_the_2025_session_s_list_announced(tmp_path: Path) -> None:
    changed = asyncio.Event()

    async def messages(message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    files = (tmp_path / "files").resolve()
    async with (
        serving(tmp_path) as host,
        Client(host.url, mode="legacy", message_handler=messages) as client,
        Client(host.url, mode="legacy") as other,
    ):
        before = {t.name for t in (await client.list_tools()).tools}
        await client.call_tool("tool_search", {"query": "read a text file"})
        await asyncio.wait_for(changed.wait(), 30)
        after = {t.name for t in (await client.list_tools()).tools}
        read = await client.call_tool(
            "filesystem__read_text_file", {"path": str(files / "notes.txt")}
        )
        others = {t.name for t in (await other.list_tools()).tools}
    assert before == {"calculate", "tool_call", "tool_search"}
    assert "filesystem__read_text_file" in after and before < after
    assert read.is_error is not True and "launch at 09:00" in text(read)
    assert others == before  # another session's list is its own


async def test_a_2026_client_hears_the_change_and_calls_the_found_tool_governed(
    tmp_path: Path,
) -> None:
    asked: list[str] = []
    async with (
        serving(tmp_path) as host,
        Client(host.url, elicitation_callback=accepting(asked)) as client,
        client.listen(tools_list_changed=True) as heard,
    ):
        before = {t.name for t in (await client.list_tools()).tools}
        found = await client.call_tool("tool_search", {"query": "weather forecast for a city"})
        event = await asyncio.wait_for(heard.__anext__(), 30)
        after = {t.name for t in (await client.list_tools()).tools}
        weather = await client.call_tool("weather__get_weather", {"city": "Beijing"})
        host.server.changes.end()
    assert before == {"calculate", "tool_call", "tool_search"}
    assert "weather__get_weather" in [t["name"] for t in found.structured_content["tools"]]
    assert event == ToolsListChanged()
    assert "weather__get_weather" in after
    assert weather.is_error is not True and "sunny" in text(weather)
    assert len(asked) == 1 and "weather__get_weather" in asked[0]  # the ask rule still asks


def test_a_bad_threshold_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="tool_search_threshold"):
        parse_config({"serve": {"tool_search_threshold": -1}}, source=tmp_path / "t.toml")


def test_at_most_max_clients_found_lists_are_kept_the_least_recently_used_dropped() -> None:
    changes: list[int] = []
    served = ServedSearch(
        ToolSearch(threshold=0), lambda: 10, lambda: changes.append(1), max_clients=2
    )
    for client in ("a", "b", "c"):
        served.found(ToolContext(session_id=client), [f"{client}_tool"])
    shown = {
        client: served.listed(SimpleNamespace(session_id=client, principal=None), f"{client}_tool")
        for client in ("a", "b", "c")
    }
    assert shown == {"a": False, "b": True, "c": True}
    assert len(changes) == 3  # each client's list grew once, each announced
    served.found(ToolContext(session_id="c"), ["c_tool"])
    assert len(changes) == 3  # nothing new found: no announcement
