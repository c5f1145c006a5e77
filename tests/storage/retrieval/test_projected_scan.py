"""The int8 copy a graph build is searched through holds the vectors' principal components when
a few of them keep most of the variance (`principal_axes`): half the bytes to scan at 256
dimensions, so the search during a build costs less. Its candidates, scored exactly, must
still find what an exact scan finds: on real text embedded by the default embedder (gensim's
test data: the Lee background corpus cut into sentences, and its 500 Wikipedia articles, stemmed,
in chunks of 16 words, where random axes find 0.94 of the 100 nearest), in Chinese, and in a
store whose large collections or halves differ along axes the rest leaves out.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from toolweave.storage.retrieval import load_embedder
from toolweave.storage.retrieval._running_build import RunningBuild
from toolweave.storage.retrieval.vectors import (
    PROJECTED_CANDIDATES,
    PROJECTED_RESCORE,
    RESCORE,
    QuantizedSlots,
    VectorMatrix,
    principal_axes,
)

WANTED = 10


def gensim_data() -> Path:
    spec = importlib.util.find_spec("gensim")
    assert spec is not None and spec.submodule_search_locations, "pip install gensim (dev extra)"
    return Path(next(iter(spec.submodule_search_locations))) / "test" / "test_data"


def lee_sentences() -> list[str]:
    text = (gensim_data() / "lee_background.cor").read_bytes().decode("latin1")
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s) > 30]


def wikipedia_chunks() -> list[str]:
    words = (gensim_data() / "head500.noblanks.cor").read_text().split()
    return [" ".join(words[i : i + 16]) for i in range(0, len(words), 16)]


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
    scan = QuantizedSlots(vectors, np.array([matrix.code(name) for name in names]))
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


def test_wikipedia_chunks_keep_their_nearest_through_the_projection() -> None:
    """20k chunks: 1,000 candidates are 5% of the store, so the axes must be the right ones
    (random axes of the same number find 0.94 of the 100 nearest)."""
    chunks = wikipedia_chunks()
    assert len(chunks) > 20_000
    vectors = np.asarray(load_embedder("wordllama").embed(chunks), np.float32)
    share, scan = recall(vectors, vectors[:: len(vectors) // 100][:100], wanted=100)
    print(f"\nWikipedia chunks: recall@100 {share:.4f}")
    assert scan.candidates(100) == PROJECTED_CANDIDATES
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
    scan = QuantizedSlots(isotropic)
    assert scan.candidates(WANTED) == RESCORE * WANTED and scan.candidates(0) == 0


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


def apart(rows: int, seed: int) -> tuple[np.ndarray, list[str]]:
    """6,000 rows of collection "b" spread along 64 axes, and `rows` of collection "a" that
    differ from each other only along 160 others, each with a tenth of the spread."""
    rng = np.random.default_rng(seed)
    axes = np.linalg.qr(rng.standard_normal((256, 256)))[0]
    store = rng.standard_normal((6_000, 64)) @ axes[:, :64].T
    small = 4.0 * axes[:, 255] + 0.3 * rng.standard_normal((rows, 160)) @ axes[:, 64:224].T
    vectors = np.concatenate([small, store]).astype(np.float32)
    vectors += 0.01 * rng.standard_normal(vectors.shape).astype(np.float32)
    return vectors, ["a"] * rows + ["b"] * len(store)


def test_a_small_collection_apart_from_the_store_is_scored_whole() -> None:
    """A collection of fewer than `PROJECTED_CANDIDATES` rows is not checked (the axes may
    leave out what tells its rows apart): all of its rows are candidates, scored exactly."""
    vectors, names = apart(400, 11)
    projected = principal_axes(vectors, [0 if name == "a" else 1 for name in names])
    assert projected is not None and projected[1].shape[1] == 64
    share, _ = recall(vectors, vectors[:50] + 0.05, collections=names)
    assert share == 1.0


def test_a_large_collection_apart_from_the_store_keeps_its_own_axes() -> None:
    """A collection of 5,000 rows that differs from the store along axes the store's variance
    leaves out: the copy keeps enough axes for it too (here: every dimension, as 64 + 160 are
    more than half), so it is found; ranked through the store's 64 axes alone it would not be."""
    vectors, names = apart(5_000, 12)
    codes = np.array([0 if name == "a" else 1 for name in names])
    assert principal_axes(vectors) is not None  # the store alone is well described by 64 axes
    assert principal_axes(vectors, codes) is None
    share, _ = recall(vectors, vectors[:50] + 0.05, collections=names)
    assert share >= 0.99


def test_the_axes_come_from_rows_across_the_whole_snapshot() -> None:
    """The first 10,000 rows lie along 64 axes, the next 10,000 along 64 others: axes taken from
    the first rows only would miss the second half's."""
    rng = np.random.default_rng(13)
    axes = np.linalg.qr(rng.standard_normal((256, 256)))[0]
    halves = [rng.standard_normal((10_000, 64)) @ axes[:, i : i + 64].T for i in (0, 64)]
    vectors = np.concatenate(halves).astype(np.float32)
    vectors += 0.01 * rng.standard_normal(vectors.shape).astype(np.float32)
    projected = principal_axes(vectors)
    assert projected is not None and projected[1].shape[1] == 128
    share, _ = recall(vectors, vectors[-50:] + 0.01, wanted=100)
    assert share >= 0.99


