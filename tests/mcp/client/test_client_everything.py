"""The client against @modelcontextprotocol/server-everything, over stdio and Streamable HTTP."""

from __future__ import annotations

import asyncio
import logging
import os
from typing import Any

import pytest

from toolweave.mcp import MCPClient, MCPError
from toolweave.tools import ImageContent, ResourceContent, ResourceLink, TextContent


async def test_connect_and_identity(everything: MCPClient) -> None:
    assert everything.server_info.name == "mcp-servers/everything"
    assert everything.protocol_version == "2025-11-25"  # a legacy server: discover fell back
    assert "tools" in everything.capabilities
    pid = everything.server_pid
    assert isinstance(pid, int)
    os.kill(pid, 0)  # the process exists
    await everything.ping()


async def test_tools_listing_and_annotations(everything: MCPClient) -> None:
    tools = {t.name: t for t in await everything.list_tools()}
    assert {"echo", "get-sum", "get-tiny-image", "get-structured-content"} <= set(tools)
    echo = tools["echo"]
    assert echo.input_schema["properties"]["message"]["type"] == "string"
    assert echo.tool_annotations.read_only and not echo.tool_annotations.destructive
    assert tools["get-structured-content"].output_schema is not None
    assert await everything.list_tools() == list(tools.values())  # cached, same order


async def test_call_text_image_structured_and_resources(everything: MCPClient) -> None:
    echo = await everything.call_tool("echo", {"message": "hi"})
    assert echo.text == "Echo: hi" and not echo.is_error
    image = await everything.call_tool("get-tiny-image", {})
    images = [p for p in image.content if isinstance(p, ImageContent)]
    assert images and images[0].mime_type == "image/png" and len(images[0].data) > 50
    weather = await everything.call_tool("get-structured-content", {"location": "Chicago"})
    assert set(weather.structured) == {"temperature", "conditions", "humidity"}
    links = await everything.call_tool("get-resource-links", {"count": 2})
    linked = [p for p in links.content if isinstance(p, ResourceLink)]  # links, not embedded
    assert len(linked) == 2 and all(p.uri.startswith("demo://") for p in linked)
    assert all(p.name and p.description for p in linked)
    ref = await everything.call_tool(
        "get-resource-reference", {"resourceType": "Text", "resourceId": 3}
    )
    embedded = [p for p in ref.content if isinstance(p, ResourceContent)]
    assert embedded[0].text is not None and "Resource 3" in embedded[0].text


async def test_invalid_arguments_come_back_as_error_result_or_error(everything: MCPClient) -> None:
    try:
        result = await everything.call_tool("get-sum", {"a": "not a number"})
    except MCPError as exc:
        assert exc.code is not None and not exc.recoverable
    else:
        assert result.is_error


async def test_progress_notifications(everything: MCPClient) -> None:
    seen: list[tuple[float, float | None]] = []
    result = await everything.call_tool(
        "trigger-long-running-operation",
        {"duration": 0.4, "steps": 4},
        on_progress=lambda progress, total, message: seen.append((progress, total)),
    )
    assert "completed" in result.text
    assert [p for p, _ in seen] == [1, 2, 3, 4] and seen[0][1] == 4


async def test_200_concurrent_calls(everything: MCPClient) -> None:
    results = await asyncio.gather(
        *(everything.call_tool("get-sum", {"a": i, "b": 1}) for i in range(200))
    )
    assert [r.text for r in results] == [f"The sum of {i} and 1 is {i + 1}." for i in range(200)]


async def test_prompts_resources_completion(everything: MCPClient) -> None:
    prompts = {p.name: p for p in await everything.list_prompts()}
    assert prompts["args-prompt"].arguments[0]["name"] == "city"
    got = await everything.get_prompt("args-prompt", {"city": "Paris"})
    assert any(
        isinstance(m.content, TextContent) and "Paris" in m.content.text for m in got.messages
    )
    resources = await everything.list_resources()
    assert resources and all(r.uri for r in resources)
    contents = await everything.read_resource(resources[0].uri)
    assert contents[0].uri == resources[0].uri and (contents[0].text or contents[0].blob)
    templates = await everything.list_resource_templates()
    assert any("{resourceId}" in t.uri_template for t in templates)
    text = await everything.read_resource("demo://resource/dynamic/text/7")
    assert "Resource 7" in (text[0].text or "")
    values = await everything.complete(
        {"type": "ref/prompt", "name": "completable-prompt"}, "department", "E"
    )
    assert values == ["Engineering"]


async def test_resource_subscription_round_trip(everything: MCPClient) -> None:
    uri = "demo://resource/dynamic/text/1"
    await everything.subscribe_resource(uri)
    await everything.unsubscribe_resource(uri)
    assert everything.capabilities["resources"]["subscribe"] is True


async def test_server_logging_reaches_python_logging(
    everything: MCPClient, caplog: pytest.LogCaptureFixture
) -> None:
    await everything.set_logging_level("debug")
    got = asyncio.Event()

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            got.set()

    handler = Catch()
    log = logging.getLogger("toolweave.mcp.server.everything")
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        await everything.call_tool("toggle-simulated-logging", {})
        await asyncio.wait_for(got.wait(), 15)
    finally:
        log.removeHandler(handler)
        await everything.call_tool("toggle-simulated-logging", {})
    assert got.is_set()
    with pytest.raises(ValueError, match="logging level"):
        await everything.set_logging_level("loud")


async def test_http_session_tools_and_concurrency(everything_http: MCPClient) -> None:
    client = everything_http
    assert client.protocol_version == "2025-11-25"
    session = getattr(client.transport, "session_id", None)
    assert isinstance(session, str) and session
    assert (await client.call_tool("echo", {"message": "over http"})).text == "Echo: over http"
    seen: list[float] = []
    done = await client.call_tool(
        "trigger-long-running-operation",
        {"duration": 0.3, "steps": 3},
        on_progress=lambda p, t, m: seen.append(p),
    )
    assert "completed" in done.text and seen == [1, 2, 3]
    results = await asyncio.gather(
        *(client.call_tool("get-sum", {"a": i, "b": 2}) for i in range(200))
    )
    assert [r.text for r in results] == [f"The sum of {i} and 2 is {i + 2}." for i in range(200)]
    image = await client.call_tool("get-tiny-image", {})
    assert any(isinstance(p, ImageContent) for p in image.content)


async def test_http_reconnect_opens_a_new_session(everything_http: MCPClient) -> None:
    transport: Any = everything_http.transport
    first = transport.session_id
    await everything_http.reconnect()
    assert transport.session_id not in (None, first)
    assert (await everything_http.call_tool("echo", {"message": "new"})).text == "Echo: new"


async def test_http_timeout_then_session_still_usable(everything_http: MCPClient) -> None:
    from toolweave.mcp import MCPTimeout

    with pytest.raises(MCPTimeout):
        await everything_http.call_tool(
            "trigger-long-running-operation", {"duration": 5, "steps": 1}, timeout=0.2
        )
    assert (await everything_http.call_tool("echo", {"message": "ok"})).text == "Echo: ok"
