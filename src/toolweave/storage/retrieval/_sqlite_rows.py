"""How `SQLiteTextIndex` lays its rows out and inserts them: a few statements per chunk.

A row per `executemany` step binds its parameters under the GIL and takes the GIL back after
every step, so a writer thread that shares the process with any other busy Python thread (an
event loop serving requests, a parser) waits behind it once per row: 2,000 rows took 8-9 s
instead of ~60 ms beside one spinning thread. Here each chunk goes in as one JSON array and one
BLOB of its vectors, read by `json_each` inside SQLite, so a chunk's rows, words and trigrams
are written by three statements that run without the GIL; a delete is one statement per table.
Reading the JSON costs SQLite ~4 µs a row more than binding parameters does, which an idle
process pays (about a tenth of an ingest) for not crawling in a busy one.

A collection, id or text holding a NUL character, at which `json_each` would end the value, is
refused before (`check_unique`; a payload's NUL survives as JSON's escape, but is refused too,
as Postgres refuses it). The trigram table reads the rows' text (external content) and its
triggers keep it in step with every deletion and change of a row.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from toolweave.storage.retrieval._sqlite_keywords import CHUNK
from toolweave.storage.retrieval.embed_guard import REEMBED_BATCH
from toolweave.storage.retrieval.index import Record, payload_json
from toolweave.storage.text import fts_texts

ROWS_PER_STATEMENT = 500
"""Rows one insert statement writes at most: large enough that per-statement costs vanish."""
CHARS_PER_STATEMENT = 4_000_000
"""Characters of text, words and payload one insert statement writes at most (a record longer
than this goes alone): a chunk is one SQLite value, which must stay well under SQLite's 1 GB
limit, and is held in memory twice while it is written."""

Row = tuple[str, str, str, str, str]
"""(collection, id, text, payload JSON, words column) of one record."""
Blobs = dict[int, tuple[str, bytes]]
"""Vectors to store, by rowid: (collection, float32 BLOB)."""
Added = list[tuple[int, str, bytes]]
"""(rowid, collection, float32 BLOB) of vectors just stored."""

WITHOUT_VECTOR = "length(vector) = 0 AND text <> ''"
"""The SQL condition of a row missing its vector: its BLOB is empty while it has text to embed
(a row of empty text has nothing to embed and never gets one)."""

_ROWS_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), check_circular=False)


def prepared(records: Sequence[Record]) -> list[Row]:
    """Each record's row: its payload as JSON and its text as the words index reads it."""
    words = fts_texts([r.text for r in records])
    return [
        (r.collection, r.id, r.text, payload_json(r), w)
        for r, w in zip(records, words, strict=True)
    ]


def insert_rows(
    conn: sqlite3.Connection, t: str, first: int, rows: Sequence[Row], vectors: Sequence[bytes]
) -> None:
    """Insert `rows` (with their float32 `vectors`, all one width, the empty ones last: a
    statement slices one BLOB, past whose end a row gets none) at rowids `first`, `first`+1,
    ... into table `t` and its words and trigram tables."""
    width = len(vectors[0]) if vectors else 0
    for start, end in _chunks(rows):
        part, blobs, base = rows[start:end], vectors[start:end], first + start
        encoded = _ROWS_JSON.encode(part)
        conn.execute(
            f"INSERT INTO {t} (rowid, collection, id, text, payload, vector)"
            " SELECT ?1 + key, json_extract(value, '$[0]'), json_extract(value, '$[1]'),"
            " json_extract(value, '$[2]'), json_extract(value, '$[3]'),"
            " coalesce(substr(?2, key * ?3 + 1, ?3), x'') FROM json_each(?4)",
            (base, b"".join(blobs), width, encoded),
        )
        conn.execute(
            f"INSERT INTO {t}_words (rowid, words)"
            " SELECT ?1 + key, json_extract(value, '$[4]') FROM json_each(?2)",
            (base, encoded),
        )
        conn.execute(
            f"INSERT INTO {t}_tri (rowid, text) SELECT rowid, text FROM {t}"
            " WHERE rowid BETWEEN ? AND ?",
            (base, base + len(part) - 1),
        )


def _chunks(rows: Sequence[Row]) -> list[tuple[int, int]]:
    """(start, end) of each statement's rows: `ROWS_PER_STATEMENT` rows or
    `CHARS_PER_STATEMENT` characters at most, at least one row."""
    chunks, start, size = [], 0, 0
    for n, row in enumerate(rows):
        length = len(row[2]) + len(row[3]) + len(row[4])
        if n > start and (n - start == ROWS_PER_STATEMENT or size + length > CHARS_PER_STATEMENT):
            chunks.append((start, n))
            start, size = n, 0
        size += length
    if start < len(rows):
        chunks.append((start, len(rows)))
    return chunks


