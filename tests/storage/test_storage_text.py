"""Text utilities and embedders: one CJK class, both token estimates, lazy heavy imports."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from toolweave.agent import estimate_tokens as agent_estimate_tokens
from toolweave.storage import EmbedderUnavailable, estimate_tokens, load_embedder, segment
from toolweave.storage.text import fts5_match, like_pattern, query_terms


def test_token_estimates_count_each_cjk_character_once() -> None:
    assert agent_estimate_tokens is estimate_tokens
    assert estimate_tokens("") == 0
    assert estimate_tokens("机器学习") == 4
    assert estimate_tokens("machine learning is fun", other="words") == 4
    assert estimate_tokens("我喜欢 machine learning", other="words") == 5
    assert estimate_tokens('{"a":1,"b":2}') == 4  # JSON: characters / 4, not words


def test_segmentation_finds_chinese_words_and_their_parts() -> None:
    words = segment("我喜欢机器学习和Python编程")
    assert {"喜欢", "机器", "学习", "python", "编程"} <= set(words)
    assert {"清华", "大学", "清华大学"} <= set(segment("我来到北京清华大学"))
    assert segment("Hello, World!") == ["hello", "world"]
    assert query_terms("学习 学习 python") == ["学习", "python"]


def test_query_syntax_is_quoted_not_interpreted() -> None:
    assert fts5_match(['a"b', "NEAR"]) == '"a""b" OR "NEAR"'
    assert like_pattern("50%_x\\") == "%50\\%\\_x\\\\%"


def test_embedders_give_unit_float32_rows_and_clear_errors() -> None:
    for spec in ("hash", "hash:32", "auto"):
        embedder = load_embedder(spec)
        vectors = embedder.embed(["机器学习", "machine learning"])
        assert vectors.shape == (2, embedder.dim) and vectors.dtype == np.float32
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert load_embedder("auto").dim == 256
    for bad, message in [
        ("nope", "unknown"),
        ("hash:x", "hash:<dim>"),
        ("openai-compat:http://x", "openai-compat:<url>#<model>"),
    ]:
        with pytest.raises(EmbedderUnavailable, match=message):
            load_embedder(bad)


def test_storage_and_memory_imports_load_no_heavy_dependency() -> None:
    heavy = ("numpy", "jieba", "wordllama", "psycopg", "qdrant_client", "networkx")
    code = (
        "import sys, toolweave, toolweave.storage, toolweave.memory\n"
        f"print(sorted(m for m in {heavy!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
