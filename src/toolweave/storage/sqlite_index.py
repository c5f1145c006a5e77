"""`SQLiteTextIndex`: the embedded `TextIndex`, one SQLite file for rows, words, substrings and
vectors.

Four structures per index, written in one transaction so they never disagree:
- `<name>`: the rows (collection, id, text, JSON payload, float32 vector BLOB);
- `<name>_words`: FTS5 over jieba-segmented text (unicode61), so Chinese words match as words;
- `<name>_tri`: FTS5 trigram over the raw text, for substrings of three or more characters;
  shorter terms (which the trigram tokenizer drops, and would then match everything) fall back
  to a LIKE scan;
- `<name>_meta`: the embedder name and dimension the vectors were made with; opening the file
  with another embedder is a `DimensionMismatch`, never silently wrong vectors.
Vectors are searched by a `VectorMatrix` loaded on the first vector search; another process's
commit (seen through `PRAGMA data_version`) makes the next search reload it.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .embedders import Embedder, load_embedder
from .errors import DimensionMismatch
from .hnsw import DEFAULT_HNSW_THRESHOLD, HNSWVectors, hnsw_available
from .index import (
    DEFAULT_COLLECTION,
    DEFAULT_OVERSAMPLE,
    RANGE_OPERATORS,
    FusedSearch,
    Hit,
    Record,
    Where,
    check_limit,
    check_name,
    check_unique,
    check_where,
)
from .sqlite import SQLiteDatabase
from .text import TRIGRAM_MIN_CHARS, fts5_match, has_cjk, like_pattern, query_terms, segmented
from .vectors import VectorMatrix

_CHUNK = 500
"""Ids per `IN (...)` list (SQLite allows 32,766 parameters; smaller lists plan better)."""


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
CREATE VIRTUAL TABLE IF NOT EXISTS {t}_words USING fts5(words, tokenize='unicode61');
CREATE VIRTUAL TABLE IF NOT EXISTS {t}_tri USING fts5(text, tokenize='trigram');
"""


def _sql_where(where: Where | None) -> tuple[str, list[Any]]:
    parts: list[str] = []
    params: list[Any] = []
    for field, op, value in check_where(where):
        column = f"json_extract(payload, '$.{field}')"
        if op == "in":
            if not value:
                parts.append("0")
                continue
            parts.append(f"{column} IN ({', '.join('?' * len(value))})")
            params.extend(value)
        elif op == "=":
            parts.append(f"{column} IS ?" if value is None else f"{column} = ?")
            params.append(value)
        else:
            parts.append(f"{column} {RANGE_OPERATORS[op]} ?")
            params.append(value)
    return "".join(f" AND {p}" for p in parts), params


