"""Icons (SEP-973) on the server, its tools, prompts and resources, and pagination cursors on
every list, in both eras."""

from __future__ import annotations

import pytest

from tests.mcp.server.inprocess import serve_in_process
from tests.mcp.server.modern import Modern, modern_client
from toolweave.mcp import MCPClient, MCPServer

ICON = {"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}
DARK = {"src": "data:image/svg+xml;base64,PHN2Zy8+", "theme": "dark"}


def make_server(page_size: int | None = 2) -> MCPServer:
    server = MCPServer("pages", icons=[ICON], page_size=page_size)
    for i in range(5):
        server.tool(name=f"tool_{i}", icons=[DARK] if i == 0 else None)(lambda: "ok")

    @server.prompt(icons=[ICON], title="问候")
    def greeting() -> str:
        return "你好"

    @server.resource("docs://readme", icons=[DARK])
    def readme() -> str:
        return "read me"

    return server


async def test_lists_come_in_pages_with_opaque_cursors() -> None:
    async with modern_client(make_server()) as http:
        modern = Modern(http)
        pages, cursor = [], None
        while True:
            result = await modern.result("tools/list", {"cursor": cursor} if cursor else {})
            pages.append([tool["name"] for tool in result["tools"]])
            cursor = result.get("nextCursor")
            if cursor is None:
                break
        foreign = await modern.post("prompts/list", {"cursor": cursor or "x"})
        garbage = await modern.post("tools/list", {"cursor": "not-a-cursor"})
        prompts = await modern.result("prompts/list")
        resources = await modern.result("resources/list")
        found = await modern.result("server/discover")
    assert pages == [["tool_0", "tool_1"], ["tool_2", "tool_3"], ["tool_4"]]
    assert foreign.json()["error"]["code"] == garbage.json()["error"]["code"] == -32602
    assert "nextCursor" not in prompts and prompts["prompts"][0]["icons"] == [ICON]
    assert resources["resources"][0]["icons"] == [DARK]
    assert found["_meta"]["io.modelcontextprotocol/serverInfo"]["icons"] == [ICON]


async def test_our_client_walks_every_page() -> None:
    server = make_server(page_size=1)
    async with serve_in_process(server) as url, MCPClient.http(url) as client:
        tools = await client.list_tools()
    assert [tool.name for tool in tools] == [f"tool_{i}" for i in range(5)]


@pytest.mark.parametrize(
    ("icon", "message"),
    [
        ({"src": "http://plain.example/icon.png"}, "must be an https: URL or a data: URI"),
        ({"src": "https://x/i.png", "size": "48"}, "unknown keys"),
        ({"src": "https://x/i.png", "sizes": "48x48"}, "must be a list of strings"),
        ({"src": "https://x/i.png", "theme": "blue"}, "'light' or 'dark'"),
    ],
)
def test_bad_icons_fail_at_registration_naming_the_field(
    icon: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        MCPServer("x", icons=[icon])
    with pytest.raises(ValueError, match="page_size"):
        MCPServer("x", page_size=0)
