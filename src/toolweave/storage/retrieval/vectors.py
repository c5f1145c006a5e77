"""Exact vector search over a numpy matrix held in memory, and its int8 copy for graph builds.

At embedded scale a brute-force dot product beats an approximate index on every count that
matters: 100k 256-dim float32 vectors are 100 MB and one query is a ~3 ms matrix-vector product
on 2 cores, exact, with no build time and no tuning. The matrix grows by doubling, so appends
are amortised O(1); removal clears a row's live flag (its slot is reused on the next rebuild).
Rows are keyed by the store's integer row id and tagged with a collection code, so a search can
be restricted to one collection with a mask instead of a copy.

While a background HNSW build runs (see `_live_vectors`), searches scan `QuantizedSlots`
instead. Right after a bulk ingest nothing is built yet, so searches must read every vector:
100 MB of float32 at 100k 256-dim vectors, which memory traffic (shared with the builder and,
on a busy machine, with everyone else) turns into 10-40 ms. Graph segments searched meanwhile
were no cheaper: on clustered vectors (near-duplicate memories) a 10k-vector segment asked for
the 100 candidates a memory search wants explores most of its graph, about 1 ms each.
`QuantizedSlots` keeps an int8 copy of the build's snapshot (a quarter of the bytes, one scale
per row) and scans it with numkong's SIMD int8 dot product (the kernels usearch computes
with); the best `RESCORE` x k candidates are then scored exactly on the float32 vectors, so
every returned score is the exact cosine, and a row is missed only if int8 rounding pushes it
out of a candidate list four times longer than the answer (when the copy keeps every
dimension; see below for when it does not).

Text embeddings put most of their variance in a few directions: WordLlama's 256 dimensions keep
78% of it in their first 128 principal components, the multilingual USE's 512 88%. The copy then
holds those components only (`principal_axes`, at least `KEPT_VARIANCE` in at most half the
dimensions, for the whole snapshot and for each large collection in it), half the bytes again,
and the best `PROJECTED_RESCORE` x k (at least `PROJECTED_CANDIDATES`) are scored exactly.
At 100k x 256 the kernel fell from 2.2 to 1.0 ms (memory-bound: the bytes are what it costs);
in a memory search at 0% built (k = 100: 1,000 rows scored exactly) the vector side fell from
3.1 to about 1.8 ms. Recall against the exact scan, 1,109 SciFact queries over 45k SciFact
sentences (WordLlama): 0.9972 of the 100 nearest, 0.9995 of the 10 nearest (1.000 with the
whole int8 vectors; the finished graph's recall@10 is 0.90-0.95); USE over 15k: 0.9995, 1.000.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_INITIAL_CAPACITY = 1024
RESCORE = 4
"""int8 candidates per wanted hit, scored again exactly on the float32 vectors."""
PROJECTED_RESCORE = 10
"""The same, when the int8 copy holds the vectors' principal components (`principal_axes`)..."""
PROJECTED_CANDIDATES = 1_000
"""...and at least this many: a collection of at most this many rows is then scored whole, as
`principal_axes` checks only larger ones (Chinese sentences beside 45k English ones, through the
store's axes: their 10 nearest 0.959 from 100 candidates, 0.9997 from 1,000)."""
KEPT_VARIANCE = 0.75
"""The share of the vectors' variance their principal components must keep to stand in for them."""
_AXES_STEP = 64
"""Principal components are kept by this many (numkong's kernels run whole blocks of them)."""
_AXES_SAMPLE = 8_192
"""Live rows, at most, that the principal components are computed from (evenly spaced)."""
_COLLECTION_SAMPLE = 512
"""Rows, at most, of each large collection that its share of the variance is checked on."""
_AXES_MAX_DIMS = 1_536
"""Vectors of more dimensions are copied whole: finding the axes with one BLAS thread took
0.31 s at 1,024 dimensions and 0.81 s at 1,536 (busy 2-core machine), and grows with the cube."""
_BLAS_LIMIT = threading.Lock()
"""Held around threadpoolctl's limit, which is the whole process's: two copies made at once
take turns, so neither restores the other's limit as the process's own."""
_LEVELS = 127
_CHUNK = 8_192
"""Rows quantized at a time (bounds the float temporaries to a few MB)."""