def delete_rows(conn: sqlite3.Connection, t: str, rowids: Sequence[int]) -> None:
    """Remove these rows from table `t` and its words table; its triggers take them out of
    the trigram table."""
    if not rowids:
        return
    listed = json.dumps(list(rowids))
    for table in (f"{t}_words", t):
        conn.execute(
            f"DELETE FROM {table} WHERE rowid IN (SELECT value FROM json_each(?))", [listed]
        )


def trigram_statements(t: str) -> list[str]:
    """What makes `t`'s trigram table, an index over `t`'s own text column, and the triggers
    that keep it in step with every deletion and change of a row, by whatever code makes it
    (an older toolweave deletes a row, then its trigrams by rowid, which on its own would
    leave them behind)."""
    return [
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {t}_tri USING fts5("
        f"text, tokenize='trigram', content='{t}', content_rowid='rowid')",
        f"CREATE TRIGGER IF NOT EXISTS {t}_tri_delete BEFORE DELETE ON {t} BEGIN"
        f" INSERT INTO {t}_tri ({t}_tri, rowid, text) VALUES ('delete', old.rowid, old.text);"
        " END",
        f"CREATE TRIGGER IF NOT EXISTS {t}_tri_update AFTER UPDATE OF text ON {t} BEGIN"
        f" INSERT INTO {t}_tri ({t}_tri, rowid, text) VALUES ('delete', old.rowid, old.text);"
        f" INSERT INTO {t}_tri (rowid, text) VALUES (new.rowid, new.text);"
        " END",
    ]


def trigrams_hold_text(conn: sqlite3.Connection, t: str) -> bool:
    """Whether `t`'s trigram table keeps its own copy of the text (made before it read the
    rows' text instead)."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", [f"{t}_tri"]).fetchone()
    return row is not None and "content=" not in row[0]


def read_trigrams_from_rows(conn: sqlite3.Connection, t: str) -> None:
    """Rebuild `t`'s trigram table over the rows' text, with its triggers (one transaction: a
    crash leaves the old table)."""
    if not trigrams_hold_text(conn, t):
        return
    conn.execute(f"DROP TABLE {t}_tri")
    for statement in trigram_statements(t):
        conn.execute(statement)
    conn.execute(f"INSERT INTO {t}_tri ({t}_tri) VALUES ('rebuild')")


def rows_without_vectors(
    conn: sqlite3.Connection, t: str, after: int
) -> list[tuple[int, str, str]]:
    """(rowid, collection, text) of the next `REEMBED_BATCH` rows past rowid `after` stored
    without a vector (an empty BLOB: written while the embedder failed)."""
    sql = (
        f"SELECT rowid, collection, text FROM {t} WHERE {WITHOUT_VECTOR} AND rowid > ?"
        f" ORDER BY rowid LIMIT {REEMBED_BATCH}"
    )
    return [(int(r[0]), r[1], r[2]) for r in conn.execute(sql, [after])]


def count_without_vectors(conn: sqlite3.Connection, t: str, collection: str | None) -> int:
    """Rows (of `collection`, or of all) stored without a vector."""
    sql = f"SELECT count(*) FROM {t} WHERE {WITHOUT_VECTOR}"
    if collection is None:
        return int(conn.execute(sql).fetchone()[0])
    return int(conn.execute(f"{sql} AND collection = ?", [collection]).fetchone()[0])


def fill_vectors(conn: sqlite3.Connection, t: str, blobs: Blobs) -> Added:
    """Store these vectors in the rows that still have none (a row replaced or removed since
    it was read is left alone); what was stored."""
    listed = ", ".join("?" * len(blobs))
    still = conn.execute(
        f"SELECT rowid FROM {t} WHERE rowid IN ({listed}) AND length(vector) = 0", list(blobs)
    ).fetchall()
    added = [(int(r[0]), *blobs[int(r[0])]) for r in still]
    conn.executemany(f"UPDATE {t} SET vector = ? WHERE rowid = ?", [(a[2], a[0]) for a in added])
    return added


def rows_by_key(
    conn: sqlite3.Connection, t: str, keys: Sequence[tuple[str, str]], columns: str
) -> dict[tuple[str, str], tuple[Any, ...]]:
    """(rowid, *columns) of table `t`'s rows with these (collection, id) keys, by key."""
    by_collection: dict[str, list[str]] = {}
    for collection, id_ in keys:
        by_collection.setdefault(collection, []).append(id_)
    found: dict[tuple[str, str], tuple[Any, ...]] = {}
    for collection, ids in by_collection.items():
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start : start + CHUNK]
            rows = conn.execute(
                f"SELECT id, rowid{columns} FROM {t} WHERE collection = ?"
                f" AND id IN ({', '.join('?' * len(chunk))})",
                [collection, *chunk],
            )
            for id_, *rest in rows:
                found[(collection, id_)] = tuple(rest)
    return found
