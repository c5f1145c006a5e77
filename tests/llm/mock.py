"""In-process provider answers through `httpx.MockTransport`: a whole JSON body or an SSE stream.

The adapter under test still builds its real request, goes through httpx, its retry logic and the
SSE decoder; only the socket is replaced. Every request is kept for the test to inspect.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx


class Answers:
    """Replies served in order; `requests` holds what the adapter sent (body parsed)."""

    def __init__(self) -> None:
        self.replies: list[httpx.Response] = []
        self.requests: list[httpx.Request] = []

    def json(self, body: Any, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self.replies.append(httpx.Response(status, json=body, headers=headers))

    def sse(self, events: Sequence[Any]) -> None:
        """Each event a dict (sent as `data: <json>`) or a raw `data` string such as [DONE]."""
        lines = []
        for event in events:
            data = event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)
            lines.append(f"data: {data}\n\n")
        self.raw_sse("".join(lines).encode())

    def raw_sse(self, body: bytes) -> None:
        headers = {"content-type": "text/event-stream"}
        self.replies.append(httpx.Response(200, content=body, headers=headers))

    def bodies(self) -> list[Any]:
        return [json.loads(r.content) for r in self.requests]

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if not self.replies:
            return httpx.Response(500, json={"error": {"message": "no reply queued"}})
        return self.replies.pop(0)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self._handle))


WEB_SEARCH_RESULT: dict[str, Any] = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [
        {
            "type": "web_search_result",
            "url": "https://yr.no",
            "title": "Yr",
            "encrypted_content": "e",
        }
    ],
}


def anthropic_stream(middle: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An Anthropic stream: `message_start`, the `middle` events, the text "Sunny.", the end."""
    start = {
        "type": "message_start",
        "message": {
            "id": "m",
            "role": "assistant",
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        },
    }
    text = [
        {"type": "content_block_start", "index": 9, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 9,
            "delta": {"type": "text_delta", "text": "Sunny."},
        },
        {"type": "content_block_stop", "index": 9},
    ]
    end = [
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 5},
        },
        {"type": "message_stop"},
    ]
    return [start, *middle, *text, *end]
