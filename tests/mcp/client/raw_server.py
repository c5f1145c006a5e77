"""A tiny hand-written MCP stdio server (2025-11-25 handshake only) for edge cases and benchmarks.

It is deliberately raw so tests control the wire exactly: paginated listings, a tool that hangs
until cancelled and records the `notifications/cancelled` it got, tools that kill the process
mid-call (one leaving a child that holds stdout open), non-JSON noise and very long lines on
stdout, and a structured result that violates its own output schema.
Usage: raw_server.py [--page-size N] [--stubborn] [--twins] (stubborn: ignores SIGTERM and stays
alive after stdin closes, so only SIGKILL stops it; twins: adds a tool whose provider-safe name
collides with another's).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from typing import Any

PAGE = int(sys.argv[sys.argv.index("--page-size") + 1]) if "--page-size" in sys.argv else 2

TOOLS: list[dict[str, Any]] = [
    {"name": "echo", "description": "Echo the text.", "inputSchema": {"type": "object"}},
    {"name": "hang", "description": "Wait until cancelled.", "inputSchema": {"type": "object"}},
    {"name": "cancelled", "description": "Cancelled ids.", "inputSchema": {"type": "object"}},
    {"name": "die", "description": "Exit mid-call.", "inputSchema": {"type": "object"}},
    {"name": "orphan", "description": "Exit, child on stdout.", "inputSchema": {"type": "object"}},
    {"name": "big", "description": "A long line.", "inputSchema": {"type": "object"}},
    {"name": "noise", "description": "Garbage first.", "inputSchema": {"type": "object"}},
    {"name": "grow", "description": "Add a tool.", "inputSchema": {"type": "object"}},
    {
        "name": "bad.structured",
        "description": "Structured content that breaks its own schema.",
        "inputSchema": {"type": "object"},
        "outputSchema": {
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"],
        },
    },
]
if "--twins" in sys.argv:  # a name that collides with `bad.structured` once made provider-safe
    TOOLS.append({"name": "bad_structured", "inputSchema": {"type": "object"}})
RESOURCES = [{"uri": f"raw://r/{i}", "name": f"r{i}"} for i in range(5)]

out = sys.stdout.buffer
cancelled: list[Any] = []
running: dict[Any, asyncio.Task[None]] = {}


def write(message: dict[str, Any]) -> None:
    out.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
    out.flush()


def page(items: list[dict[str, Any]], key: str, params: dict[str, Any]) -> dict[str, Any]:
    start = int(params.get("cursor") or 0)
    result: dict[str, Any] = {key: items[start : start + PAGE]}
    if start + PAGE < len(items):
        result["nextCursor"] = str(start + PAGE)
    return result


async def call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    if name == "echo":
        return {"content": [{"type": "text", "text": str(args.get("text", ""))}]}
    if name == "hang":
        await asyncio.Event().wait()
    if name == "cancelled":
        return {"content": [{"type": "text", "text": json.dumps(cancelled)}]}
    if name == "die":
        os._exit(3)
    if name == "orphan":  # exit, leaving a child that keeps our stdout open
        child = subprocess.Popen(["sleep", "60"])  # noqa: ASYNC220 - the process dies next
        print(f"orphan pid {child.pid}", file=sys.stderr, flush=True)
        os._exit(4)
    if name == "big" and "depth" in args:  # a result nested far deeper than any real answer
        depth = int(args["depth"])
        return json.loads(
            '{"content":[],"structuredContent":' + '{"a":' * depth + "1" + "}" * depth + "}"
        )
    if name == "big":
        return {"content": [{"type": "text", "text": "x" * int(args.get("size", 1000))}]}
    if name == "noise":
        out.write(b"this is not json\n" * int(args.get("lines", 1)))
        return {"content": [{"type": "text", "text": "after noise"}]}
    if name == "grow":
        TOOLS.append({"name": f"grown{len(TOOLS)}", "inputSchema": {"type": "object"}})
        write({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        return {"content": [{"type": "text", "text": "grown"}]}
    if name == "bad.structured":
        return {"content": [], "structuredContent": {"count": "many"}}
    return {"content": [{"type": "text", "text": f"unknown tool {name}"}], "isError": True}


async def handle(message: dict[str, Any]) -> None:
    method, params, rid = message.get("method"), message.get("params") or {}, message.get("id")
    try:
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {"listChanged": True}, "resources": {}},
                "serverInfo": {"name": "raw", "version": "0.1"},
            }
        elif method == "tools/list":
            result = page(TOOLS, "tools", params)
        elif method == "resources/list":
            result = page(RESOURCES, "resources", params)
        elif method == "tools/call":
            result = await call(params["name"], params.get("arguments") or {})
        elif method == "ping":
            result = {}
        else:
            write({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})
            return
        if (params.get("arguments") or {}).get("id_last"):  # the TypeScript SDK's key order
            write({"jsonrpc": "2.0", "result": result, "id": rid})
        else:
            write({"jsonrpc": "2.0", "id": rid, "result": result})
    except asyncio.CancelledError:
        pass
    finally:
        running.pop(rid, None)


async def main() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 26)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    print("raw server ready", file=sys.stderr, flush=True)
    while line := await reader.readline():
        message = json.loads(line)
        if "method" not in message:
            continue
        if message["method"] == "notifications/cancelled":
            rid = message["params"]["requestId"]
            cancelled.append(rid)
            task = running.get(rid)
            if task is not None:
                task.cancel()
        elif "id" in message:
            if message["method"] in ("tools/call",):
                running[message["id"]] = asyncio.ensure_future(handle(message))
            else:
                await handle(message)
    if "--stubborn" in sys.argv:
        await asyncio.Event().wait()


if __name__ == "__main__":
    if "--stubborn" in sys.argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    asyncio.run(main())
