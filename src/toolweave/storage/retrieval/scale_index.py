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
is never returned.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Sequence
from typing import Any

from toolweave.storage.errors import ConfigError, DimensionMismatch
from toolweave.storage.retrieval._pg_bm25 import (
    TEXT_CONFIG,
    TEXT_CONFIG_SQL,
    CollectionStats,
    bm25_rows,
    tsvector_words,
)
from toolweave.storage.retrieval.embedders import Embedder, load_embedder
from toolweave.storage.retrieval.fusion import SUBSTRING_SHARE, FusionWeights, weights_for
from toolweave.storage.retrieval.index import (
    DEFAULT_COLLECTION,
    DEFAULT_MAX_QUERY_TERMS,
    RANGE_OPERATORS,
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

_POINT_NAMESPACE = uuid.UUID("5b0e7f1c-8a52-4a59-9d0b-2f6f1c0f7a11")
_REINDEX_BATCH = 500


def point_id(collection: str, id_: str) -> str:
    """The Qdrant point id of a record (Qdrant accepts only UUIDs and integers)."""
    return str(uuid.uuid5(_POINT_NAMESPACE, f"{collection}\x00{id_}"))


def _sql_where(where: Where | None) -> tuple[str, list[Any]]:
    parts: list[str] = []
    params: list[Any] = []
    for field, op, value in check_where(where):
        if op == "in":
            if not value:
                parts.append("false")
                continue
            parts.append(f"payload->'{field}' IN ({', '.join(['%s::jsonb'] * len(value))})")
            params.extend(json.dumps(v) for v in value)
        elif op == "=":
            if value is None:
                parts.append(f"coalesce(payload->'{field}', 'null'::jsonb) = 'null'::jsonb")
            else:
                parts.append(f"payload->'{field}' = %s::jsonb")
                params.append(json.dumps(value))
        else:
            parts.append(f"(payload->>'{field}')::float8 {RANGE_OPERATORS[op]} %s")
            params.append(float(value))
    return "".join(f" AND {p}" for p in parts), params


def _qdrant_filter(collection: str, where: Where | None) -> Any:
    from qdrant_client import models

    must: list[Any] = [
        models.FieldCondition(key="collection", match=models.MatchValue(value=collection))
    ]
    for field, op, value in check_where(where):
        key = f"payload.{field}"
        if op == "in":
            must.append(models.FieldCondition(key=key, match=models.MatchAny(any=value)))
        elif op == "=":
            if value is None:
                must.append(models.IsNullCondition(is_null=models.PayloadField(key=key)))
            elif isinstance(value, float):
                must.append(
                    models.FieldCondition(key=key, range=models.Range(gte=value, lte=value))
                )
            else:
                must.append(models.FieldCondition(key=key, match=models.MatchValue(value=value)))
        else:
            must.append(models.FieldCondition(key=key, range=models.Range(**{op: float(value)})))
    return models.Filter(must=must)


class PostgresQdrantIndex(FusedSearch):
    """A `TextIndex` over Postgres (rows, words) and Qdrant (vectors, payload filters).

    `qdrant_url` names a Qdrant server or cluster; `qdrant_path` uses the client's local mode (a
    directory; tests and single-machine trials). Tables are `<name>`, `<name>_meta` in the
    connection's search path; the Qdrant collection is `<name>`. `indexed_fields` get a B-tree
    index on `(collection, payload->field)` for the equality filters run on every write.
    `fusion` and `max_query_terms` as in `SQLiteTextIndex`.
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
        self._qdrant_args: dict[str, Any] = (
            {"url": qdrant_url, "api_key": qdrant_api_key} if qdrant_url else {"path": qdrant_path}
        )
        self._conn: Any = None
        self._qdrant: Any = None
        self._lock = asyncio.Lock()
        self._stats = CollectionStats()

    # -- connection and schema ----------------------------------------------------------------

    async def _open(self) -> tuple[Any, Any]:
        if self._conn is not None:
            return self._conn, self._qdrant
        import psycopg
        from qdrant_client import AsyncQdrantClient, models

        conn = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
        t = self.name
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (t,))
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS {t}_meta (key text PRIMARY KEY, value text NOT NULL)"
            )
            await conn.execute(
                f"""CREATE TABLE IF NOT EXISTS {t} (
                    collection text NOT NULL, id text NOT NULL, text text NOT NULL,
                    payload jsonb NOT NULL, words tsvector NOT NULL,
                    PRIMARY KEY (collection, id))"""
            )
            await conn.execute(f"CREATE INDEX IF NOT EXISTS {t}_words_idx ON {t} USING gin (words)")
            await conn.execute(TEXT_CONFIG_SQL)
            for f in self.indexed_fields:
                await conn.execute(
                    f"CREATE INDEX IF NOT EXISTS {t}_by_{f} ON {t} (collection, (payload->'{f}'))"
                )
            cursor = await conn.execute(f"SELECT key, value FROM {t}_meta")
            meta: dict[str, str] = dict(await cursor.fetchall())
            dim, embedder_name = self.embedder.dim, self.embedder.name
            if not meta:
                await conn.execute(
                    f"INSERT INTO {t}_meta VALUES ('dim', %s), ('embedder', %s), ('text', %s)",
                    (str(dim), embedder_name, TEXT_CONFIG),
                )
            elif meta.get("text") != TEXT_CONFIG:
                await _reindex_words(conn, t)
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
        if meta and (int(meta["dim"]) != dim or meta["embedder"] != embedder_name):
            await conn.close()
            raise DimensionMismatch(
                f"Postgres index {t!r} was built with embedder {meta['embedder']!r}"
                f" (dim {meta['dim']}); it was opened with {embedder_name!r} (dim {dim})."
                f" Open it with embedder={meta['embedder']!r}, or rebuild the index."
            )
        qdrant = AsyncQdrantClient(**self._qdrant_args)
        if not await qdrant.collection_exists(t):
            await qdrant.create_collection(
                t, vectors_config=models.VectorParams(size=dim, distance=models.Distance.COSINE)
            )
        else:
            info = await qdrant.get_collection(t)
            size = info.config.params.vectors.size  # type: ignore[union-attr]
            if size != dim:
                await conn.close()
                await qdrant.close()
                raise DimensionMismatch(
                    f"Qdrant collection {t!r} holds {size}-dim vectors; the embedder"
                    f" {embedder_name!r} makes {dim}-dim ones. Use the embedder it was built with."
                )
        self._conn, self._qdrant = conn, qdrant
        return conn, qdrant

    # -- writes ------------------------------------------------------------------------------

    async def write(
        self, upsert: Sequence[Record] = (), delete: Sequence[tuple[str, str]] = ()
    ) -> None:
        from qdrant_client import models

        keys = check_unique(upsert)
        for collection, _ in [*keys, *delete]:
            self._stats.wrote(collection, 1)
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
            if unchanged:
                points = await qdrant.retrieve(t, ids=list(unchanged), with_vectors=True)
                reused = {str(p.id): p.vector for p in points}
            todo = [r for r in upsert if point_id(r.collection, r.id) not in reused]
            # Segmenting (jieba) and embedding both run off the loop, side by side.
            words, fresh = await asyncio.gather(
                asyncio.to_thread(tsvector_words, [r.text for r in upsert]),
                asyncio.to_thread(self.embedder.embed, [r.text for r in todo]),
            )
            vectors = dict(reused)
            for record, row in zip(todo, fresh, strict=True):
                vectors[point_id(record.collection, record.id)] = [float(x) for x in row]
            async with conn.transaction():
                for collection, id_ in delete:
                    await conn.execute(
                        f"DELETE FROM {t} WHERE collection = %s AND id = %s", (collection, id_)
                    )
                if upsert:
                    async with conn.cursor() as cursor:
                        await cursor.executemany(
                            f"""INSERT INTO {t} (collection, id, text, payload, words)
                            VALUES (%s, %s, %s, %s::jsonb, to_tsvector('{TEXT_CONFIG}', %s))
                            ON CONFLICT (collection, id) DO UPDATE SET text = EXCLUDED.text,
                            payload = EXCLUDED.payload, words = EXCLUDED.words""",
                            [
                                (
                                    r.collection,
                                    r.id,
                                    r.text,
                                    payload_json(r),
                                    segmented_words,
                                )
                                for r, segmented_words in zip(upsert, words, strict=True)
                            ],
                        )
                if delete:
                    await qdrant.delete(
                        t,
                        points_selector=models.PointIdsList(
                            points=[point_id(c, i) for c, i in delete]
                        ),
                    )
                if upsert:
                    await qdrant.upsert(
                        t,
                        points=[
                            models.PointStruct(
                                id=point_id(r.collection, r.id),
                                vector=vectors[point_id(r.collection, r.id)],
                                payload={
                                    "collection": r.collection,
                                    "id": r.id,
                                    "payload": r.payload,
                                },
                            )
                            for r in upsert
                        ],
                    )

    async def delete_where(
        self, collection: str = DEFAULT_COLLECTION, where: Where | None = None
    ) -> int:
        from qdrant_client import models

        clause, params = _sql_where(where)
        async with self._lock:
            conn, qdrant = await self._open()
            async with conn.transaction():
                cursor = await conn.execute(
                    f"DELETE FROM {self.name} WHERE collection = %s{clause} RETURNING id",
                    [collection, *params],
                )
                ids = [row[0] for row in await cursor.fetchall()]
                self._stats.wrote(collection, len(ids))
                if ids:
                    await qdrant.delete(
                        self.name,
                        points_selector=models.PointIdsList(
                            points=[point_id(collection, i) for i in ids]
                        ),
                    )
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
        clause, params = _sql_where(where)
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
        clause, params = _sql_where(where)
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
        clause, params = _sql_where(where)
        t = self.name
        stats = await self._stats.get(self._rows, t, collection)
        rows = await bm25_rows(
            self._rows,
            t,
            config=TEXT_CONFIG,
            words=" ".join(keyword_terms(query)),
            collection=collection,
            stats=stats,
            clause=clause,
            params=params,
            limit=limit,
            max_terms=self.max_query_terms,
        )
        seen = {r[0]: Record(r[0], r[1], r[2], collection) for r in rows}
        scores = {r[0]: float(r[3]) for r in rows}
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
        vector = (await asyncio.to_thread(self.embedder.embed, [query]))[0]
        async with self._lock:
            _, qdrant = await self._open()
            response = await qdrant.query_points(
                self.name,
                query=[float(x) for x in vector],
                query_filter=_qdrant_filter(collection, where),
                limit=limit,
                with_payload=["id"],
            )
        scores = {str(p.payload["id"]): float(p.score) for p in response.points}
        records = await self.get(list(scores), collection)
        return [IndexHit(r, scores[r.id], vector_score=scores[r.id]) for r in records]

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

    async def close(self) -> None:
        async with self._lock:
            if self._conn is not None:
                await self._conn.close()
                await self._qdrant.close()
                self._conn = self._qdrant = None


async def _reindex_words(conn: Any, t: str) -> None:
    """Rebuild every row's tsvector with `TEXT_CONFIG` (inside the caller's transaction)."""
    cursor = await conn.execute(f"SELECT collection, id, text FROM {t}")
    rows = await cursor.fetchall()
    for start in range(0, len(rows), _REINDEX_BATCH):
        batch = rows[start : start + _REINDEX_BATCH]
        words = await asyncio.to_thread(tsvector_words, [r[2] for r in batch])
        async with conn.cursor() as update:
            await update.executemany(
                f"UPDATE {t} SET words = to_tsvector('{TEXT_CONFIG}', %s)"
                " WHERE collection = %s AND id = %s",
                [(w, r[0], r[1]) for w, r in zip(words, batch, strict=True)],
            )
    await conn.execute(
        f"INSERT INTO {t}_meta VALUES ('text', %s)"
        " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        (TEXT_CONFIG,),
    )