class VectorMatrix:
    """Unit vectors by row id, searched exactly by cosine (dot product)."""

    def __init__(self, dim: int) -> None:
        import numpy as np

        self.dim = dim
        self._vectors: npt.NDArray[np.float32] = np.zeros((_INITIAL_CAPACITY, dim), np.float32)
        self._rowids: npt.NDArray[np.int64] = np.zeros(_INITIAL_CAPACITY, np.int64)
        self._codes: npt.NDArray[np.int32] = np.full(_INITIAL_CAPACITY, -1, np.int32)
        self._slot: dict[int, int] = {}
        self._size = 0
        self._collections: dict[str, int] = {}
        self._snapshots = 0

    def __len__(self) -> int:
        return len(self._slot)

    def code(self, collection: str) -> int:
        return self._collections.setdefault(collection, len(self._collections))

    def add(self, rowids: Sequence[int], collections: Sequence[str], vectors: Any) -> None:
        import numpy as np

        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(rowids), self.dim)
        self.remove(rowids)
        needed = self._size + len(rowids)
        if needed > len(self._vectors):
            capacity = max(needed, 2 * len(self._vectors))
            self._vectors = np.resize(self._vectors, (capacity, self.dim))
            self._rowids = np.resize(self._rowids, capacity)
            codes = np.full(capacity, -1, np.int32)
            codes[: self._size] = self._codes[: self._size]
            self._codes = codes
        start = self._size
        end = start + len(rowids)
        self._vectors[start:end] = vectors
        self._rowids[start:end] = rowids
        self._codes[start:end] = [self.code(c) for c in collections]
        for offset, rowid in enumerate(rowids):
            self._slot[int(rowid)] = start + offset
        self._size = end

    def remove(self, rowids: Sequence[int]) -> None:
        for rowid in rowids:
            slot = self._slot.pop(int(rowid), None)
            if slot is not None:
                self._codes[slot] = -1
        if (
            self._size > 2 * _INITIAL_CAPACITY
            and len(self._slot) < self._size // 2
            and not self._snapshots
        ):
            self._compact()

    def _compact(self) -> None:
        live = self._codes[: self._size] >= 0
        count = int(live.sum())
        self._vectors[:count] = self._vectors[: self._size][live]
        self._rowids[:count] = self._rowids[: self._size][live]
        self._codes[:count] = self._codes[: self._size][live]
        self._codes[count:] = -1
        self._size = count
        self._slot = {int(r): i for i, r in enumerate(self._rowids[:count])}

    def search(
        self, query: Any, k: int, collection: str | None = None, *, start: int = 0
    ) -> list[tuple[int, float]]:
        """The `k` nearest (row id, cosine) pairs, best first, among live rows of `collection`
        (only those in slots from `start` on: during a graph build the snapshot's slots are
        scanned through their int8 copy, the rows written since from here)."""
        import numpy as np

        if not self._slot or start >= self._size:
            return []
        mask = self.members(collection, start, self._size)
        if mask is None:
            return []
        q = np.asarray(query, dtype=np.float32).reshape(self.dim)
        # numpy's own loop, on this thread: a BLAS matrix-vector product wakes the BLAS
        # threads, whose hand-off cost 68 ms a query at 5k vectors on a busy 2-core machine
        # (0.3 ms this way; the same CPU time at 100k).
        scores = np.einsum("ij,j->i", self._vectors[start : self._size], q)
        scores = np.where(mask, scores, -np.inf)
        available = int(mask.sum())
        k = min(k, available)
        if k <= 0:
            return []
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self._rowids[start + i]), float(scores[i])) for i in top if mask[i]]

    def members(self, collection: str | None, start: int, end: int) -> Any:
        """One flag per slot from `start` to `end`: whether it holds a live row of
        `collection` (of any, if None); None if the collection has no rows."""
        codes = self._codes[start:end]
        if collection is None:
            return codes >= 0
        code = self._collections.get(collection)
        return None if code is None else codes == code

    def rescored(self, query: Any, slots: Any, k: int) -> list[tuple[int, float]]:
        """The `k` best (row id, exact cosine) pairs among the rows in `slots`."""
        import numpy as np

        k = min(k, len(slots))
        if k <= 0:
            return []
        slots = np.sort(slots)  # read in address order: 15% less time for 1,000 of 100k
        q = np.asarray(query, dtype=np.float32).reshape(self.dim)
        scores = np.einsum("ij,j->i", self._vectors[slots], q)
        top = np.argpartition(-scores, k - 1)[:k]
        order = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self._rowids[slots[i]]), float(scores[i])) for i in order]

    def slot_codes(self, start: int, end: int) -> Any:
        """The collection code of each slot from `start` to `end` (-1: its row is gone)."""
        return self._codes[start:end].copy()

    def slots_of(self, rowids: Sequence[int], below: int) -> list[int]:
        """The slots of the live rows among `rowids` that lie below slot `below`."""
        slots = (self._slot.get(rowid) for rowid in rowids)
        return [slot for slot in slots if slot is not None and slot < below]

    def snapshot(self) -> tuple[Any, Any, Any, dict[int, str]]:
        """Row ids, collection codes (-1: removed), vectors and code names as of now, without
        copying the vectors: rows are only appended, and compaction waits for
        `release_snapshot()`."""
        self._snapshots += 1
        size = self._size
        return (
            self._rowids[:size].copy(),
            self._codes[:size].copy(),
            self._vectors[:size],
            self._names(),
        )

    def _names(self) -> dict[int, str]:
        return {code: name for name, code in self._collections.items()}

    def release_snapshot(self) -> None:
        self._snapshots = max(0, self._snapshots - 1)

    def rows(self, rowids: Sequence[int]) -> tuple[list[int], list[str], Any]:
        """The live rows among `rowids`: their ids, collections and vectors."""
        names = self._names()
        slots = [(int(r), self._slot[int(r)]) for r in rowids if int(r) in self._slot]
        return (
            [r for r, _ in slots],
            [names[int(self._codes[s])] for _, s in slots],
            self._vectors[[s for _, s in slots]],
        )

    def count(self, collection: str) -> int:
        code = self._collections.get(collection)
        if code is None:
            return 0
        return int((self._codes[: self._size] == code).sum())


