"""The client against servers written with the official Python SDK, in both protocol eras."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import httpx
import pytest

from tests.mcp.client.mcp_peers import SDK_SERVER
from toolweave.mcp import MCPClient, MCPError, MCPTimeout, as_tools
from toolweave.tools import ImageContent


async def test_modern_era_over_stdio(sdk: MCPClient) -> None:
    assert sdk.protocol_version == "2026-07-28"  # server/discover answered
    assert sdk.server_info.name == "sdk-test-server" and sdk.server_info.version == "1.2.3"
    assert sdk.instructions == "Test server for toolweave."
    assert "tools" in sdk.capabilities


async def test_structured_image_error_and_progress(sdk: MCPClient) -> None:
    added = await sdk.call_tool("add", {"a": 2, "b": 3})
    assert added.structured == {"total": 5, "terms": [2, 3]}
    image = await sdk.call_tool("image", {})
    assert isinstance(image.content[0], ImageContent) and image.content[0].mime_type == "image/png"
    failed = await sdk.call_tool("fail", {"reason": "testing"})
    assert failed.is_error  # a domain error is a result, not an exception
    steps: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        steps.append((progress, total, message))

    slow = await sdk.call_tool("slow", {"steps": 3, "delay": 0}, on_progress=on_progress)
    assert slow.structured == {"result": "done after 3 steps"}
    assert steps == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_timeout_cancels_and_session_survives(sdk: MCPClient) -> None:
    with pytest.raises(MCPTimeout) as info:
        await sdk.call_tool("slow", {"steps": 1, "delay": 30}, timeout=0.3)
    assert info.value.tool == "slow" and not info.value.recoverable
    assert (await sdk.call_tool("echo", {"text": "still here"})).text == "still here"


async def test_progress_extends_the_timeout(sdk: MCPClient) -> None:
    # 8 steps of 0.1 s = 0.8 s total, over a 0.5 s timeout that each progress report resets.
    result = await sdk.call_tool(
        "slow", {"steps": 8, "delay": 0.1}, timeout=0.5, on_progress=lambda *a: None
    )
    assert result.structured == {"result": "done after 8 steps"}


async def test_resources_prompts(sdk: MCPClient) -> None:
    resources = await sdk.list_resources()
    assert [r.uri for r in resources] == ["test://greeting"]
    assert (await sdk.read_resource("test://greeting"))[0].text == "hello from a resource"
    templates = await sdk.list_resource_templates()
    assert templates[0].uri_template == "test://items/{item}"
    assert (await sdk.read_resource("test://items/42"))[0].text == "item 42"
    prompt = await sdk.get_prompt("greet", {"name": "Ada"})
    assert prompt.messages[0].role == "user"
    assert "Ada" in getattr(prompt.messages[0].content, "text", "")


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_elicitation_sampling_roots_in_both_eras(mode: str) -> None:
    """2025: server-to-client requests mid-call; 2026: input_required rounds (MRTR)."""
    asked: list[dict[str, Any]] = []

    async def elicit(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Grace"}}

    async def sample(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {
            "role": "assistant",
            "content": {"type": "text", "text": "Paris"},
            "model": "scripted",
            "stopReason": "endTurn",
        }

    async with MCPClient.stdio(
        sys.executable,
        [SDK_SERVER],
        elicitation_handler=elicit,
        sampling_handler=sample,
        roots=[{"uri": "file:///tmp/project", "name": "project"}],
        protocol_mode=mode,
    ) as client:
        assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
        assert (await client.call_tool("ask_name", {})).text == "hello Grace"
        assert (await client.call_tool("ask_model", {})).text == "model said Paris"
        assert (await client.call_tool("roots", {})).text == "file:///tmp/project"
    assert asked[0]["message"] == "What is your name?"
    assert asked[1]["maxTokens"] == 20


async def test_http_both_eras_and_404_reinitialize(sdk_http_url: str) -> None:
    async with MCPClient.http(sdk_http_url) as modern:
        assert modern.protocol_version == "2026-07-28"
        assert getattr(modern.transport, "session_id", "x") is None  # stateless
        assert (await modern.call_tool("add", {"a": 1, "b": 1})).structured["total"] == 2
        results = await asyncio.gather(
            *(modern.call_tool("echo", {"text": str(i)}) for i in range(50))
        )
        assert [r.text for r in results] == [str(i) for i in range(50)]
    async with MCPClient.http(sdk_http_url, protocol_mode="legacy") as legacy:
        assert legacy.protocol_version == "2025-11-25"
        transport: Any = legacy.transport
        assert transport.session_id
        transport.session_id = "not-a-session"  # the server answers 404: initialize again
        assert (await legacy.call_tool("echo", {"text": "back"})).text == "back"
        assert transport.session_id not in (None, "not-a-session")
        session = transport.session_id
    # Closing sent DELETE: the server no longer knows the session.
    async with httpx.AsyncClient() as http:
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        response = await http.post(
            sdk_http_url,
            json=ping,
            headers={
                "Mcp-Session-Id": session,
                "MCP-Protocol-Version": "2025-11-25",
                "Accept": "application/json, text/event-stream",
            },
        )
    assert response.status_code == 404


async def test_permission_probe_only_for_advertising_tools(sdk: MCPClient) -> None:
    tools = {t.name: t for t in await as_tools(sdk)}
    shell, echo = tools["shell"], tools["echo"]
    assert shell.supports_permission_probe and not echo.supports_permission_probe
    patterns = await shell.permission_patterns({"command": "git push origin"})
    assert patterns is not None
    assert patterns.patterns == ["git *"] and patterns.always == ["git --version"]
    peer: Any = sdk._peer
    before = peer._next_id
    assert await echo.permission_patterns({"text": "x"}) is None
    with pytest.raises(MCPError, match="does not advertise"):  # the raw client refuses too
        await sdk.call_tool("echo", {"text": "x"}, meta={"forge.permission_patterns": True})
    assert peer._next_id == before  # nothing was sent to a tool that did not opt in


async def test_http_version_header_on_everything_after_initialize(sdk_http_url: str) -> None:
    """`notifications/initialized` and the GET stream carry the negotiated version too."""
    seen: list[tuple[str, bytes, str | None]] = []
    got_get = asyncio.Event()

    async def record(request: httpx.Request) -> None:
        seen.append((request.method, request.content, request.headers.get("mcp-protocol-version")))
        if request.method == "GET":
            got_get.set()

    client = MCPClient.http(sdk_http_url, protocol_mode="legacy")
    transport: Any = client.transport
    transport._client = httpx.AsyncClient(event_hooks={"request": [record]})
    async with client:
        await got_get.wait()
        await client.ping()
    initialize = next(i for i, (_, body, _) in enumerate(seen) if b'"initialize"' in body)
    later = seen[initialize + 1 :]
    assert {method for method, _, _ in later} >= {"POST", "GET", "DELETE"}
    assert all(version == "2025-11-25" for _, _, version in later), later
