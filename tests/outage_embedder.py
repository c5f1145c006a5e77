"""An OpenAI-compatible embeddings endpoint on loopback that can be stopped (connection refused)
and started again on the same port, or made to answer 503 a number of times: the embedder outage
the retrieval, knowledge-base and memory tests recover from. Its vectors are the hash embedder's.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from toolweave.storage.retrieval import EmbedRetry, HashEmbedder

HASH = HashEmbedder(64)
NO_WAIT = EmbedRetry(attempts=2, backoff=0.0, recheck=0.0)
"""Retry once without waiting, and try a failed embedder again on the next call."""


class Embeddings(BaseHTTPRequestHandler):
    """The OpenAI embeddings wire format over the hash embedder; `fail_next` requests answer
    503 first."""

    fail_next = 0
    calls = 0

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).calls += 1
        if type(self).fail_next > 0:
            type(self).fail_next -= 1
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        vectors = HASH.embed(body["input"])
        data = [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
        answer_json(self, {"data": data, "model": body["model"]})

    def log_message(self, *args: Any) -> None:
        return None


def answer_json(handler: BaseHTTPRequestHandler, body: Any) -> None:
    """Send `body` as a 200 JSON response."""
    payload = json.dumps(body).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(payload)))
    handler.end_headers()
    handler.wfile.write(payload)


class Endpoint:
    """An embeddings server that can be stopped (connection refused) and started again."""

    def __init__(self) -> None:
        self.server: ThreadingHTTPServer | None = None
        self.port = 0
        self.up()
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def up(self) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Embeddings)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def down(self) -> None:
        assert self.server is not None
        self.server.shutdown()
        self.server.server_close()
        self.server = None


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    Embeddings.fail_next = Embeddings.calls = 0
    served = Endpoint()
    yield served
    if served.server is not None:
        served.down()


def spec(endpoint: Endpoint) -> str:
    """The embedder spec that names this endpoint."""
    return f"openai-compat:{endpoint.url}#hash64"
