"""Row helpers of the scale-out index: payload filters (`where`) as SQL over the rows' JSONB
payload and as a Qdrant filter inside the vector search, Qdrant point ids, and the one-time
re-indexing of the words of a store made with another text configuration."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Sequence
from typing import Any

from toolweave.storage.retrieval._pg_bm25 import TEXT_CONFIG, TEXT_CONFIG_SQL, tsvector_words
from toolweave.storage.retrieval._pg_postings import count_writes_sql
from toolweave.storage.retrieval.index import RANGE_OPERATORS, Where, check_where

_POINT_NAMESPACE = uuid.UUID("5b0e7f1c-8a52-4a59-9d0b-2f6f1c0f7a11")
_REINDEX_BATCH = 500


def point_id(collection: str, id_: str) -> str:
    """The Qdrant point id of a record (Qdrant accepts only UUIDs and integers)."""
    return str(uuid.uuid5(_POINT_NAMESPACE, f"{collection}\x00{id_}"))


def qdrant_point(collection: str, id_: str, payload: Any, vector: Any) -> Any:
    """The Qdrant point of a record: its vector, with the payload filters run on."""
    from qdrant_client import models

    return models.PointStruct(
        id=point_id(collection, id_),
        vector=[float(x) for x in vector],
        payload={"collection": collection, "id": id_, "payload": payload},
    )


def sql_where(where: Where | None) -> tuple[str, list[Any]]:
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


def qdrant_filter(collection: str, where: Where | None) -> Any:
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


async def nearest_points(
    qdrant: Any,
    name: str,
    vector: Any,
    limit: int,
    collection: str,
    where: Where | None,
    alone: bool,
) -> list[Any]:
    """The `limit` points of `collection` nearest `vector` that pass `where`, best first. With
    `alone` (the table was seen holding no other collection, `where` is None) Qdrant is asked
    without a filter (its local mode checks a filter in Python on every point), and again with
    one if another collection's point came back."""
    asked = [float(x) for x in vector]
    if alone:
        response = await qdrant.query_points(
            name, query=asked, limit=limit, with_payload=["id", "collection"]
        )
        if all(p.payload["collection"] == collection for p in response.points):
            return list(response.points)
    response = await qdrant.query_points(
        name,
        query=asked,
        query_filter=qdrant_filter(collection, where),
        limit=limit,
        with_payload=["id"],
    )
    return list(response.points)


async def create_tables(conn: Any, t: str, indexed_fields: Sequence[str]) -> None:
    """Table `t` (records), `<t>_meta`, their indexes, the text configuration and the write
    counter's trigger, where missing (inside the caller's transaction)."""
    await conn.execute(
        f"CREATE TABLE IF NOT EXISTS {t}_meta (key text PRIMARY KEY, value text NOT NULL)"
    )
    await conn.execute(
        f"""CREATE TABLE IF NOT EXISTS {t} (
            collection text NOT NULL, id text NOT NULL, text text NOT NULL,
            payload jsonb NOT NULL, words tsvector NOT NULL,
            PRIMARY KEY (collection, id))"""
    )
    await conn.execute(
        f"ALTER TABLE {t} ADD COLUMN IF NOT EXISTS vectored boolean NOT NULL DEFAULT true"
    )
    await conn.execute(f"CREATE INDEX IF NOT EXISTS {t}_words_idx ON {t} USING gin (words)")
    await conn.execute(TEXT_CONFIG_SQL)
    for statement in count_writes_sql(t):
        await conn.execute(statement)
    for f in indexed_fields:
        await conn.execute(
            f"CREATE INDEX IF NOT EXISTS {t}_by_{f} ON {t} (collection, (payload->'{f}'))"
        )


async def reindex_words(conn: Any, t: str) -> None:
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
