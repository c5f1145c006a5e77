"""Raw 2026-07-28 (stateless) requests to a server's ASGI app, headers mirrored as a client must."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx

from toolweave.mcp import MCPServer

VERSION = "2026-07-28"
ALL_CAPS: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
_NAME = {"tools/call": "name", "prompts/get": "name", "tasks/get": "taskId"}
_NAME.update({"tasks/update": "taskId", "tasks/cancel": "taskId", "resources/read": "uri"})


def modern_client(server: MCPServer, **app_options: Any) -> httpx.AsyncClient:
    app = server.asgi_app(**app_options)
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1")


def sse_messages(body: str) -> list[dict[str, Any]]:
    return [
        json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: ") and line[6:]
    ]


class Modern:
    """Sends 2026-07-28 requests with `_meta` and the mirrored headers; ids count up."""

    def __init__(self, http: httpx.AsyncClient, caps: dict[str, Any] | None = None) -> None:
        self.http = http
        self.caps = ALL_CAPS if caps is None else caps
        self.next_id = 100

    async def post(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        caps: dict[str, Any] | None = None,
        meta: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        self.next_id += 1
        body_meta = {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": self.caps if caps is None else caps,
            **(meta or {}),
        }
        params = {**(params or {}), "_meta": body_meta}
        sent = {
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": VERSION,
            "Mcp-Method": method,
        }
        field = _NAME.get(method)
        if field is not None and isinstance(params.get(field), str):
            sent["Mcp-Name"] = params[field]
        sent.update(headers or {})
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        return await self.http.post("/mcp", json=body, headers=sent)

    async def result(self, method: str, params: dict[str, Any] | None = None, **kw: Any) -> Any:
        """The answer's `result` (from a JSON body or the last SSE event); fails on an error."""
        response = await self.post(method, params, **kw)
        message = self.final(response)
        assert "result" in message, message
        return message["result"]

    @staticmethod
    def final(response: httpx.Response) -> dict[str, Any]:
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            answered: dict[str, Any] = [m for m in sse_messages(response.text) if "id" in m][-1]
            return answered
        decoded: dict[str, Any] = response.json()
        return decoded


def b64_header(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="
