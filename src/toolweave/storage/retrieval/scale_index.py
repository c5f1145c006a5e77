"""`PostgresQdrantIndex`: the scale-out `TextIndex`, for stores several machines share.

Postgres (psycopg 3, async) is the source of truth for rows and full text: the words the
embedded index ranks by, in a tsvector of `TEXT_CONFIG` (GIN-indexed; Chinese words, jieba's,
match as words with no server extension, English words are Porter-stemmed as FTS5 stems them,
no stop word is dropped; a store made with another configuration is re-indexed once when
opened), and substring matches by `strpos` for terms the words miss. Qdrant (the client's
local mode in tests, a cluster URL in production) holds the vectors with a copy of the
payload, so payload filters run inside the vector search. A write goes into one Postgres
transaction and into Qdrant before that transaction commits: a Qdrant failure rolls the rows
back, and vector hits are always joined back to the rows, so a point whose rows never committed
is never returned. A row written while the embedder failed (`embed_guard`) has no point and
`vectored` false until `reembed` gives it one; a row of empty text has nothing to embed: no
point, and `vectored` true.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from toolweave.storage.errors import ConfigError, DimensionMismatch
from toolweave.storage.retrieval._pg_bm25 import TEXT_CONFIG, tsvector_words
from toolweave.storage.retrieval._pg_postings import PgPostings, best_rows, lock_writes, written
from toolweave.storage.retrieval._pg_rows import (
    create_tables,
    nearest_points,
    point_id,
    qdrant_point,
    reindex_words,
    sql_where,
)
from toolweave.storage.retrieval._pg_warm import PgPostingsWarmer
from toolweave.storage.retrieval.embed_guard import (
    DEFAULT_EMBED_RETRY,
    REEMBED_BATCH,
    EmbedderGuard,
    EmbedRetry,
)
from toolweave.storage.retrieval.embedders import Embedder, load_embedder
from toolweave.storage.retrieval.fusion import SUBSTRING_SHARE, FusionWeights, weights_for
from toolweave.storage.retrieval.index import (
    DEFAULT_COLLECTION,
    DEFAULT_MAX_QUERY_TERMS,
    DEFAULT_POSTINGS_KEPT,
    SUBSTRING_FALLBACK,
    FusedSearch,
    IndexHit,
    Record,
    Where,
    check_limit,
    check_name,
    check_unique,
    check_where,
    payload_json,
)
from toolweave.storage.text import TRIGRAM_MIN_CHARS, has_cjk, keyword_terms, query_terms

MISSING_VECTOR = "NOT vectored AND text <> ''"
"""Rows still owed a vector: a row of empty text has none to get (older code wrote such rows,
a knowledge base's document records, unvectored during an embedder outage)."""


class PostgresQdrantIndex(FusedSearch):
    """A `TextIndex` over Postgres (rows, words) and Qdrant (vectors, payload filters).

    `qdrant_url` names a Qdrant server or cluster; `qdrant_path` uses the client's local mode (a
    directory; tests and single-machine trials). Tables are `<name>`, `<name>_meta` in the
    connection's search path; the Qdrant collection is `<name>`. `indexed_fields` get a B-tree
    index on `(collection, payload->field)` for the equality filters run on every write.
    `fusion`, `max_query_terms`, `postings_kept` (the word postings held in memory, read ahead
    in the background: `_pg_warm`) and `embed_retry` as in `SQLiteTextIndex`.
    """

    def __init__(
        self,
        dsn: str,
        embedder: Embedder | str = "auto",
        *,
        qdrant_url: str | None = None,
        qdrant_path: str | None = None,
        qdrant_api_key: str | None = None,
        name: str = "records",
        indexed_fields: Sequence[str] = (),
        fusion: FusionWeights | None = None,
        max_query_terms: int = DEFAULT_MAX_QUERY_TERMS,
        embed_retry: EmbedRetry = DEFAULT_EMBED_RETRY,
        postings_kept: int = DEFAULT_POSTINGS_KEPT,
    ) -> None:
        self.max_query_terms = check_limit(max_query_terms, name="max_query_terms")
        self._fusion_given = fusion
        self.fusion = fusion
        if (qdrant_url is None) == (qdrant_path is None):
            raise ConfigError("PostgresQdrantIndex: pass exactly one of qdrant_url or qdrant_path")
        check_where(dict.fromkeys(indexed_fields))
        self.indexed_fields = tuple(indexed_fields)
        self.dsn = dsn
        self.name = check_name(name)
        self.embedder = load_embedder(embedder)
        self.guard = EmbedderGuard(self.embedder, embed_retry)
        self._dim: int | None = None  # known when the embedder answers or the store records it
        self._qdrant_args: dict[str, Any] = (
            {"url": qdrant_url, "api_key": qdrant_api_key} if qdrant_url else {"path": qdrant_path}
        )
        self._conn: Any = None
        self._qdrant: Any = None
        self._lock = asyncio.Lock()
        self._postings = PgPostings(self.name, check_limit(postings_kept, name="postings_kept"))
        self._warmer = PgPostingsWarmer(dsn, self._postings)

    # -- connection and schema ----------------------------------------------------------------

    async def _open(self) -> tuple[Any, Any]:
        if self._conn is not None:
            return self._conn, self._qdrant
        import psycopg
        from qdrant_client import AsyncQdrantClient

        conn = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
        t = self.name
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (t,))
            await create_tables(conn, t, self.indexed_fields)
            cursor = await conn.execute(f"SELECT key, value FROM {t}_meta")
            meta: dict[str, str] = dict(await cursor.fetchall())
            embedder_name = self.embedder.name
            dim = self.guard.dim(int(meta["dim"]) if "dim" in meta else None)
            if not meta:
                await conn.execute(f"INSERT INTO {t}_meta VALUES ('text', %s)", (TEXT_CONFIG,))
            elif meta.get("text") != TEXT_CONFIG:
                await reindex_words(conn, t)
            stored = meta.get("fusion")
            fusion = self._fusion_given or (
                FusionWeights.from_json(stored) if stored else weights_for(embedder_name)
            )
            if fusion.to_json() != stored:
                await conn.execute(
                    f"INSERT INTO {t}_meta VALUES ('fusion', %s)"
                    " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                    (fusion.to_json(),),
                )
            self.fusion = fusion
            cursor = await conn.execute(f"SELECT 1 FROM {t} WHERE {MISSING_VECTOR} LIMIT 1")
            self.guard.missing = self.guard.missing or bool(await cursor.fetchall())
        if "dim" in meta and (int(meta["dim"]) != dim or meta["embedder"] != embedder_name):
            await conn.close()
            raise DimensionMismatch(
                f"Postgres index {t!r} was built with embedder {meta['embedder']!r}"
                f" (dim {meta['dim']}); it was opened with {embedder_name!r} (dim {dim})."
                f" Open it with embedder={meta['embedder']!r}, or rebuild the index."
            )
        self._conn, self._qdrant = conn, AsyncQdrantClient(**self._qdrant_args)
        try:
            await self._vectors_ready(dim)
        except DimensionMismatch:
            await self._conn.close()
            await self._qdrant.close()
            self._conn = self._qdrant = None
            raise
        self._warmer.soon()
        return self._conn, self._qdrant

    async def _vectors_ready(self, dim: int | None) -> bool:
        """Record the dimension and make the Qdrant collection once it is known (an index
        opened while the embedder fails, on a store that records none, learns it later);
        whether vectors can be stored and searched."""
        from qdrant_client import models

        if self._dim is not None or dim is None:
            return self._dim is not None
        t, qdrant = self.name, self._qdrant
        await self._conn.execute(
            f"INSERT INTO {t}_meta VALUES ('dim', %s), ('embedder', %s) ON CONFLICT DO NOTHING",
            (str(dim), self.embedder.name),
        )
        if not await qdrant.collection_exists(t):
            await qdrant.create_collection(
                t, vectors_config=models.VectorParams(size=dim, distance=models.Distance.COSINE)
            )
        else:
            info = await qdrant.get_collection(t)
            size = info.config.params.vectors.size
            if size != dim:
                raise DimensionMismatch(
                    f"Qdrant collection {t!r} holds {size}-dim vectors; the embedder"
                    f" {self.embedder.name!r} makes {dim}-dim ones. Use the embedder it was"
                    " built with."
                )
        self._dim = dim
        return True

    # -- writes ------------------------------------------------------------------------------

    async def write(
        self, upsert: Sequence[Record] = (), delete: Sequence[tuple[str, str]] = ()
    ) -> None:
        from qdrant_client import models

        keys = check_unique(upsert)
        async with self._lock:
            conn, qdrant = await self._open()
            t = self.name
            texts = {(r.collection, r.id): r.text for r in upsert}
            unchanged: set[str] = set()
            if keys:
                cursor = await conn.execute(
                    f"SELECT collection, id, text FROM {t} WHERE (collection, id) IN"
                    f" ({', '.join(['(%s, %s)'] * len(keys))})",
                    [part for key in keys for part in key],
                )
                for collection, id_, text in await cursor.fetchall():
                    if texts[(collection, id_)] == text:
                        unchanged.add(point_id(collection, id_))
            reused: dict[str, Any] = {}
            if unchanged and self._dim is not None:
                points = await qdrant.retrieve(t, ids=list(unchanged), with_vectors=True)
                reused = {str(p.id): p.vector for p in points}
            todo = [r for r in upsert if r.text and point_id(r.collection, r.id) not in reused]
            # Segmenting (jieba) and embedding both run off the loop, side by side.
            words, fresh = await asyncio.gather(
                asyncio.to_thread(tsvector_words, [r.text for r in upsert]),
                self._embedded([r.text for r in todo]),
            )
            vectors = dict(reused)
            if todo and (fresh is None or not await self._vectors_ready(self.embedder.dim)):
                self.guard.missing = True
            elif fresh is not None:
                for record, row in zip(todo, fresh, strict=True):
                    vectors[point_id(record.collection, record.id)] = [float(x) for x in row]
            # A record whose vector is not made now loses its old point (and is re-embedded,
            # unless its text is empty).
            stale = [p for r in upsert if (p := point_id(r.collection, r.id)) not in vectors]
            async with conn.transaction():
                before = await lock_writes(conn, t)
                for collection, id_ in delete:
                    await conn.execute(
                        f"DELETE FROM {t} WHERE collection = %s AND id = %s", (collection, id_)
                    )
                if upsert:
                    async with conn.cursor() as cursor:
                        await cursor.executemany(
                            f"""INSERT INTO {t} (collection, id, text, payload, words, vectored)
                            VALUES (%s, %s, %s, %s::jsonb, to_tsvector('{TEXT_CONFIG}', %s), %s)
                            ON CONFLICT (collection, id) DO UPDATE SET text = EXCLUDED.text,
                            payload = EXCLUDED.payload, words = EXCLUDED.words,
                            vectored = EXCLUDED.vectored""",
                            [
                                (
                                    r.collection,
                                    r.id,
                                    r.text,
                                    payload_json(r),
                                    segmented_words,
                                    point_id(r.collection, r.id) in vectors or not r.text,
                                )
                                for r, segmented_words in zip(upsert, words, strict=True)
                            ],
                        )
                gone: list[Any] = [*(point_id(c, i) for c, i in delete), *stale]
                if gone and self._dim is not None:
                    await qdrant.delete(t, points_selector=models.PointIdsList(points=gone))
                if vectors:
                    points = [
                        qdrant_point(r.collection, r.id, r.payload, vectors[key])
                        for r in upsert
                        if (key := point_id(r.collection, r.id)) in vectors
                    ]
                    await qdrant.upsert(t, points=points)
                after, rows = await written(conn, t, keys)
            self._postings.committed(before, after, [*delete, *keys], rows)
        self._warmer.soon()

    async def _embedded(self, texts: list[str]) -> Any | None:
        """The texts' vectors (None when there are none or the embedder failed)."""
        return await asyncio.to_thread(self.guard.embed, texts) if texts else None

    async def delete_where(
        self, collection: str = DEFAULT_COLLECTION, where: Where | None = None
    ) -> int:
        from qdrant_client import models

        clause, params = sql_where(where)
        async with self._lock:
            conn, qdrant = await self._open()
            async with conn.transaction():
                before = await lock_writes(conn, self.name)
                cursor = await conn.execute(
                    f"DELETE FROM {self.name} WHERE collection = %s{clause} RETURNING id",
                    [collection, *params],
                )
                ids = [row[0] for row in await cursor.fetchall()]
                after, _ = await written(conn, self.name, [])
                if ids and self._dim is not None:
                    await qdrant.delete(
                        self.name,
                        points_selector=models.PointIdsList(
                            points=[point_id(collection, i) for i in ids]
                        ),
                    )
            self._postings.committed(before, after, [(collection, i) for i in ids], {})
        self._warmer.soon()
        return len(ids)

    # -- reads -------------------------------------------------------------------------------

    async def _rows(self, sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        async with self._lock:
            conn, _ = await self._open()
            cursor = await conn.execute(sql, params)
            return list(await cursor.fetchall())

    async def get(self, ids: Sequence[str], collection: str = DEFAULT_COLLECTION) -> list[Record]:
        if not ids:
            return []
        rows = await self._rows(
            f"SELECT id, text, payload FROM {self.name} WHERE collection = %s AND id = ANY(%s)",
            [collection, list(ids)],
        )
        by_id = {r[0]: Record(r[0], r[1], r[2], collection) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

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
        order = "ctid"
        if order_by is not None:
            check_where({order_by: None})
            order = f"(payload->>'{order_by}')::float8{' DESC' if descending else ''}, id"
        sql = (
            f"SELECT id, text, payload FROM {self.name}"
            f" WHERE collection = %s{clause} ORDER BY {order}"
        )
        if limit is not None:
            sql += f" LIMIT {check_limit(limit)}"
        rows = await self._rows(sql, [collection, *params])
        return [Record(r[0], r[1], r[2], collection) for r in rows]

    async def count(self, collection: str = DEFAULT_COLLECTION, where: Where | None = None) -> int:
        clause, params = sql_where(where)
        rows = await self._rows(
            f"SELECT count(*) FROM {self.name} WHERE collection = %s{clause}", [collection, *params]
        )
        return int(rows[0][0])

    async def collections(self) -> list[str]:
        rows = await self._rows(f"SELECT DISTINCT collection FROM {self.name} ORDER BY 1", [])
        return [r[0] for r in rows]

    # -- search ------------------------------------------------------------------------------

    async def keyword_search(
        self,
        query: str,
        *,
        limit: int,
        collection: str = DEFAULT_COLLECTION,
        where: Where | None = None,
    ) -> list[IndexHit]:
        """Words (bm25 over the segmented tsvector, `_pg_bm25`), then substrings of the
        query's pieces."""
        terms = query_terms(query)
        if not terms:
            return []
        clause, params = sql_where(where)
        t = self.name
        async with self._lock:
            conn, _ = await self._open()
            ids, found, scored = await self._postings.scores(
                conn, collection, " ".join(keyword_terms(query)), self.max_query_terms
            )
        self._warmer.soon()  # another writer's write made the postings be read again
        found_rows = await best_rows(
            self._rows, t, collection, (ids, found, scored), clause, params, limit
        )
        seen = {r[0]: Record(r[0], r[1], r[2], collection) for r in found_rows}
        scores = {r[0]: float(r[3]) for r in found_rows}
        floor = min(scores.values(), default=1.0) * SUBSTRING_SHARE
        pieces = [p for p in query.split() if len(p) >= TRIGRAM_MIN_CHARS]
        pieces += [p for p in terms if has_cjk(p)]
        substrings = min(limit, SUBSTRING_FALLBACK)
        for piece in dict.fromkeys(pieces):
            if len(seen) >= substrings:
                break
            rows = await self._rows(
                f"""SELECT id, text, payload FROM {t} WHERE collection = %s{clause}
                AND strpos(lower(text), lower(%s)) > 0 ORDER BY id LIMIT %s""",
                [collection, *params, piece, substrings],
            )
            for r in rows:
                if r[0] not in seen and len(seen) < substrings:
                    seen[r[0]] = Record(r[0], r[1], r[2], collection)
                    scores[r[0]] = floor
        return [
            IndexHit(r, 0.0, keyword_rank=i, keyword_score=scores[r.id])
            for i, r in enumerate(seen.values(), start=1)
        ]

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
        async with self._lock:
            _, qdrant = await self._open()
            if not await self._vectors_ready(self.embedder.dim):
                return []
            alone = where is None and self._postings.only(collection)
        # Qdrant's own request runs outside the lock, beside the keyword side's Postgres ones.
        points = await nearest_points(qdrant, self.name, vector, limit, collection, where, alone)
        scores = {str(p.payload["id"]): float(p.score) for p in points}
        records = await self.get(list(scores), collection)
        return [IndexHit(r, scores[r.id], vector_score=scores[r.id]) for r in records]

    async def missing_vectors(self, collection: str | None = None) -> int:
        sql = f"SELECT count(*) FROM {self.name} WHERE {MISSING_VECTOR} AND %s IN (collection, '*')"
        return int((await self._rows(sql, [collection or "*"]))[0][0])

    async def reembed(self) -> int:
        done, after = 0, ("", "")
        sql = (
            f"SELECT collection, id, text, payload FROM {self.name} WHERE {MISSING_VECTOR}"
            f" AND (collection, id) > (%s, %s) ORDER BY collection, id LIMIT {REEMBED_BATCH}"
        )
        while rows := await self._rows(sql, after):
            vectors = await asyncio.to_thread(self.guard.embed, [r[2] for r in rows])
            if vectors is None:
                return done
            done += await self._fill_vectors(rows, vectors)
            after = (rows[-1][0], rows[-1][1])
        self.guard.missing = False
        return done

    async def _fill_vectors(self, rows: list[tuple[Any, ...]], vectors: Any) -> int:
        """Store these rows' vectors, unless a row was replaced or removed since it was read."""
        t = self.name
        async with self._lock:
            conn, qdrant = await self._open()
            await self._vectors_ready(self.embedder.dim)
            async with conn.transaction():
                cursor = await conn.execute(
                    f"UPDATE {t} SET vectored = true WHERE NOT vectored AND (collection, id, text)"
                    f" IN ({', '.join(['(%s, %s, %s)'] * len(rows))}) RETURNING collection, id",
                    [part for r in rows for part in r[:3]],
                )
                filled = {tuple(key) for key in await cursor.fetchall()}
                points = [
                    qdrant_point(r[0], r[1], r[3], v)
                    for r, v in zip(rows, vectors, strict=True)
                    if (r[0], r[1]) in filled
                ]
                if points:
                    await qdrant.upsert(t, points=points)
        return len(points)

    async def recorded_embedder(self) -> tuple[str, int] | None:
        """Opening checks the stored embedder against `embedder`, so once open they agree."""
        rows = await self._rows(
            f"SELECT key, value FROM {self.name}_meta WHERE key IN ('embedder', 'dim')", []
        )
        meta = {str(key): str(value) for key, value in rows}
        return (meta["embedder"], int(meta["dim"])) if len(meta) == 2 else None

    async def stored_fusion(self) -> FusionWeights:
        async with self._lock:
            await self._open()
        assert self.fusion is not None
        return self.fusion

    async def warm_postings(self) -> int:
        """Read every collection's postings now (or wait for the background read) instead of
        at the first search of each; the postings held (at most `postings_kept`)."""
        async with self._lock:
            await self._open()
        return await self._warmer.wait()

    async def close(self) -> None:
        await self._warmer.close()
        async with self._lock:
            if self._conn is not None:
                await self._conn.close()
                await self._qdrant.close()
                self._conn = self._qdrant = None
