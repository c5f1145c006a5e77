"""A loopback OpenAI-compatible server that replays scripted chat completions.

It speaks the real wire format of `/v1/chat/completions` (a JSON `chat.completion`, or SSE
`chat.completion.chunk`s with tool-call fragments by `index`, a usage chunk and `[DONE]`) and
records every request body, so tests drive the real `OpenAIChatModel` end to end.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted completion: text and/or tool calls `(id, name, arguments-dict)`."""

    content: str | None = None
    tool_calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    prompt_tokens: int = 10
    completion_tokens: int = 5


class FakeOpenAI:
    """`with FakeOpenAI(replies) as server:` then point a model at `server.base_url`.

    `ignore_stream=True` answers streaming requests with one JSON body, as some
    OpenAI-compatible servers do.
    """

    def __init__(self, replies: list[Reply], *, ignore_stream: bool = False) -> None:
        self.replies = list(replies)
        self.ignore_stream = ignore_stream
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                if self.path != "/v1/chat/completions":
                    self.send_error(404)
                    return
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                with fake._lock:
                    fake.requests.append(body)
                    reply = fake.replies.pop(0) if fake.replies else None
                if reply is None:
                    self._json(400, {"error": {"message": "fake server: script exhausted"}})
                elif body.get("stream") and not fake.ignore_stream:
                    self._stream(body, reply)
                else:
                    self._json(200, _completion(body["model"], reply))

            def _json(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: dict[str, Any], reply: Reply) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for chunk in _chunks(body, reply):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                self.wfile.write(b"data: [DONE]\n\n")

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def _usage(reply: Reply) -> dict[str, int]:
    total = reply.prompt_tokens + reply.completion_tokens
    return {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": total,
    }


def _completion(model: str, reply: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": cid, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for cid, n, a in reply.tool_calls
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": _usage(reply),
    }


def _chunks(body: dict[str, Any], reply: Reply) -> list[dict[str, Any]]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    out = [chunk({"role": "assistant", "content": ""})]
    words = (reply.content or "").split(" ")
    out += [
        chunk({"content": w + (" " if i < len(words) - 1 else "")})
        for i, w in enumerate(words)
        if reply.content
    ]
    for index, (cid, name, args) in enumerate(reply.tool_calls):
        text = json.dumps(args)
        half = len(text) // 2
        head = {"index": index, "id": cid, "type": "function"}
        out.append(
            chunk({"tool_calls": [{**head, "function": {"name": name, "arguments": text[:half]}}]})
        )
        out.append(
            chunk({"tool_calls": [{"index": index, "function": {"arguments": text[half:]}}]})
        )
    out.append(chunk({}, "tool_calls" if reply.tool_calls else "stop"))
    if body.get("stream_options", {}).get("include_usage"):
        out.append({**chunk({}), "choices": [], "usage": _usage(reply)})
    return out
