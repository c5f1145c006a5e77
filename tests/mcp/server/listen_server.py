"""A server whose tools change at run time: the peer of the `subscriptions/listen` tests.

`grow` publishes a new tool `extra` and announces it; `touch` and `reshape` announce resource and
prompt/resource-list changes. Runs over stdio, or over Streamable HTTP with `--port N`.
"""

from __future__ import annotations

import sys

from toolweave.mcp import MCPServer

server = MCPServer("listen-test", "1.0.0")


@server.tool
async def grow() -> str:
    """Publish the tool `extra` and tell listening clients that tools/list changed."""
    if server.tool_entry("extra") is None:

        @server.tool
        def extra() -> str:
            """Only exists after grow."""
            return "extra!"

    await server.notify_tools_changed()
    return "grown"


@server.tool
async def touch(uri: str) -> str:
    """Announce that the resource at `uri` changed."""
    await server.notify_resource_updated(uri)
    return "touched"


@server.tool
async def reshape() -> str:
    """Announce that the prompt and resource lists changed."""
    await server.notify_prompts_changed()
    await server.notify_resources_changed()
    return "reshaped"


@server.resource("docs://readme", mime_type="text/markdown")
def readme() -> str:
    return "# listen test"


@server.prompt
def hello(name: str) -> str:
    """Greet someone."""
    return f"Say hello to {name}"


if __name__ == "__main__":
    if "--port" in sys.argv:
        server.run("http", port=int(sys.argv[sys.argv.index("--port") + 1]))
    else:
        server.run()