class QuantizedSlots:
    """int8 copies of a snapshot's vectors, slot for slot, for a fast approximate pass: of
    their principal components (`principal_axes`) when a few of them keep most of what tells
    the vectors apart, else of the vectors themselves."""

    def __init__(self, vectors: Any, codes: Any = None) -> None:
        """`vectors` and their collection `codes` (-1: a removed row; None: one collection)."""
        import numpy as np

        self._scales: npt.NDArray[np.float32] = np.empty(len(vectors), np.float32)
        self._blocks: list[Any] = []
        with _one_blas_thread():
            self._axes = principal_axes(vectors, codes)
            self._quantize(vectors)

    def _quantize(self, vectors: Any) -> None:
        import numkong
        import numpy as np

        # Packed for numkong's matrix kernels (3.3 ms a query at 100k x 256 against 5.9 ms for
        # the same products one row at a time, on a busy 2-core machine), a block of `_CHUNK`
        # rows at a time, so that a search scans only the blocks a partial graph does not hold.
        for start in range(0, len(vectors), _CHUNK):
            block = vectors[start : start + _CHUNK]
            if self._axes is not None:
                center, axes = self._axes
                block = (block - center) @ axes
            peak = np.abs(block).max(axis=1)
            peak[peak == 0] = 1.0
            codes = np.rint(block * (_LEVELS / peak)[:, None]).astype(np.int8)
            self._scales[start : start + _CHUNK] = peak / _LEVELS
            self._blocks.append(numkong.dots_pack(codes))

    def __len__(self) -> int:
        return len(self._scales)

    def candidates(self, wanted: int) -> int:
        """How many slots `best_slots` returns (at most) for `wanted` hits, to score exactly."""
        if wanted <= 0:
            return 0
        if self._axes is None:
            return RESCORE * wanted
        return max(PROJECTED_RESCORE * wanted, PROJECTED_CANDIDATES)

    def best_slots(self, query: Any, mask: Any, wanted: int, start: int = 0) -> Any:
        """The `candidates(wanted)` slots from `start` on (among those `mask` keeps, one flag
        per slot from `start`) whose int8 dot product with `query` is highest, best first."""
        import numkong
        import numpy as np

        count = min(self.candidates(wanted), int(mask.sum()))
        if count <= 0 or start >= len(self):
            return np.empty(0, np.int64)
        q = np.asarray(query, np.float32)
        if self._axes is not None:
            # Not centred: the centre's product with the query is the same for every slot.
            q = q @ self._axes[1]
        peak = float(np.abs(q).max()) or 1.0
        q8 = np.rint(q * (_LEVELS / peak)).astype(np.int8)[None, :]
        first = start // _CHUNK
        blocks = self._blocks[first:]
        raw = np.concatenate(
            [np.asarray(numkong.dots_packed(q8, block)).reshape(-1) for block in blocks]
        )[start - first * _CHUNK :]
        scores = np.multiply(raw, self._scales[start:], dtype=np.float32)
        scores[~mask] = -np.inf
        top = np.argpartition(-scores, count - 1)[:count]
        return start + top[np.argsort(-scores[top], kind="stable")]


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """One BLAS thread for the products that make a copy: on a busy 2-core machine two OpenBLAS
    threads waiting on each other made the copy take 1.38 s in one run of several (0.11-0.13 s
    otherwise), and the axes at 1,024 dimensions 1.26 s against 0.31 s. (A BLAS threadpoolctl
    does not know, such as Apple's Accelerate, keeps its own threads.)"""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # installed before it joined the `memory` extra: no limit, same copy
        yield
        return
    with _BLAS_LIMIT, threadpool_limits(1, user_api="blas"):
        yield


