"""`SQLiteTextIndex`: the embedded `TextIndex`, one SQLite file for rows, words, substrings and
vectors.

Four structures per index, written in one transaction so they never disagree:
- `<name>`: the rows (collection, id, text, JSON payload, float32 vector BLOB);
- `<name>_words`: FTS5 over jieba-segmented text (unicode61 under the `porter` stemmer), so
  Chinese words match as words and "runs" finds "running"; a store made before stemming is
  re-indexed once when it is opened;
- `<name>_tri`: FTS5 trigram over the raw text, for substrings of three or more characters;
  shorter terms (which the trigram tokenizer drops, and would then match everything) fall back
  to a LIKE scan; it reads the text from `<name>` (external content) instead of keeping a copy;
- `<name>_meta`: the embedder name and dimension the vectors were made with (opening the file
  with another embedder is a `DimensionMismatch`, never silently wrong vectors) and the fusion
  weights hybrid search ranks with.
A record written while the embedder failed (`embed_guard`) has an empty vector BLOB until
`reembed` gives it one.
Vectors are searched in memory (`LiveVectors`: an exact matrix, an HNSW graph past
`hnsw_threshold`), loaded on the first vector search and reloaded after another process's commit.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from toolweave.storage.errors import DimensionMismatch
from toolweave.storage.retrieval._live_vectors import LiveVectors, count_write
from toolweave.storage.retrieval._sqlite_bm25 import Postings, vocabulary_statement
from toolweave.storage.retrieval._sqlite_keywords import CHUNK as _CHUNK
from toolweave.storage.retrieval._sqlite_keywords import KeywordSearch, sql_where
from toolweave.storage.retrieval._sqlite_rows import (
    WITHOUT_VECTOR,
    Added,
    Blobs,
    count_without_vectors,
    delete_rows,
    fill_vectors,
    insert_rows,
    prepared,
    read_trigrams_from_rows,
    rows_by_key,
    rows_without_vectors,
    trigram_statements,
    trigrams_hold_text,
)
from toolweave.storage.retrieval._sqlite_warm import PostingsWarmer
from toolweave.storage.retrieval._words import WORDS_TOKENIZER, stem_words, unstemmed
from toolweave.storage.retrieval.embed_guard import (
    DEFAULT_EMBED_RETRY,
    EmbedderGuard,
    EmbedRetry,
)
from toolweave.storage.retrieval.embedders import Embedder, load_embedder
from toolweave.storage.retrieval.fusion import FusionWeights, weights_for
from toolweave.storage.retrieval.hnsw import DEFAULT_HNSW_THRESHOLD
from toolweave.storage.retrieval.index import (
    DEFAULT_COLLECTION,
    DEFAULT_MAX_QUERY_TERMS,
    DEFAULT_OVERSAMPLE,
    DEFAULT_POSTINGS_KEPT,
    FusedSearch,
    IndexHit,
    Record,
    Where,
    check_limit,
    check_name,
    check_unique,
    check_where,
)
from toolweave.storage.sqlite import SQLiteDatabase
from toolweave.storage.text import query_terms

DEFAULT_RANK_CAP = 1_000
"""Matches of a common substring (trigram search, after the words) that keyword search ranks:
the newest ones. Words are always scored whole (`_sqlite_bm25`)."""


def _schema(t: str) -> str:
    return f"""
