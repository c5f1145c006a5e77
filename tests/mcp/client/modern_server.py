"""A hand-written stdio MCP server that speaks only 2026-07-28 and may start slowly.

`--start-delay SECONDS` makes it read nothing for that long after it is spawned (a server
loading a model or a database), so a client's `server/discover` and fallback `initialize` wait
in its stdin. It answers `initialize` with -32022 (it is committed to the stateless revision),
as servers built on the official SDK v2 do, and lists a tool, a resource, a template and a
prompt carrying every field of the revision (icons, `execution`, annotations, `_meta`, a key
no client models yet) so clients can be compared field by field.
Usage: modern_server.py [--start-delay SECONDS]
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

VERSION = "2026-07-28"
ICON = {"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}
TOOLS = [
    {
        "name": "research",
        "title": "Research",
        "description": "A long research query.",
        "inputSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"topic": {"type": "string", "x-mcp-header": "Topic"}},
            "required": ["topic"],
        },
        "icons": [ICON],
        "execution": {"taskSupport": "optional"},
        "annotations": {"readOnlyHint": True, "openWorldHint": True},
        "_meta": {"example.com/owner": "research-team"},
        "x-future-field": {"kept": True},
    }
]
RESOURCES = [
    {
        "uri": "doc://guide",
        "name": "guide",
        "title": "Guide",
        "mimeType": "text/markdown",
        "size": 42,
        "icons": [ICON],
        "annotations": {"audience": ["user"], "priority": 0.5},
        "_meta": {"example.com/ui": {"sandbox": "strict"}},
    }
]
TEMPLATES = [
    {
        "uriTemplate": "doc://{name}",
        "name": "doc",
        "icons": [ICON],
        "annotations": {"audience": ["assistant"]},
    }
]
PROMPTS = [{"name": "summarise", "icons": [ICON], "arguments": [{"name": "text"}]}]
RESULT = {
    "content": [
        {"type": "text", "text": "done", "annotations": {"audience": ["user"], "priority": 1}},
        {
            "type": "resource_link",
            "uri": "doc://guide",
            "name": "guide",
            "title": "Guide",
            "description": "The guide.",
            "mimeType": "text/markdown",
            "size": 42,
            "annotations": {"priority": 0.2},
            "_meta": {"example.com/link": 1},
        },
    ],
    "_meta": {"example.com/result": "kept"},
}


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method, rid = message.get("method"), message.get("id")
    if rid is None:
        return None
    results: dict[str, Any] = {
        "server/discover": {
            "supportedVersions": [VERSION],
            "capabilities": {"tools": {}, "resources": {}, "prompts": {}},
            "serverInfo": {"name": "modern-server", "version": "1.0.0"},
        },
        "tools/list": {"tools": TOOLS},
        "resources/list": {"resources": RESOURCES},
        "resources/templates/list": {"resourceTemplates": TEMPLATES},
        "prompts/list": {"prompts": PROMPTS},
        "tools/call": RESULT,
        "resources/read": {
            "contents": [
                {"uri": "doc://guide", "text": "# Guide", "_meta": {"example.com/ui": "x"}}
            ]
        },
    }
    if method == "initialize":
        error = {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": [VERSION], "requested": message["params"]["protocolVersion"]},
        }
        return {"jsonrpc": "2.0", "id": rid, "error": error}
    if method not in results:
        error = {"code": -32601, "message": f"Method not found: {method}"}
        return {"jsonrpc": "2.0", "id": rid, "error": error}
    result = {"resultType": "complete", **results[method]}
    if method.endswith("/list") or method == "server/discover":
        result.update(ttlMs=0, cacheScope="private")  # listings say how long they keep
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def main() -> None:
    if "--start-delay" in sys.argv:
        time.sleep(float(sys.argv[sys.argv.index("--start-delay") + 1]))  # the slow start
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