class SQLiteTextIndex(FusedSearch):
    """A `TextIndex` in one SQLite file (or a shared `SQLiteDatabase`, under table `name`).

    `indexed_fields` are payload fields given a B-tree index (per collection), for equality
    filters a store runs on every write (a content hash, a type). From `hnsw_threshold`
    vectors on, and if usearch is installed, vector search uses HNSW graphs (saved beside the
    file) instead of an exact scan; None keeps the exact scan at any size.
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
    ) -> None:
        self.name = check_name(name)
        self.embedder = load_embedder(embedder)
        self.oversample = oversample
        self._owns_db = not isinstance(db, SQLiteDatabase)
        self.db = db if isinstance(db, SQLiteDatabase) else SQLiteDatabase(db)
        check_where(dict.fromkeys(indexed_fields))
        script = _schema(name) + "".join(
            f"CREATE INDEX IF NOT EXISTS {name}_by_{f} ON {name}"
            f" (collection, json_extract(payload, '$.{f}'));\n"
            for f in indexed_fields
        )
        self.db.run_sync(lambda conn: conn.executescript(script))
        self._checked = False
        self.hnsw_threshold = hnsw_threshold
        self._matrix: VectorMatrix | HNSWVectors | None = None
        self._hnsw_dirty = False
        self._data_version: int | None = None
        self._matrix_lock = asyncio.Lock()
        # Vector searches and updates run in worker threads (a scan or a graph insert takes
        # milliseconds to seconds); this lock keeps them from interleaving.
        self._vectors_lock = threading.Lock()

    # -- dimension bookkeeping ---------------------------------------------------------------

    def _check_meta(self, conn: sqlite3.Connection) -> None:
        t = self.name
        rows = dict(conn.execute(f"SELECT key, value FROM {t}_meta").fetchall())
        dim, name = self.embedder.dim, self.embedder.name
        if not rows:
            conn.executemany(
                f"INSERT OR IGNORE INTO {t}_meta (key, value) VALUES (?, ?)",
                [("dim", str(dim)), ("embedder", name)],
            )
            return
        if int(rows["dim"]) != dim or rows["embedder"] != name:
            raise DimensionMismatch(
                f"{self.db.path} (index {t!r}) was built with embedder {rows['embedder']!r}"
                f" (dim {rows['dim']}); it was opened with {name!r} (dim {dim}). Open it with"
                f" embedder={rows['embedder']!r}, or rebuild the index with the new embedder."
            )

    async def _ready(self) -> None:
        if not self._checked:
            await self.db.run(self._check_meta)
            self._checked = True

    # -- writes ------------------------------------------------------------------------------

    async def write(
        self, upsert: Sequence[Record] = (), delete: Sequence[tuple[str, str]] = ()
    ) -> None:
        import numpy as np

        await self._ready()
        t = self.name
        keys = check_unique(upsert)

        def existing(conn: sqlite3.Connection) -> dict[tuple[str, str], tuple[str, bytes]]:
            found: dict[tuple[str, str], tuple[str, bytes]] = {}
            for collection, id_ in keys:
                row = conn.execute(
                    f"SELECT text, vector FROM {t} WHERE collection = ? AND id = ?",
                    (collection, id_),
                ).fetchone()
                if row is not None:
                    found[(collection, id_)] = (row[0], row[1])
            return found

        known = await self.db.run(existing) if keys else {}
        texts = {(r.collection, r.id): r.text for r in upsert}
        vectors = {k: blob for k, (text, blob) in known.items() if text == texts[k]}
        todo = [r for r in upsert if (r.collection, r.id) not in vectors]
        # Segmenting (jieba) and embedding both run off the loop, side by side.
        words, fresh = await asyncio.gather(
            asyncio.to_thread(lambda: [segmented(r.text) for r in upsert]),
            asyncio.to_thread(self.embedder.embed, [r.text for r in todo]),
        )
        for record, row in zip(todo, fresh, strict=True):
            vectors[(record.collection, record.id)] = np.asarray(row, np.float32).tobytes()

        def apply(conn: sqlite3.Connection) -> tuple[list[int], list[tuple[int, str, bytes]]]:
            removed: list[int] = []
            added: list[tuple[int, str, bytes]] = []
            for collection, id_ in delete:
                rowid = self._remove(conn, collection, id_)
                if rowid is not None:
                    removed.append(rowid)
            for record, segmented_words in zip(upsert, words, strict=True):
                old = self._remove(conn, record.collection, record.id)
                if old is not None:
                    removed.append(old)
                blob = vectors[(record.collection, record.id)]
                cursor = conn.execute(
                    f"INSERT INTO {t} (collection, id, text, payload, vector) VALUES (?,?,?,?,?)",
                    (record.collection, record.id, record.text, _dumps(record.payload), blob),
                )
                rowid = int(cursor.lastrowid or 0)
                conn.execute(
                    f"INSERT INTO {t}_words (rowid, words) VALUES (?, ?)", (rowid, segmented_words)
                )
                conn.execute(
                    f"INSERT INTO {t}_tri (rowid, text) VALUES (?, ?)", (rowid, record.text)
                )
                added.append((rowid, record.collection, blob))
            return removed, added

        removed, added = await self.db.transaction(apply)
        await asyncio.to_thread(self._apply_to_matrix, removed, added)

    def _remove(self, conn: sqlite3.Connection, collection: str, id_: str) -> int | None:
        t = self.name
        row = conn.execute(
            f"SELECT rowid FROM {t} WHERE collection = ? AND id = ?", (collection, id_)
        ).fetchone()
        if row is None:
            return None
        rowid = int(row[0])
        for table in (t, f"{t}_words", f"{t}_tri"):
            conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
        return rowid

    def _apply_to_matrix(self, removed: list[int], added: list[tuple[int, str, bytes]]) -> None:
        import numpy as np

        with self._vectors_lock:
            matrix = self._matrix
            if matrix is None:
                return
            self._hnsw_dirty = isinstance(matrix, HNSWVectors)
            matrix.remove(removed)
            if added:
                matrix.add(
                    [a[0] for a in added],
                    [a[1] for a in added],
                    np.frombuffer(b"".join(a[2] for a in added), np.float32),
                )

    async def delete_where(
        self, collection: str = DEFAULT_COLLECTION, where: Where | None = None
    ) -> int:
        await self._ready()
        clause, params = _sql_where(where)
        t = self.name

        def apply(conn: sqlite3.Connection) -> list[int]:
            rowids = [
                int(r[0])
                for r in conn.execute(
                    f"SELECT rowid FROM {t} WHERE collection = ?{clause}", [collection, *params]
                )
            ]
            for table in (t, f"{t}_words", f"{t}_tri"):
                conn.executemany(f"DELETE FROM {table} WHERE rowid = ?", [(r,) for r in rowids])
            return rowids

        rowids = await self.db.transaction(apply)
        await asyncio.to_thread(self._apply_to_matrix, rowids, [])
        return len(rowids)

    # -- reads -------------------------------------------------------------------------------

    async def get(self, ids: Sequence[str], collection: str = DEFAULT_COLLECTION) -> list[Record]:
        t = self.name

        def read(conn: sqlite3.Connection) -> list[Record]:
            found: dict[str, Record] = {}
            for start in range(0, len(ids), _CHUNK):
                chunk = list(ids[start : start + _CHUNK])
                rows = conn.execute(
                    f"SELECT id, text, payload FROM {t} WHERE collection = ?"
                    f" AND id IN ({', '.join('?' * len(chunk))})",
                    [collection, *chunk],
                )
                for id_, text, payload in rows:
                    found[id_] = Record(id_, text, json.loads(payload), collection)
            return [found[i] for i in ids if i in found]

        return await self.db.run(read)

    async def find(
        self,
        collection: str = DEFAULT_COLLECTION,
        where: Where | None = None,
        *,
        limit: int | None = None,
        order_by: str | None = None,
        descending: bool = False,
    ) -> list[Record]:
        clause, params = _sql_where(where)
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
        clause, params = _sql_where(where)
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
    ) -> list[Hit]:
        """Words (bm25), then substrings (trigram, bm25), then short-term LIKE matches."""
        terms = query_terms(query)
        if not terms:
            return []
        clause, params = _sql_where(where)
        t = self.name
        pieces = [p for p in query.split() if p]
        long_pieces = [p for p in dict.fromkeys(pieces + terms) if len(p) >= TRIGRAM_MIN_CHARS]
        short = [p for p in terms if len(p) < TRIGRAM_MIN_CHARS and has_cjk(p)]
        base = f"SELECT r.id, r.text, r.payload FROM {t} r"

        def read(conn: sqlite3.Connection) -> list[Record]:
            seen: dict[str, Record] = {}

            def ranked(table: str, match: str) -> None:
                # FTS5 ranks fastest with ORDER BY rank LIMIT n in the virtual table itself;
                # filters apply afterwards, so widen n until enough pass or matches run out.
                want = limit * self.oversample
                while True:
                    rows = conn.execute(
                        f"{base} JOIN (SELECT rowid, rank FROM {table} WHERE {table} MATCH ?"
                        f" ORDER BY rank LIMIT ?) m ON m.rowid = r.rowid"
                        f" WHERE r.collection = ?{clause} ORDER BY m.rank",
                        [match, want, collection, *params],
                    ).fetchall()
                    matched = conn.execute(
                        f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ?"
                        " LIMIT ?)",
                        [match, want],
                    ).fetchone()[0]
                    if len(rows) + len(seen) >= limit or matched < want:
                        break
                    want *= 8
                for id_, text, payload in rows:
                    if id_ not in seen and len(seen) < limit:
                        seen[id_] = Record(id_, text, json.loads(payload), collection)

            ranked(f"{t}_words", fts5_match(terms))
            if long_pieces and len(seen) < limit:
                ranked(f"{t}_tri", fts5_match(long_pieces))
            for term in short:
                if len(seen) >= limit:
                    break
                rows = conn.execute(
                    f"{base} WHERE r.text LIKE ? ESCAPE '\\' AND r.collection = ?{clause}"
                    " ORDER BY r.rowid DESC LIMIT ?",
                    [like_pattern(term), collection, *params, limit],
                ).fetchall()
                for id_, text, payload in rows:
                    if id_ not in seen and len(seen) < limit:
                        seen[id_] = Record(id_, text, json.loads(payload), collection)
            return list(seen.values())

        return [Hit(r, 0.0, keyword_rank=i) for i, r in enumerate(await self.db.run(read), start=1)]

    async def vector_search(
        self,
        query: str,
        *,
        limit: int,
        collection: str = DEFAULT_COLLECTION,
        where: Where | None = None,
    ) -> list[Hit]:
        await self._ready()
        matrix = await self._loaded_matrix()
        clause, params = _sql_where(where)
        vector = (await asyncio.to_thread(self.embedder.embed, [query]))[0]
        want = limit * self.oversample if clause else limit
        t = self.name

        def nearest(want: int) -> tuple[list[tuple[int, float]], int]:
            with self._vectors_lock:
                return matrix.search(vector, want, collection), matrix.count(collection)

        while True:
            candidates, available = await asyncio.to_thread(nearest, want)
            scores = dict(candidates)
            rowids = list(scores)

            def read(
                conn: sqlite3.Connection, rowids: list[int] = rowids
            ) -> list[tuple[int, Record]]:
                out = []
                for start in range(0, len(rowids), _CHUNK):
                    chunk = rowids[start : start + _CHUNK]
                    sql = (
                        f"SELECT rowid, id, text, payload FROM {t} WHERE rowid IN"
                        f" ({', '.join('?' * len(chunk))}){clause}"
                    )
                    for rowid, id_, text, payload in conn.execute(sql, [*chunk, *params]):
                        out.append((int(rowid), Record(id_, text, json.loads(payload), collection)))
                return out

            found = await self.db.run(read)
            if len(found) >= limit or want >= available:
                break
            want *= 8
        found.sort(key=lambda pair: -scores[pair[0]])
        return [Hit(r, scores[rowid], vector_score=scores[rowid]) for rowid, r in found[:limit]]

    async def _loaded_matrix(self) -> VectorMatrix | HNSWVectors:
        import numpy as np

        async with self._matrix_lock:
            version = int(
                await self.db.run(lambda c: c.execute("PRAGMA data_version").fetchone()[0])
            )
            if self._matrix is not None and version == self._data_version:
                return self._matrix
            dim = self.embedder.dim
            t = self.name
            fingerprint = await self.db.run(self._fingerprint)
            matrix: VectorMatrix | HNSWVectors
            use_hnsw = (
                self.hnsw_threshold is not None
                and fingerprint[0] >= self.hnsw_threshold
                and self.db.path != ":memory:"
                and hnsw_available()
            )
            loaded = HNSWVectors.load(self._hnsw_dir, dim, fingerprint) if use_hnsw else None
            if loaded is not None:
                matrix, self._hnsw_dirty = loaded, False
            else:
                matrix = HNSWVectors(dim) if use_hnsw else VectorMatrix(dim)
                self._hnsw_dirty = use_hnsw

                def load(conn: sqlite3.Connection) -> None:
                    cursor = conn.execute(f"SELECT rowid, collection, vector FROM {t}")
                    while batch := cursor.fetchmany(20_000):
                        matrix.add(
                            [b[0] for b in batch],
                            [b[1] for b in batch],
                            np.frombuffer(b"".join(b[2] for b in batch), np.float32),
                        )

                await self.db.run(load)
            self._matrix = matrix
            self._data_version = version
            return matrix

    @property
    def _hnsw_dir(self) -> Path:
        return Path(f"{self.db.path}.{self.name}.hnsw")

    def _fingerprint(self, conn: sqlite3.Connection) -> list[Any]:
        """What identifies the rows an HNSW graph was built from (replacing a row changes it)."""
        count, top, total = conn.execute(
            f"SELECT count(*), coalesce(max(rowid), 0), total(rowid) FROM {self.name}"
        ).fetchone()
        return [int(count), int(top), float(total), self.embedder.name]

    async def close(self) -> None:
        """Save HNSW graphs changed since they were loaded, then release the file."""
        if isinstance(self._matrix, HNSWVectors) and self._hnsw_dirty:
            fingerprint = await self.db.run(self._fingerprint)
            await asyncio.to_thread(self._matrix.save, self._hnsw_dir, fingerprint)
        self._matrix = None
        if self._owns_db:
            await self.db.close()


def _dumps(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
