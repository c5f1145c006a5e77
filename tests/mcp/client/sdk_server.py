"""An MCP server written with the official Python SDK (test-only peer), run as a subprocess.

Usage: sdk_server.py [stdio | http PORT | sse PORT] (sse: the legacy HTTP+SSE transport, the
stream at /sse and messages at /messages/). It speaks both eras, so our client reaches it in the
2026-07-28 stateless revision (server/discover) unless told to use the legacy handshake.
"""

from __future__ import annotations

import asyncio
import base64
import sys
from typing import Annotated, Any

from mcp.server.mcpserver import Context, Elicit, ListRoots, MCPServer, Resolve, Sample
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent
from pydantic import BaseModel

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

server = MCPServer("sdk-test-server", version="1.2.3", instructions="Test server for toolweave.")


class Sum(BaseModel):
    total: int
    terms: list[int]


class Answer(BaseModel):
    name: str


@server.tool(description="Add two integers and return a structured sum.")
def add(a: int, b: int) -> Sum:
    return Sum(total=a + b, terms=[a, b])


@server.tool(description="Echo the text back.", annotations=None)
def echo(text: str) -> str:
    return text


@server.tool(description="Return a 1x1 PNG image.")
def image() -> Image:
    return Image(data=PNG, format="png")


@server.tool(description="Always fails with a domain error.")
def fail(reason: str) -> str:
    raise ValueError(f"failed because {reason}")


@server.tool(description="Work in steps, reporting progress, sleeping `delay` seconds per step.")
async def slow(steps: int, delay: float, ctx: Context) -> str:
    for i in range(steps):
        await ctx.report_progress(i + 1, steps, f"step {i + 1}")
        await asyncio.sleep(delay)
    return f"done after {steps} steps"


def _ask() -> Elicit[Answer]:
    return Elicit("What is your name?", Answer)


def _sample() -> Sample:
    question = SamplingMessage(role="user", content=TextContent(type="text", text="Capital?"))
    return Sample([question], max_tokens=20)


@server.tool(description="Ask the user for their name through elicitation.")
async def ask_name(answer: Annotated[Answer, Resolve(_ask)]) -> str:
    return f"hello {answer.name}"


@server.tool(description="Ask the client's model a question (sampling).")
async def ask_model(reply: Annotated[CreateMessageResult, Resolve(_sample)]) -> str:
    return f"model said {getattr(reply.content, 'text', '?')}"


@server.tool(description="Report the client's roots.")
async def roots(found: Annotated[ListRootsResult, Resolve(lambda: ListRoots())]) -> str:
    return ",".join(str(root.uri) for root in found.roots)


@server.tool(
    description="Run a shell command (forge probe demo).",
    meta={"forge.supports_permission_patterns": True},
)
async def shell(command: str, ctx: Context) -> Any:
    from mcp.types import CallToolResult

    meta = ctx.request_context.meta or {}
    if meta.get("forge.permission_patterns"):
        first = command.split()[0] if command.split() else command
        return CallToolResult(
            content=[],
            _meta={"forge.patterns": [f"{first} *"], "forge.always": [f"{first} --version"]},
        )
    return f"ran {command}"


@server.tool(description="Add a tool and announce the change to subscribers.")
async def grow(ctx: Context) -> str:
    name = f"grown_{len(server._tool_manager.list_tools())}"
    server.add_tool(lambda: "new", name=name, description="Added at run time.")
    await ctx.notify_tools_changed()
    return name


@server.resource("test://greeting", description="A greeting", mime_type="text/plain")
def greeting() -> str:
    return "hello from a resource"


@server.resource("test://items/{item}", description="One item")
def item(item: str) -> str:
    return f"item {item}"


@server.prompt(description="Greet someone by name.")
def greet(name: str) -> str:
    return f"Please greet {name} warmly."


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif len(sys.argv) > 2 and sys.argv[1] == "sse":
        server.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
