"""The stores `memory_scale.py` compares toolweave's ingest with: chromadb, LanceDB, sqlite-vec.

Each peer gets the same rows (id, text, memory type, importance) and the same vectors,
computed once by toolweave's embedder before any store is timed, in the same batches, so
each timing is the store's own work. Each says what it keeps and what it does not, because
a store that keeps less has less to do: toolweave keeps full text with CJK segmentation,
trigram substrings, dedupe by content hash and the knowledge graph.

Installed by the `bench` extra (`pip install 'toolweave[bench]'`); never imported by toolweave.

Run alone, it measures the ingest comparison only (no search, no HNSW), with `memory_scale.py`'s
rows, its batches and its timing of toolweave's `add_many` with the vectors known; with
`--beside-busy-thread`, every store writes while another Python thread spins (as in a server):

    .venv/bin/python benchmarks/memory_peers.py --size 100000 [--beside-busy-thread]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolweave.storage.sqlite import DEFAULT_CACHE_MB, DEFAULT_CHECKPOINT_PAGES

Rows = Sequence[tuple[str, str, dict[str, Any]]]
"""(id, text, metadata) per memory."""


@contextlib.contextmanager
def beside_busy_thread(enabled: bool) -> Iterator[None]:
    """With `enabled`, one more thread runs Python the whole time, as a server's event loop or
    a parser would beside a write: a store that takes the GIL back once per row then waits
    behind it each time."""
    if not enabled:
        yield
        return
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(range(1_000))

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


@dataclass(frozen=True)
class Peer:
    name: str
    keeps: str
    lacks: str
    ingest: Callable[[Path, Rows, Sequence[Any], int], float]
    """(directory, rows, one vector array per batch, batch size) -> seconds to write them all."""


def chroma_ingest(root: Path, rows: Rows, vectors: Sequence[Any], batch: int) -> float:
    """chromadb's embedded persistent client: one `add` per batch, then one query, which
    waits for the HNSW index to take the last batch."""
    import chromadb

    client = chromadb.PersistentClient(
        path=str(root / "chroma"), settings=chromadb.Settings(anonymized_telemetry=False)
    )
    collection = client.create_collection(
        "memories", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
    )
    start = time.perf_counter()
    for n, block in enumerate(vectors):
        part = rows[n * batch : (n + 1) * batch]
        collection.add(
            ids=[r[0] for r in part],
            embeddings=block,
            documents=[r[1] for r in part],
            metadatas=[r[2] for r in part],
        )
    collection.query(query_embeddings=vectors[-1][:1], n_results=1)
    return time.perf_counter() - start


def lance_ingest(
    root: Path, rows: Rows, vectors: Sequence[Any], batch: int, *, fts: bool = False
) -> float:
    """LanceDB: the first batch creates the table, each next one is an `add` (one Lance
    version each); with `fts`, its native full-text index is built once at the end."""
    import lancedb
    import pyarrow as pa

    db = lancedb.connect(str(root / ("lance_fts" if fts else "lance")))
    table = None
    start = time.perf_counter()
    for n, block in enumerate(vectors):
        part = rows[n * batch : (n + 1) * batch]
        data = pa.table(
            {
                "id": [r[0] for r in part],
                "text": [r[1] for r in part],
                "memory_type": [r[2]["memory_type"] for r in part],
                "importance": [r[2]["importance"] for r in part],
                "vector": pa.FixedSizeListArray.from_arrays(
                    pa.array(block.reshape(-1)), block.shape[1]
                ),
            }
        )
        if table is None:
            table = db.create_table("memories", data)
        else:
            table.add(data)
    if fts and table is not None:
        table.create_fts_index("text")
    return time.perf_counter() - start


def sqlite_vec_ingest(root: Path, rows: Rows, vectors: Sequence[Any], batch: int) -> float:
    """sqlite-vec: one vec0 table of float32 vectors and one FTS5 (unicode61) table holding
    the text and the metadata, written in one transaction per batch, with toolweave's
    SQLite settings (WAL, synchronous=NORMAL, its page cache and checkpoint interval).
    Python's own sqlite3 here cannot load extensions, so this runs on pysqlite3-binary's."""
    import json

    import pysqlite3.dbapi2 as sqlite3
    import sqlite_vec

    conn = sqlite3.connect(str(root / "sqlite_vec.db"), isolation_level=None)
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA cache_size=-{DEFAULT_CACHE_MB * 1024}")
    conn.execute(f"PRAGMA wal_autocheckpoint={DEFAULT_CHECKPOINT_PAGES}")
    dim = vectors[0].shape[1]
    conn.execute(f"CREATE VIRTUAL TABLE vectors USING vec0(embedding float[{dim}])")
    conn.execute(
        "CREATE VIRTUAL TABLE texts USING fts5(id UNINDEXED, text, payload UNINDEXED,"
        " tokenize='unicode61')"
    )
    start = time.perf_counter()
    rowid = 0
    for n, block in enumerate(vectors):
        part = rows[n * batch : (n + 1) * batch]
        first = rowid + 1
        rowid += len(part)
        conn.execute("BEGIN")
        conn.executemany(
            "INSERT INTO vectors (rowid, embedding) VALUES (?, ?)",
            [(first + i, v.tobytes()) for i, v in enumerate(block)],
        )
        conn.executemany(
            "INSERT INTO texts (rowid, id, text, payload) VALUES (?, ?, ?, ?)",
            [(first + i, r[0], r[1], json.dumps(r[2])) for i, r in enumerate(part)],
        )
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed


PEERS = [
    Peer(
        "chromadb (persistent)",
        "rows, metadata, HNSW index, FTS5 trigram index over the text",
        "word index and ranking, CJK segmentation, dedupe, graph",
        chroma_ingest,
    ),
    Peer(
        "LanceDB",
        "rows and vectors (columnar); search scans until an index is built",
        "any index, full text, dedupe, graph",
        lance_ingest,
    ),
    Peer(
        "LanceDB + FTS index",
        "as LanceDB, plus its full-text index built once at the end",
        "vector index, CJK segmentation, substrings, dedupe, graph",
        lambda root, rows, vectors, batch: lance_ingest(root, rows, vectors, batch, fts=True),
    ),
    Peer(
        "sqlite-vec + FTS5",
        "vec0 vectors (exact scan), FTS5 unicode61 words, text and metadata",
        "CJK segmentation (a Chinese run is one token), substrings, dedupe, graph",
        sqlite_vec_ingest,
    ),
]


async def _main() -> None:
    from memory_scale import (
        KnownVectors,
        add_all,
        compare_peers,
        memories,
        open_manager,
        warm_up,
    )

    from toolweave.storage.retrieval import load_embedder

    parser = argparse.ArgumentParser(description="toolweave's ingest beside the peers alone")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=2_000)
    parser.add_argument(
        "--beside-busy-thread",
        dest="busy",
        action="store_true",
        help="every store writes while one more Python thread spins",
    )
    args = parser.parse_args()
    embedder = load_embedder("auto")
    texts = memories(args.size)
    vectors = [embedder.embed(texts[i : i + args.batch]) for i in range(0, args.size, args.batch)]
    known = KnownVectors(embedder, texts, [v for block in vectors for v in block])
    await warm_up(embedder)
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        manager = open_manager(root / "toolweave.db", known, None)
        with beside_busy_thread(args.busy):
            elapsed = await add_all(manager, texts, args.batch)
        await manager.close()
        compare_peers(texts, vectors, args, root, args.size / elapsed, busy=args.busy)
    print(f"load average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    asyncio.run(_main())
