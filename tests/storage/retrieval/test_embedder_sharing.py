"""`load_embedder` hands one process one model per spec: memory, the knowledge base and tool
search of a host each load their embedder, and `use` or `e5` hold about 100 MB apiece."""

from __future__ import annotations

import gc
import weakref

import pytest

from toolweave.storage.retrieval.embedders import HashEmbedder, _shared_model, load_embedder


@pytest.mark.parametrize("spec", ["wordllama", "minilm", "e5", "use"])
def test_a_local_model_is_shared(spec: str) -> None:
    assert load_embedder(spec) is load_embedder(spec)


def test_the_loader_does_not_keep_a_model_alive() -> None:
    # A spec no other test loads: once its holders let go, the model is freed and the next
    # caller gets a new one (the loader does not pin 100 MB for good).
    first = _shared_model("sharing-test", lambda: HashEmbedder(8))
    assert _shared_model("sharing-test", lambda: HashEmbedder(8)) is first
    held = weakref.ref(first)
    del first
    gc.collect()
    assert held() is None
    assert isinstance(_shared_model("sharing-test", lambda: HashEmbedder(8)), HashEmbedder)


def test_auto_and_wordllama_are_one_model() -> None:
    assert load_embedder("auto") is load_embedder("wordllama")


def test_hash_and_remote_embedders_are_not_shared() -> None:
    assert load_embedder("hash:64") is not load_embedder("hash:64")
    remote = "openai-compat:http://127.0.0.1:9/v1#m"
    assert load_embedder(remote) is not load_embedder(remote)