CREATE TABLE IF NOT EXISTS {t}_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS {t} (
    rowid INTEGER PRIMARY KEY,
    collection TEXT NOT NULL,
    id TEXT NOT NULL,
    text TEXT NOT NULL,
    payload TEXT NOT NULL,
    vector BLOB NOT NULL,
    UNIQUE (collection, id)
);
CREATE VIRTUAL TABLE IF NOT EXISTS {t}_words USING fts5(words, tokenize='{WORDS_TOKENIZER}');
{";".join(trigram_statements(t))};
{vocabulary_statement(t)};
"""


class SQLiteTextIndex(FusedSearch):
    """A `TextIndex` in one SQLite file (or a shared `SQLiteDatabase`, under table `name`).

    `indexed_fields` are payload fields given a B-tree index (per collection), for equality
    filters a store runs on every write (a content hash, a type). From `hnsw_threshold`
    vectors on, and if usearch is installed, vector search uses HNSW graphs (saved beside the
    file) instead of an exact scan; None keeps the exact scan at any size. `rank_cap` bounds
    how many matches of a common substring keyword search ranks (`DEFAULT_RANK_CAP`). `fusion`
    sets the vector weights of hybrid search and stores them in the index; without it the
    stored weights (or, in a new index, the embedder's measured defaults) apply.
    `max_query_terms` bounds the words one keyword search scores (`DEFAULT_MAX_QUERY_TERMS`);
    `postings_kept` the word postings held in memory, read ahead in the background
    (`DEFAULT_POSTINGS_KEPT`). `embed_retry` sets how a failing embedder is retried before the
    index stores records without vectors and searches by keywords only (`EmbedRetry`).
    """

    def __init__(
        self,
        db: SQLiteDatabase | str | Path,
        embedder: Embedder | str = "auto",
        *,
        name: str = "records",
        oversample: int = DEFAULT_OVERSAMPLE,
        indexed_fields: Sequence[str] = (),
        hnsw_threshold: int | None = DEFAULT_HNSW_THRESHOLD,
        rank_cap: int = DEFAULT_RANK_CAP,
        fusion: FusionWeights | None = None,
        max_query_terms: int = DEFAULT_MAX_QUERY_TERMS,
        embed_retry: EmbedRetry = DEFAULT_EMBED_RETRY,
        postings_kept: int = DEFAULT_POSTINGS_KEPT,
    ) -> None:
        self.name = check_name(name)
        self.max_query_terms = check_limit(max_query_terms, name="max_query_terms")
        self._fusion_given = fusion
        self.fusion = fusion
        self.embedder = load_embedder(embedder)
        self.guard = EmbedderGuard(self.embedder, embed_retry)
        self._reembedding = asyncio.Lock()
        self.oversample = oversample
        self.rank_cap = check_limit(rank_cap, name="rank_cap")
        self._postings = Postings(self.name, check_limit(postings_kept, name="postings_kept"))
        self._owns_db = not isinstance(db, SQLiteDatabase)
        self.db = db if isinstance(db, SQLiteDatabase) else SQLiteDatabase(db)
        check_where(dict.fromkeys(indexed_fields))
        script = _schema(name) + "".join(
            f"CREATE INDEX IF NOT EXISTS {name}_by_{f} ON {name}"
            f" (collection, json_extract(payload, '$.{f}'));\n"
            for f in indexed_fields
        )
        if self.db.run_sync(lambda conn: trigrams_hold_text(conn, name)):
            self.db.transaction_sync(lambda conn: read_trigrams_from_rows(conn, name))
        self.db.run_sync(lambda conn: conn.executescript(script))
        if self.db.run_sync(lambda conn: unstemmed(conn, name)):
            self.db.transaction_sync(lambda conn: stem_words(conn, name, _CHUNK))
        self._checked = False
        recorded = self.db.run_sync(lambda conn: self._recorded_dim(conn))
        self.vectors = LiveVectors(
            self.db, name, self.guard.dim(recorded) or 0, self.embedder.name, hnsw_threshold
        )
        self.search_gate = self.vectors.gate
        self._warmer = PostingsWarmer(self.db, self._postings, self.vectors.gate)

    @property
    def hnsw_threshold(self) -> int | None:
        return self.vectors.hnsw_threshold

    # -- dimension bookkeeping ---------------------------------------------------------------

    def _recorded_dim(self, conn: sqlite3.Connection) -> int | None:
        row = conn.execute(f"SELECT value FROM {self.name}_meta WHERE key = 'dim'").fetchone()
        return int(row[0]) if row else None

    def _check_meta(self, conn: sqlite3.Connection) -> bool:
        """Check the store's embedder against ours (recording it in a new store) and read the
        fusion weights; False while the embedder's dimension cannot be known yet (it failed and
        the store records none)."""
        t = self.name
        rows = dict(conn.execute(f"SELECT key, value FROM {t}_meta").fetchall())
        name = self.embedder.name
        dim = self.guard.dim(int(rows["dim"]) if "dim" in rows else None)
        stored = rows.get("fusion")
        fusion = self._fusion_given or (
            FusionWeights.from_json(stored) if stored else weights_for(name)
        )
        if fusion.to_json() != stored:
            conn.execute(
                f"INSERT OR REPLACE INTO {t}_meta (key, value) VALUES ('fusion', ?)",
                [fusion.to_json()],
            )
        self.fusion = fusion
        if conn.execute(f"SELECT 1 FROM {t} WHERE {WITHOUT_VECTOR} LIMIT 1").fetchone():
            self.guard.missing = True
        if dim is None:
            return False
        self.vectors.dim = self.vectors.dim or dim
        if "dim" not in rows:
            conn.executemany(
                f"INSERT OR IGNORE INTO {t}_meta (key, value) VALUES (?, ?)",
                [("dim", str(dim)), ("embedder", name)],
            )
            return True
        if int(rows["dim"]) != dim or rows["embedder"] != name:
            raise DimensionMismatch(
                f"{self.db.path} (index {t!r}) was built with embedder {rows['embedder']!r}"
                f" (dim {rows['dim']}); it was opened with {name!r} (dim {dim}). Open it with"
                f" embedder={rows['embedder']!r}, or rebuild the index with the new embedder."
            )
        return True

    async def _ready(self) -> None:
        if not self._checked:
            self._checked = await self.db.transaction(self._check_meta)
            self._warmer.soon()

    async def recorded_embedder(self) -> tuple[str, int] | None:
        sql = f"SELECT key, value FROM {self.name}_meta WHERE key IN ('embedder', 'dim')"
        rows = dict(await self.db.run(lambda conn: conn.execute(sql).fetchall()))
        return (rows["embedder"], int(rows["dim"])) if len(rows) == 2 else None

    async def stored_fusion(self) -> FusionWeights:
        await self._ready()
        assert self.fusion is not None
        return self.fusion

    # -- writes ------------------------------------------------------------------------------

    async def write(
        self, upsert: Sequence[Record] = (), delete: Sequence[tuple[str, str]] = ()
    ) -> None:
        """Add or replace `upsert` and remove `delete`, in one transaction.

        The embedder and the preparation of the rows (segmentation, JSON) run side by side in
        worker threads before the transaction, which then only inserts: it never waits for an
        embedder (a remote one could hold the write lock for seconds). A record whose text is
        unchanged keeps its stored vector; one of empty text gets none. Any failure rolls the
        whole write back, except the embedder's: after its retries (`EmbedRetry`) the records
        are stored without vectors.
        """
        await self._ready()
        keys = check_unique(upsert)
        texts = {(r.collection, r.id): r.text for r in upsert}
        known = await self.db.run(lambda c: rows_by_key(c, self.name, keys, ", text, vector"))
        reuse = {k: row[2] for k, row in known.items() if row[1] == texts[k] and row[2]}
        rows, blobs = await asyncio.gather(
            asyncio.to_thread(prepared, upsert),
            asyncio.to_thread(self._vector_blobs, upsert, reuse),
        )
        # The records without a vector go last: `insert_rows` slices one BLOB per statement.
        order = sorted(range(len(upsert)), key=lambda n: not blobs[n])
        upsert = [upsert[n] for n in order]
        rows, blobs = [rows[n] for n in order], [blobs[n] for n in order]
        await self._ready()  # a store made while the embedder failed learns its dimension
        t = self.name

        Done = tuple[list[int], list[tuple[int, str, bytes]], int]

        def apply(conn: sqlite3.Connection) -> Done:
            old = rows_by_key(conn, t, [*delete, *keys], "")
            removed = sorted({row[0] for row in old.values()})
            delete_rows(conn, t, removed)
            top = int(conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {t}").fetchone()[0])
            insert_rows(conn, t, top + 1, rows, blobs)
            rowids = range(top + 1, top + 1 + len(upsert))
            writes = count_write(conn, t)
            added = [(n, r.collection, b) for n, r, b in zip(rowids, upsert, blobs, strict=True)]
            return removed, added, writes

        def committed(done: Done) -> None:
            removed, added, writes = done
            self.vectors.apply(removed, added)
            self._postings.committed(removed, added[0][0] if added else 0, len(added), writes)

        await self.db.transaction(apply, after_commit=committed)
        self._warmer.soon()

    def _vector_blobs(
        self, records: Sequence[Record], reuse: dict[tuple[str, str], bytes]
    ) -> list[bytes]:
        """float32 BLOBs for the records: stored ones reused, the rest embedded (checked), empty
        for a record of empty text (nothing to embed); all empty when the embedder fails (a
        statement's BLOBs share one width)."""
        import numpy as np

        todo = [r.text for r in records if r.text and (r.collection, r.id) not in reuse]
        fresh = None
        if todo:
            embedded = self.guard.embed(todo)
            if embedded is None:
                self.guard.missing = True
                return [b""] * len(records)
            fresh = np.asarray(embedded, np.float32)
        dim = self.embedder.dim
        if fresh is not None and fresh.shape != (len(todo), dim):
            raise DimensionMismatch(
                f"embedder {self.embedder.name!r} returned vectors of shape {fresh.shape}"
                f" for {len(todo)} texts; the index expects dim {dim}"
            )
        blobs, position = [], 0
        for record in records:
            blob = reuse.get((record.collection, record.id), None if record.text else b"")
            if blob is None:
                assert fresh is not None
                blob = fresh[position].tobytes()
                position += 1
            blobs.append(blob)
        return blobs

    async def delete_where(
        self, collection: str = DEFAULT_COLLECTION, where: Where | None = None
    ) -> int:
        await self._ready()
        clause, params = sql_where(where)
        t = self.name

        def apply(conn: sqlite3.Connection) -> tuple[list[int], int]:
            rowids = [
                int(r[0])
                for r in conn.execute(
                    f"SELECT rowid FROM {t} WHERE collection = ?{clause}", [collection, *params]
                )
            ]
            delete_rows(conn, t, rowids)
            return rowids, count_write(conn, t)

        def committed(done: tuple[list[int], int]) -> None:
            self.vectors.apply(done[0], [])
            self._postings.committed(done[0], 0, 0, done[1])

        rowids, _ = await self.db.transaction(apply, after_commit=committed)
        return len(rowids)

    # -- reads -------------------------------------------------------------------------------

    async def get(self, ids: Sequence[str], collection: str = DEFAULT_COLLECTION) -> list[Record]:
        keys = [(collection, i) for i in ids]
        found = await self.db.run(lambda c: rows_by_key(c, self.name, keys, ", text, payload"))
        return [
            Record(key[1], row[1], json.loads(row[2]), collection)
            for key in keys
            if (row := found.get(key)) is not None
        ]

    async def find(
        self,
        collection: str = DEFAULT_COLLECTION,
        where: Where | None = None,
        *,
        limit: int | None = None,
        order_by: str | None = None,
        descending: bool = False,
    ) -> list[Record]:
        clause, params = sql_where(where)
        order = "rowid"
        if order_by is not None:
            check_where({order_by: None})
            order = f"json_extract(payload, '$.{order_by}'){' DESC' if descending else ''}, rowid"
        sql = (
            f"SELECT id, text, payload FROM {self.name}"
            f" WHERE collection = ?{clause} ORDER BY {order}"
        )
        if limit is not None:
            sql += f" LIMIT {check_limit(limit)}"
        rows = await self.db.run(lambda conn: conn.execute(sql, [collection, *params]).fetchall())
        return [Record(r[0], r[1], json.loads(r[2]), collection) for r in rows]

    async def count(self, collection: str = DEFAULT_COLLECTION, where: Where | None = None) -> int:
        clause, params = sql_where(where)
        sql = f"SELECT count(*) FROM {self.name} WHERE collection = ?{clause}"
        return int(
            await self.db.run(lambda conn: conn.execute(sql, [collection, *params]).fetchone()[0])
        )

    async def collections(self) -> list[str]:
        sql = f"SELECT DISTINCT collection FROM {self.name} ORDER BY collection"
        return [r[0] for r in await self.db.run(lambda conn: conn.execute(sql).fetchall())]

    # -- search ------------------------------------------------------------------------------

    async def keyword_search(
        self,
        query: str,
        *,
        limit: int,
        collection: str = DEFAULT_COLLECTION,
        where: Where | None = None,
    ) -> list[IndexHit]:
        """Words (bm25), then substrings (trigram, bm25), then short-term LIKE matches (see
        `toolweave.storage.retrieval._sqlite_keywords`)."""
        if not query_terms(query):
            return []
        clause, params = sql_where(where)
        search = KeywordSearch(
            self.name, self.rank_cap, self.oversample, self._postings, self.max_query_terms
        )
        hits = await self.db.run(
            lambda conn: search.hits(conn, query, limit, collection, clause, params)
        )
        self._warmer.soon()  # another process's write made the postings be read again
        return hits

    async def vector_search(
        self,
        query: str,
        *,
        limit: int,
        collection: str = DEFAULT_COLLECTION,
        where: Where | None = None,
    ) -> list[IndexHit]:
        vector = await self.query_vector(query)
        if vector is None:
            return []
        await self._ready()
        await self.vectors.loaded()
        clause, params = sql_where(where)
        want = limit * self.oversample if clause else limit
        t = self.name

        while True:
            candidates, available = await asyncio.to_thread(
                self.vectors.search, vector, want, collection
            )
            scores = dict(candidates)
            rowids = list(scores)

            def read(
                conn: sqlite3.Connection, rowids: list[int] = rowids
            ) -> list[tuple[int, str, str, str]]:
                out: list[tuple[int, str, str, str]] = []
                for start in range(0, len(rowids), _CHUNK):
                    chunk = rowids[start : start + _CHUNK]
                    sql = (
                        f"SELECT rowid, id, text, payload FROM {t} WHERE rowid IN"
                        f" ({', '.join('?' * len(chunk))}){clause}"
                    )
                    out.extend(conn.execute(sql, [*chunk, *params]))
                return out

            found = await self.db.run(read)
            if len(found) >= limit or want >= available:
                break
            want *= 8
        found.sort(key=lambda row: -scores[row[0]])
        # Only the rows kept have their payload decoded (half of those read, oversampled).
        return [
            IndexHit(
                Record(id_, text, json.loads(payload), collection),
                scores[rowid],
                vector_score=scores[rowid],
            )
            for rowid, id_, text, payload in found[:limit]
        ]

    # -- vectors missing after an embedder failure -------------------------------------------

    async def missing_vectors(self, collection: str | None = None) -> int:
        return await self.db.run(lambda conn: count_without_vectors(conn, self.name, collection))

    async def reembed(self) -> int:
        t, done, after = self.name, 0, 0
        async with self._reembedding:
            while rows := await self.db.run(partial(rows_without_vectors, t=t, after=after)):
                vectors = await asyncio.to_thread(self.guard.embed, [r[2] for r in rows])
                if vectors is None:
                    return done
                await self._ready()
                blobs = {r[0]: (r[1], v.tobytes()) for r, v in zip(rows, vectors, strict=True)}

                def apply(conn: sqlite3.Connection, blobs: Blobs = blobs) -> tuple[Added, int]:
                    return fill_vectors(conn, t, blobs), count_write(conn, t)

                def committed(done: tuple[Added, int]) -> None:
                    self.vectors.apply([], done[0])
                    self._postings.committed([], 0, 0, done[1])

                done += len((await self.db.transaction(apply, after_commit=committed))[0])
                after = rows[-1][0]
            self.guard.missing = False
            return done

    async def build_graph(self) -> bool:
        """Build the HNSW graph now (or wait for the background build) instead of searching
        exactly until it is ready; False if this index searches exactly (fewer vectors than
        `hnsw_threshold`, usearch not installed, or an in-memory database)."""
        await self._ready()
        return await self.vectors.build_graph()

    async def warm_postings(self) -> int:
        """Read every word's postings now (or wait for the background read) instead of at the
        first query that asks for each; the postings held (at most `postings_kept`)."""
        await self._ready()
        return await self._warmer.wait()

    async def close(self) -> None:
        """Save HNSW graphs changed since they were loaded, then release the file."""
        await self._warmer.close()
        await self.vectors.close()
        if self._owns_db:
            await self.db.close()