def principal_axes(vectors: Any, codes: Any = None) -> tuple[Any, Any] | None:
    """(centre, axes): the fewest principal axes of the live rows of `vectors` (`codes`: each
    row's collection, -1 for a removed row; None: every row live, one collection), a multiple
    of `_AXES_STEP` found from at most `_AXES_SAMPLE` evenly spaced live rows, that keep
    `KEPT_VARIANCE` of the variance of them all and of each collection of more than
    `PROJECTED_CANDIDATES` rows (from its own rows), if they are at most half the dimensions;
    else None (the copy keeps every dimension). A collection is checked on its own because the
    axes are the whole store's: a large one that differs from the rest along axes they leave out
    would be ranked by noise (so one such collection keeps every dimension for the whole copy).
    Vectors of more than `_AXES_MAX_DIMS` dimensions are kept whole (finding their axes would
    cost seconds in the load that starts the build). Call it inside `_one_blas_thread`."""
    import numpy as np

    count, dim = vectors.shape
    live = np.arange(count) if codes is None else np.flatnonzero(np.asarray(codes) >= 0)
    if not 2 * _AXES_STEP <= dim <= _AXES_MAX_DIMS or len(live) < dim:
        return None
    sample = _spaced_rows(vectors, live, _AXES_SAMPLE)
    center = sample.mean(axis=0, dtype=np.float64).astype(np.float32)
    spread = sample - center
    variances, axes = np.linalg.eigh((spread.T @ spread).astype(np.float64))  # ascending
    variances, axes = variances[::-1], np.ascontiguousarray(axes[:, ::-1], np.float32)
    total = float(variances.sum())
    if not np.isfinite(total) or total <= 0:
        return None
    kept = np.cumsum(variances)[: dim // 2] / total
    for rows in _large_collections(vectors, codes):
        group = rows - rows.mean(axis=0, dtype=np.float64).astype(np.float32)
        spread_total = float((group**2).sum())
        if spread_total > 1e-6 * float((rows**2).sum()):  # rows all alike: any order is right
            along = np.cumsum(((group @ axes[:, : dim // 2]) ** 2).sum(axis=0))
            kept = np.minimum(kept, along / spread_total)
    for dims in range(_AXES_STEP, dim // 2 + 1, _AXES_STEP):
        if kept[dims - 1] >= KEPT_VARIANCE:
            return center, np.ascontiguousarray(axes[:, :dims])
    return None


def _spaced_rows(vectors: Any, slots: Any, most: int) -> Any:
    """At most `most` of `vectors`' rows at `slots`, evenly spaced among them, as float32."""
    import numpy as np

    return np.asarray(vectors[slots[:: -(-len(slots) // most)]], np.float32)


def _large_collections(vectors: Any, codes: Any) -> list[Any]:
    """Up to `_COLLECTION_SAMPLE` rows of each collection of more than `PROJECTED_CANDIDATES`
    rows, when the live rows are of more than one collection (one collection is the sample)."""
    import numpy as np

    if codes is None:
        return []
    codes = np.asarray(codes)
    found, rows = np.unique(codes[codes >= 0], return_counts=True)
    if len(found) < 2:
        return []
    return [
        _spaced_rows(vectors, np.flatnonzero(codes == code), _COLLECTION_SAMPLE)
        for code in found[rows > PROJECTED_CANDIDATES]
    ]
