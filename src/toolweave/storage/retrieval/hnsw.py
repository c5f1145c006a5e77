"""Approximate vector search with usearch HNSW graphs, for stores past 50k vectors.

An exact scan reads every vector on every query: 100 MB at 100k 256-dim vectors, 1 GB at 1M,
which memory bandwidth turns into tens to hundreds of milliseconds. An HNSW graph visits a few
thousand instead (~0.5 ms at 100k; recall@20 ~0.98 with these settings on WordLlama vectors of
varied text, 0.90 on benchmarks/memory_scale.py's template sentences, which are near-duplicates).
It costs a build (3-7 s per 100k vectors on 2 cores, in the background: see `_live_vectors`),
so the graph is saved next to the database with a fingerprint of the rows it holds and
reloaded when the rows still match; any other state (another process wrote, a crash before
saving) rebuilds it from the vectors.

`HNSWVectors` has the same interface as `VectorMatrix`, one graph per collection (so a search
never filters by collection), half-precision vectors, inner-product metric on unit vectors.
usearch comes with `pip install 'toolweave[memory]'`; without it every search is exact.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolweave.storage.files import atomic_write

DEFAULT_HNSW_THRESHOLD = 50_000
"""Vectors in a store from which `SQLiteTextIndex` searches an HNSW graph (if usearch is
installed) instead of scanning a matrix."""
HNSW_CONNECTIVITY = 16
HNSW_EXPANSION_ADD = 32
HNSW_EXPANSION_SEARCH = 64
HNSW_ADD_THREADS = 2
"""Threads usearch adds a write's vectors with (the caller waits for them)."""
HNSW_BUILD_THREADS = 1
"""Threads a background graph build adds with: one core stays free for the searches that scan
meanwhile."""


def hnsw_available() -> bool:
    try:
        import numkong  # noqa: F401  (the int8 scan searches use while a graph is built)
        import usearch.index  # noqa: F401
    except ImportError:
        return False
    return True


class HNSWVectors:
    """Unit vectors by row id in one HNSW graph per collection."""

    def __init__(self, dim: int) -> None:
        self.dim = dim
        self._graphs: dict[str, Any] = {}
        self._collection_of: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._collection_of)

    def _graph(self, collection: str) -> Any:
        graph = self._graphs.get(collection)
        if graph is None:
            from usearch.index import Index

            graph = Index(
                ndim=self.dim,
                metric="ip",
                dtype="f16",
                connectivity=HNSW_CONNECTIVITY,
                expansion_add=HNSW_EXPANSION_ADD,
                expansion_search=HNSW_EXPANSION_SEARCH,
            )
            self._graphs[collection] = graph
        return graph

    def add(
        self,
        rowids: Sequence[int],
        collections: Sequence[str],
        vectors: Any,
        *,
        threads: int = HNSW_ADD_THREADS,
    ) -> None:
        import numpy as np

        vectors = np.asarray(vectors, dtype=np.float32).reshape(len(rowids), self.dim)
        self.remove(rowids)
        groups: dict[str, list[int]] = {}
        for position, collection in enumerate(collections):
            groups.setdefault(collection, []).append(position)
        for collection, positions in groups.items():
            keys = np.asarray([rowids[p] for p in positions], dtype=np.uint64)
            self._graph(collection).add(keys, vectors[positions], threads=threads)
            for key in keys:
                self._collection_of[int(key)] = collection

    def remove(self, rowids: Sequence[int]) -> None:
        for rowid in rowids:
            collection = self._collection_of.pop(int(rowid), None)
            if collection is not None:
                self._graphs[collection].remove(int(rowid))

    def search(self, query: Any, k: int, collection: str | None = None) -> list[tuple[int, float]]:
        import numpy as np

        q = np.asarray(query, dtype=np.float32).reshape(self.dim)
        names = list(self._graphs) if collection is None else [collection]
        found: list[tuple[int, float]] = []
        for name in names:
            graph = self._graphs.get(name)
            if graph is None or len(graph) == 0:
                continue
            matches = graph.search(q, min(k, len(graph)))
            found.extend(
                (int(key), 1.0 - float(distance))
                for key, distance in zip(matches.keys, matches.distances, strict=True)
            )
        found.sort(key=lambda pair: -pair[1])
        return found[:k]

    def count(self, collection: str) -> int:
        graph = self._graphs.get(collection)
        return 0 if graph is None else len(graph)

    # -- persistence --------------------------------------------------------------------------

    def save(self, directory: Path, fingerprint: list[Any]) -> None:
        """Write every graph and the fingerprint of the rows they hold (manifest last)."""
        directory.mkdir(parents=True, exist_ok=True)
        manifest = directory / "manifest.json"
        manifest.unlink(missing_ok=True)  # a half-written save must not look valid
        files = {}
        for number, (collection, graph) in enumerate(sorted(self._graphs.items())):
            name = f"graph_{number}.usearch"
            graph.save(str(directory / name))
            files[collection] = name
        atomic_write(manifest, json.dumps({"fingerprint": fingerprint, "graphs": files}))

    @classmethod
    def load(cls, directory: Path, dim: int, fingerprint: list[Any]) -> HNSWVectors | None:
        """The saved graphs if they were saved for exactly these rows, else None."""
        import numpy as np

        manifest = directory / "manifest.json"
        if not manifest.exists():
            return None
        saved = json.loads(manifest.read_text())
        if saved.get("fingerprint") != fingerprint:
            return None
        vectors = cls(dim)
        for collection, name in saved["graphs"].items():
            graph = vectors._graph(collection)
            graph.load(str(directory / name))
            # One array of the keys: iterating usearch's key view costs ~0.7 ms per key.
            keys = np.asarray(graph.keys, dtype=np.uint64).tolist()
            vectors._collection_of.update(dict.fromkeys(keys, collection))
        return vectors
