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


def recall(vectors: np.ndarray, queries: np.ndarray) -> tuple[float, QuantizedSlots]:
    """The share of the exact top `WANTED` that the copy's candidates, scored exactly, find."""
    matrix = VectorMatrix(vectors.shape[1])
    matrix.add(list(range(len(vectors))), ["a"] * len(vectors), vectors)
    scan = QuantizedSlots(vectors)
    everyone = np.ones(len(vectors), bool)
    found = 0
    for query in queries:
        exact = {rowid for rowid, _ in matrix.search(query, WANTED, "a")}
        slots = scan.best_slots(query, everyone, WANTED)
        assert len(slots) == min(scan.rescore * WANTED, len(vectors))
        found += len(exact & {rowid for rowid, _ in matrix.rescored(query, slots, WANTED)})
    return found / (WANTED * len(queries)), scan


def test_real_sentences_are_scanned_by_their_principal_components() -> None:
    sentences = lee_sentences()
    assert len(sentences) > 2_000
    vectors = np.asarray(load_embedder("wordllama").embed(sentences), np.float32)
    axes = principal_axes(vectors)
    assert axes is not None
    center, kept = axes
    assert center.shape == (256,) and kept.shape[0] == 256 and kept.shape[1] <= 128
    share, scan = recall(vectors[200:], vectors[:200])
    print(f"\nLee sentences: {kept.shape[1]} of 256 dimensions, recall@{WANTED} {share:.4f}")
    assert scan.rescore == PROJECTED_RESCORE
    assert share >= 0.99


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
    share, scan = recall(vectors[100:], vectors[:100])
    print(f"\nChinese sentences: rescore x{scan.rescore}, recall@{WANTED} {share:.4f}")
    assert share >= 0.99


def test_vectors_without_a_few_main_directions_keep_every_dimension() -> None:
    """Isotropic vectors (no few components hold `KEPT_VARIANCE`), too few rows to tell, or too
    few dimensions to halve: the copy is of the vectors, with `RESCORE` candidates per hit."""
    rng = np.random.default_rng(7)
    isotropic = rng.standard_normal((4_000, 256)).astype(np.float32)
    assert principal_axes(isotropic) is None
    assert principal_axes(isotropic[:100]) is None
    assert principal_axes(rng.standard_normal((4_000, 64)).astype(np.float32)) is None
    assert QuantizedSlots(isotropic).rescore == RESCORE
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
