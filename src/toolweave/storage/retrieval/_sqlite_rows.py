"""How `SQLiteTextIndex` lays its rows out and inserts them: a few statements per chunk.

A row per `executemany` step binds its parameters under the GIL and takes the GIL back after
every step, so a writer thread that shares the process with any other busy Python thread (an
event loop serving requests, a parser) waits behind it once per row: 2,000 rows took 8-9 s
instead of ~60 ms beside one spinning thread. Here each chunk goes in as one JSON array and one
BLOB of its vectors, read by `json_each` inside SQLite, so a chunk's rows, words and trigrams
are written by three statements that run without the GIL; a delete is one statement per table.
Reading the JSON costs SQLite ~4 µs a row more than binding parameters does, which an idle
process pays (about a tenth of an ingest) for not crawling in a busy one.

Texts and payloads holding a NUL character, at which `json_each` would end a text value, are
refused before (`check_unique`, `payload_json`), as Postgres refuses them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from toolweave.storage.retrieval.index import Record, payload_json
from toolweave.storage.text import fts_texts

ROWS_PER_STATEMENT = 500
"""Rows one insert statement writes: large enough that per-statement costs vanish, small
enough that a chunk's JSON and vectors stay a few hundred kilobytes."""

Row = tuple[str, str, str, str, str]
"""(collection, id, text, payload JSON, words column) of one record."""

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
    """Insert `rows` (with their float32 `vectors`, all one width) at rowids `first`, `first`+1,
    ... into table `t` and its words and trigram tables."""
    width = len(vectors[0]) if vectors else 0
    for start in range(0, len(rows), ROWS_PER_STATEMENT):
        part = rows[start : start + ROWS_PER_STATEMENT]
        blobs = vectors[start : start + ROWS_PER_STATEMENT]
        base = first + start
        encoded = _ROWS_JSON.encode(part)
        conn.execute(
            f"INSERT INTO {t} (rowid, collection, id, text, payload, vector)"
            " SELECT ?1 + key, json_extract(value, '$[0]'), json_extract(value, '$[1]'),"
            " json_extract(value, '$[2]'), json_extract(value, '$[3]'),"
            " substr(?2, key * ?3 + 1, ?3) FROM json_each(?4)",
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


def delete_rows(conn: sqlite3.Connection, t: str, rowids: Sequence[int]) -> None:
    """Remove these rows from table `t` and its words and trigram tables (the trigrams first,
    told the text they were made from while the rows still hold it)."""
    if not rowids:
        return
    listed = json.dumps(list(rowids))
    conn.execute(
        f"INSERT INTO {t}_tri ({t}_tri, rowid, text) SELECT 'delete', rowid, text FROM {t}"
        " WHERE rowid IN (SELECT value FROM json_each(?))",
        [listed],
    )
    for table in (f"{t}_words", t):
        conn.execute(
            f"DELETE FROM {table} WHERE rowid IN (SELECT value FROM json_each(?))", [listed]
        )


def trigram_table(t: str) -> str:
    """The declaration of `t`'s trigram table: an index over `t`'s own text column."""
    return f"fts5(text, tokenize='trigram', content='{t}', content_rowid='rowid')"


def trigrams_hold_text(conn: sqlite3.Connection, t: str) -> bool:
    """Whether `t`'s trigram table keeps its own copy of the text (made before it read the
    rows' text instead)."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", [f"{t}_tri"]).fetchone()
    return row is not None and "content=" not in row[0]


def read_trigrams_from_rows(conn: sqlite3.Connection, t: str) -> None:
    """Rebuild `t`'s trigram table over the rows' text (one transaction: a crash leaves the
    old table)."""
    if not trigrams_hold_text(conn, t):
        return
    conn.execute(f"DROP TABLE {t}_tri")
    conn.execute(f"CREATE VIRTUAL TABLE {t}_tri USING {trigram_table(t)}")
    conn.execute(f"INSERT INTO {t}_tri ({t}_tri) VALUES ('rebuild')")