def test_the_build_time_search_through_a_projected_copy_finds_the_exact_nearest() -> None:
    """`RunningBuild.search` over 20,000 vectors (three blocks of the copy) in two collections,
    with no graph yet and with the graph ending inside the second and third blocks: exact
    scores, and every one of the exact 10 nearest that the copy holds (the slots the graph does
    not; row ids are slots here)."""
    rng = np.random.default_rng(14)
    basis = np.linalg.qr(rng.standard_normal((256, 96)))[0]
    vectors = (rng.standard_normal((20_000, 96)) @ basis.T).astype(np.float32)
    vectors += 0.05 * rng.standard_normal(vectors.shape).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    matrix = VectorMatrix(256)
    matrix.add(list(range(len(vectors))), ["a" if n % 3 else "b" for n in range(20_000)], vectors)
    rowids, _, snapshot, names = matrix.snapshot()
    running = RunningBuild(matrix, rowids, snapshot, names)
    assert running.scan.candidates(10) == PROJECTED_CANDIDATES  # the copy is projected
    queries = vectors[rng.integers(0, 20_000, 30)] + 0.05 * rng.standard_normal((30, 256))
    for built in (0, 8_192 + 100, 16_384 + 8):
        running.add_chunk(built)
        found = wanted = 0
        for query in queries.astype(np.float32):
            for collection in ("a", "b"):
                hits, _ = running.search(query, 10, collection)
                scores = dict(matrix.search(query, 20_000, collection))
                assert all(scores[rowid] == score for rowid, score in hits)
                exact = {rowid for rowid, _ in matrix.search(query, 10, collection)}
                in_copy = {rowid for rowid in exact if rowid >= built}
                found += len(in_copy & {rowid for rowid, _ in hits})
                wanted += len(in_copy)
        assert wanted and found / wanted >= 0.99, built


def test_a_large_collection_between_the_sampled_rows_is_checked() -> None:
    """The apart collection's rows are written between the others' (slots 1, 4, 7, ... of
    20,000, where an evenly spaced sample of the store takes 0, 3, 6, ...): it is checked on
    its own rows, so the copy keeps every dimension and it is found."""
    rng = np.random.default_rng(15)
    axes = np.linalg.qr(rng.standard_normal((256, 256)))[0]
    vectors = (rng.standard_normal((20_000, 64)) @ axes[:, :64].T).astype(np.float32)
    apart_slots = np.arange(1, 20_000, 3)
    vectors[apart_slots] = 4.0 * axes[:, 255] + 0.3 * (
        rng.standard_normal((len(apart_slots), 160)) @ axes[:, 64:224].T
    )
    names = ["b"] * 20_000
    for slot in apart_slots:
        names[slot] = "a"
    codes = np.array([0 if name == "a" else 1 for name in names])
    assert principal_axes(vectors, codes) is None
    share, _ = recall(vectors, vectors[apart_slots[:50]] + 0.05, collections=names)
    assert share >= 0.99


def test_removed_rows_do_not_choose_the_axes() -> None:
    """10,000 removed rows along 64 axes and 10,000 live rows along 128 others: the axes are the
    live rows' (from the removed rows', the live ones would be ranked by noise)."""
    rng = np.random.default_rng(16)
    axes = np.linalg.qr(rng.standard_normal((256, 256)))[0]
    removed = 3.0 * rng.standard_normal((10_000, 64)) @ axes[:, :64].T
    live = rng.standard_normal((10_000, 128)) @ axes[:, 64:192].T
    vectors = np.concatenate([removed, live]).astype(np.float32)
    vectors += 0.01 * rng.standard_normal(vectors.shape).astype(np.float32)
    codes = np.array([-1] * 10_000 + [0] * 10_000)
    projected = principal_axes(vectors, codes)
    assert projected is not None and projected[1].shape[1] == 128
    along_live = np.linalg.norm(axes[:, 64:192].T @ projected[1]) ** 2
    assert along_live > 0.99 * 128  # every kept axis lies in the live rows' subspace


def test_a_collection_of_identical_rows_leaves_the_projection_on() -> None:
    """1,500 copies of one memory in a collection of their own: any order of them is right, so
    they do not turn the projection off for the store."""
    vectors, _ = apart(400, 17)
    vectors = np.concatenate([np.repeat(vectors[-1:], 1_500, axis=0), vectors[400:]])
    codes = np.array([0] * 1_500 + [1] * (len(vectors) - 1_500))
    projected = principal_axes(vectors, codes)
    assert projected is not None and projected[1].shape[1] == 64


def test_a_build_passes_the_collections_of_its_snapshot() -> None:
    """`RunningBuild` makes its copy with the snapshot's collections: a large collection apart
    from the store's axes makes it keep every dimension (4 x k candidates)."""
    vectors, names = apart(5_000, 18)
    matrix = VectorMatrix(256)
    matrix.add(list(range(len(vectors))), names, vectors)
    rowids, _, snapshot, code_names = matrix.snapshot()
    assert RunningBuild(matrix, rowids, snapshot, code_names).scan.candidates(10) == RESCORE * 10
