"""Keyword search and payload filters for `SQLiteTextIndex`, apart from its writes and vectors.

Ranking is the part of the SQLite index that changes most (levels, caps, widening) and the part
whose cost depends on how common a term is, so it lives in its own module, as plain SQL over
one connection: words (`<name>_words`, bm25), then substrings (`<name>_tri`, trigram, bm25),
then terms too short for the trigram tokenizer (LIKE, newest first).
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass
from typing import Any

from toolweave.storage.retrieval.index import RANGE_OPERATORS, Record, Where, check_where
from toolweave.storage.text import (
    TRIGRAM_MIN_CHARS,
    fts5_match,
    has_cjk,
    like_pattern,
    query_terms,
)

Rows = list[tuple[str, str, str]]
"""(id, text, payload JSON) rows."""
_CHUNK = 500
"""Rowids per `IN (...)` lookup (SQLite binds at most 32,766 parameters)."""


def sql_where(where: Where | None) -> tuple[str, list[Any]]:
    """The ` AND ...` clause and its parameters that apply `where` to the payload column."""
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


@dataclass(frozen=True)
class KeywordSearch:
    """Keyword search over the index tables named `name`.

    Each FTS5 table is asked in levels, best matches first: every term (AND), then the rare
    terms (at most `rank_cap` matches each, all ranked, so an exact name or number is never
    lost), then any term among the newest `rank_cap` matches. bm25 costs time per match of each
    term it weighs, so expressions with a common term are ordered without it (`_levels`) and a
    term common to half the store costs what a rare one does.
    """

    name: str
    rank_cap: int
    oversample: int

    def records(
        self,
        conn: sqlite3.Connection,
        query: str,
        limit: int,
        collection: str,
        clause: str,
        params: list[Any],
    ) -> list[Record]:
        """Up to `limit` records matching `query` in `collection` that pass `clause`, best
        first."""
        terms = query_terms(query)
        t = self.name
        pieces = [p for p in query.split() if p]
        long_pieces = [p for p in dict.fromkeys(pieces + terms) if len(p) >= TRIGRAM_MIN_CHARS]
        short = [p for p in terms if len(p) < TRIGRAM_MIN_CHARS and has_cjk(p)]
        seen: dict[str, Record] = {}

        def take(rows: Rows) -> None:
            for id_, text, payload in rows:
                if id_ not in seen and len(seen) < limit:
                    seen[id_] = Record(id_, text, json.loads(payload), collection)

        for table, words in ((f"{t}_words", terms), (f"{t}_tri", long_pieces)):
            if words and len(seen) < limit:
                for level in self._levels(conn, table, words):
                    filters = [collection, *params]
                    take(self._ranked(conn, table, level, limit, seen, filters, clause))
                    if len(seen) >= limit:
                        break
        for term in short:
            if len(seen) >= limit:
                break
            take(
                conn.execute(
                    f"SELECT r.id, r.text, r.payload FROM {t} r"
                    f" WHERE r.text LIKE ? ESCAPE '\\' AND r.collection = ?{clause}"
                    " ORDER BY r.rowid DESC LIMIT ?",
                    [like_pattern(term), collection, *params, limit],
                ).fetchall()
            )
        return list(seen.values())

    def _levels(
        self, conn: sqlite3.Connection, table: str, terms: list[str]
    ) -> list[tuple[str, list[str] | None]]:
        """The MATCH expressions to rank, best first, each with how: None ranks every match by
        bm25; a list ranks the newest `rank_cap` matches by how many of its terms each holds,
        then the shorter (bm25's order when the terms weigh the same and occur once), then the
        newer. bm25 weighs a term by reading all of its matches (~40 ns each: 4 ms for a term
        in 100k records, 40 ms in 1M), so only expressions of rare terms are given to it."""
        cap = self.rank_cap
        rare = [
            term
            for term in terms
            if conn.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)",
                [fts5_match([term]), cap + 1],
            ).fetchone()[0]
            <= cap
        ]
        common = len(rare) < len(terms)
        levels: list[tuple[str, list[str] | None]] = []
        if len(terms) > 1:
            levels.append((fts5_match(terms, "AND"), [] if common else None))
        if rare:
            levels.append((fts5_match(rare), None))
        if common:
            levels.append((fts5_match(terms), terms))
        return levels

    def _ranked(
        self,
        conn: sqlite3.Connection,
        table: str,
        level: tuple[str, list[str] | None],
        limit: int,
        seen: dict[str, Record],
        params: list[Any],
        clause: str,
    ) -> list[tuple[str, str, str]]:
        """The best rows not in `seen` that pass the filter among the matches of one level,
        enough to bring `seen` to `limit`, widened while the filter (or `seen`) rejects too
        many."""
        match, coordinate = level
        needed = limit - len(seen)
        want = limit * self.oversample if coordinate is None else self.rank_cap
        while True:
            if coordinate is None:
                # FTS5 ranks fastest with ORDER BY rank LIMIT n in the virtual table itself;
                # filters apply afterwards.
                rows = conn.execute(
                    f"SELECT r.id, r.text, r.payload FROM {self.name} r JOIN (SELECT rowid, rank"
                    f" FROM {table} WHERE {table} MATCH ? ORDER BY rank LIMIT ?) m"
                    f" ON m.rowid = r.rowid WHERE r.collection = ?{clause} ORDER BY m.rank",
                    [match, want, *params],
                ).fetchall()
            else:
                rows = self._newest(conn, table, (match, coordinate), want, limit, params, clause)
            if sum(1 for row in rows if row[0] not in seen) >= needed:
                return rows
            matched = conn.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)",
                [match, want],
            ).fetchone()[0]
            if matched < want:
                return rows
            want *= 8

    def _newest(
        self,
        conn: sqlite3.Connection,
        table: str,
        level: tuple[str, list[str]],
        window: int,
        limit: int,
        params: list[Any],
        clause: str,
    ) -> list[tuple[str, str, str]]:
        """The best `limit` rows that pass the filter among the newest `window` matches of a
        level, in the order `_levels` gives: no bm25, so no read of every match."""
        match, terms = level
        rowids = [
            int(r[0])
            for r in conn.execute(
                f"SELECT rowid FROM {table} WHERE {table} MATCH ? ORDER BY rowid DESC LIMIT ?",
                [match, window],
            )
        ]
        held: Counter[int] = Counter()
        for term in terms if len(terms) > 1 and rowids else ():
            held.update(
                int(r[0])
                for r in conn.execute(
                    f"SELECT rowid FROM {table} WHERE {table} MATCH ? AND rowid >= ?",
                    [fts5_match([term]), rowids[-1]],
                )
            )
        passing: list[tuple[int, int]] = []
        for start in range(0, len(rowids), _CHUNK):
            chunk = rowids[start : start + _CHUNK]
            passing += conn.execute(
                f"SELECT rowid, length(text) FROM {self.name} WHERE rowid IN"
                f" ({', '.join('?' * len(chunk))}) AND +collection = ?{clause}",
                [*chunk, *params],
            ).fetchall()
        passing.sort(key=lambda row: (-held[row[0]], row[1], -row[0]))
        best = [rowid for rowid, _ in passing[:limit]]
        rows: dict[int, tuple[str, str, str]] = {
            int(rowid): (id_, text, payload)
            for rowid, id_, text, payload in conn.execute(
                f"SELECT rowid, id, text, payload FROM {self.name} WHERE rowid IN"
                f" ({', '.join('?' * len(best))})",
                best,
            )
        }
        return [rows[rowid] for rowid in best]
