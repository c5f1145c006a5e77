"""`openai-compat:<url>#<model>` against a real HTTP endpoint on loopback speaking the OpenAI
embeddings wire format (answers out of order, batches, bearer key, errors)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from tests.outage_embedder import answer_json
from toolweave.storage import EmbeddingFailed
from toolweave.storage.retrieval import load_embedder
from toolweave.storage.retrieval.embedders import OpenAICompatEmbedder

SEEN: list[dict[str, Any]] = []


class Embeddings(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        SEEN.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if body["model"] == "broken":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b'{"error": "model exploded"}')
            return
        data = [
            {"index": i, "embedding": [float(len(text)), float(i + 1), 1.0], "object": "embedding"}
            for i, text in enumerate(body["input"])
        ]
        answer_json(self, {"data": list(reversed(data)), "model": body["model"]})

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Embeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    SEEN.clear()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_vectors_come_back_in_input_order_normalised_and_batched(
    endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLWEAVE_EMBEDDINGS_API_KEY", "sk-test")
    embedder = load_embedder(f"openai-compat:{endpoint}#bge-m3")
    assert isinstance(embedder, OpenAICompatEmbedder)
    embedder.batch_size = 2
    vectors = embedder.embed(["一", "二三", "four"])
    assert vectors.shape == (3, 3) and embedder.dim == 3
    expected = np.array([[1, 1, 1], [2, 2, 1], [4, 1, 1]], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    assert np.allclose(vectors, expected)
    assert [s["input"] for s in SEEN] == [["一", "二三"], ["four"]]
    assert {s["path"] for s in SEEN} == {"/v1/embeddings"}
    assert {s["auth"] for s in SEEN} == {"Bearer sk-test"}
    assert embedder.name == f"openai-compat:{endpoint}#bge-m3"


def test_a_failing_endpoint_is_a_clear_error(endpoint: str) -> None:
    embedder = load_embedder(f"openai-compat:{endpoint}#broken")
    with pytest.raises(EmbeddingFailed, match="500"):
        embedder.embed(["x"])
