"""The int8 copy a graph build is searched through holds the vectors' principal components when
a few of them keep most of the variance (`principal_axes`): half the bytes to scan at 256
dimensions, so the search during a build costs less. Its candidates, scored again exactly, must
still find what an exact scan finds, on real text (gensim's copy of the Lee background corpus,
news articles cut into sentences) embedded by the default embedder, in English and in Chinese.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from toolweave.storage.retrieval import load_embedder
from toolweave.storage.retrieval.vectors import (
    KEPT_VARIANCE,
    PROJECTED_CANDIDATES,
    PROJECTED_RESCORE,
    RESCORE,
    QuantizedSlots,
    VectorMatrix,
    principal_axes,
)

WANTED = 10


def lee_sentences() -> list[str]:
    spec = importlib.util.find_spec("gensim")
    assert spec is not None and spec.submodule_search_locations, "pip install gensim (dev extra)"
    data = Path(next(iter(spec.submodule_search_locations))) / "test" / "test_data"
    text = (data / "lee_background.cor").read_bytes().decode("latin1")
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s) > 30]


def recall(
    vectors: np.ndarray,
    queries: np.ndarray,
    wanted: int = WANTED,
    collections: list[str] | None = None,
) -> tuple[float, QuantizedSlots]:
    """The share of the exact `wanted` nearest (in collection "a") that the copy's candidates,
    scored exactly, find."""
    names = collections or ["a"] * len(vectors)
    matrix = VectorMatrix(vectors.shape[1])
    matrix.add(list(range(len(vectors))), names, vectors)
    scan = QuantizedSlots(vectors)
    members = matrix.members("a", 0, len(vectors))
    found = 0
    for query in queries:
        exact = {rowid for rowid, _ in matrix.search(query, wanted, "a")}
        slots = scan.best_slots(query, members, wanted)
        assert len(slots) == min(scan.candidates(wanted), int(members.sum()))
        found += len(exact & {rowid for rowid, _ in matrix.rescored(query, slots, wanted)})
    return found / (wanted * len(queries)), scan


def test_real_sentences_are_scanned_by_their_principal_components() -> None:
    sentences = lee_sentences()
    assert len(sentences) > 2_000
    vectors = np.asarray(load_embedder("wordllama").embed(sentences), np.float32)
    axes = principal_axes(vectors)
    assert axes is not None
    center, kept = axes
    assert center.shape == (256,) and kept.shape[0] == 256 and kept.shape[1] <= 128
    share, scan = recall(vectors[200:], vectors[:200])
    wide, _ = recall(vectors[200:], vectors[:200], wanted=100)
    print(f"\nLee: {kept.shape[1]} of 256 dimensions, recall@{WANTED} {share:.4f}, @100 {wide:.4f}")
    assert scan.candidates(WANTED) == PROJECTED_CANDIDATES
    assert scan.candidates(200) == PROJECTED_RESCORE * 200
    assert share >= 0.99 and wide >= 0.99


def test_chinese_sentences_are_found_through_the_projection_too() -> None:
    topics = ["天气", "股票市场", "足球比赛", "人工智能", "中医药", "高铁", "古诗词", "手机支付"]
    verbs = ["今天讨论了", "新闻报道了", "专家分析了", "学生学习了", "我们研究了", "公司发布了"]
    places = ["在北京", "在上海", "在广州", "在成都", "在西安", "在杭州", "在武汉"]
    sentences = [
        f"{place}{verb}{topic}的{detail}"
        for topic in topics
        for verb in verbs
        for place in places
        for detail in ("最新进展", "历史", "未来发展", "主要问题", "影响")
    ]
    vectors = np.asarray(load_embedder("wordllama").embed(sentences), np.float32)
    share, _ = recall(vectors[100:], vectors[:100])
    print(f"\nChinese sentences: recall@{WANTED} {share:.4f}")
    assert share >= 0.99


def test_vectors_without_a_few_main_directions_keep_every_dimension() -> None:
    """Isotropic vectors (no few components hold `KEPT_VARIANCE`), too few rows to tell, or too
    few dimensions to halve: the copy is of the vectors, with `RESCORE` candidates per hit."""
    rng = np.random.default_rng(7)
    isotropic = rng.standard_normal((4_000, 256)).astype(np.float32)
    assert principal_axes(isotropic) is None
    assert principal_axes(isotropic[:100]) is None
    assert principal_axes(rng.standard_normal((4_000, 64)).astype(np.float32)) is None
    assert QuantizedSlots(isotropic).candidates(WANTED) == RESCORE * WANTED
    assert KEPT_VARIANCE < 1


@pytest.mark.parametrize("dims", [64, 128])
def test_vectors_near_a_subspace_are_projected_onto_it(dims: int) -> None:
    """Vectors that lie close to a `dims`-dimensional subspace keep that many components, and the
    projected copy ranks them as the vectors themselves do."""
    rng = np.random.default_rng(dims)
    basis = np.linalg.qr(rng.standard_normal((256, dims)))[0]
    vectors = (rng.standard_normal((3_000, dims)) @ basis.T).astype(np.float32)
    vectors += 0.05 * rng.standard_normal(vectors.shape).astype(np.float32)
    axes = principal_axes(vectors)
    assert axes is not None and axes[1].shape == (256, dims)
    share, _ = recall(vectors[100:], vectors[:100])
    assert share >= 0.99


def test_a_small_collection_apart_from_the_store_is_still_found() -> None:
    """A collection of a few hundred rows that differs from the rest of the store only along
    axes the store's variance leaves out (as Chinese memories beside many English ones): the
    projection cannot rank its rows, so at least `PROJECTED_CANDIDATES` of them are scored
    exactly whatever the number wanted."""
    rng = np.random.default_rng(11)
    axes = np.linalg.qr(rng.standard_normal((256, 256)))[0]
    store = rng.standard_normal((6_000, 64)) @ axes[:, :64].T
    small = 4.0 * axes[:, 200] + 0.3 * rng.standard_normal((400, 64)) @ axes[:, 64:128].T
    vectors = np.concatenate([small, store]).astype(np.float32)
    vectors += 0.01 * rng.standard_normal(vectors.shape).astype(np.float32)
    projected = principal_axes(vectors)
    assert projected is not None and projected[1].shape[1] <= 128
    names = ["a"] * len(small) + ["b"] * len(store)
    share, _ = recall(vectors, vectors[:50] + 0.05, collections=names)
    assert share == 1.0
