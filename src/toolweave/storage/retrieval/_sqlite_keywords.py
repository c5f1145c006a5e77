"""Keyword search and payload filters for `SQLiteTextIndex`, apart from its writes and vectors.

Ranking is the part of the SQLite index that changes most (levels, caps, widening) and the part
whose cost depends on how common a term is, so it lives in its own module, as plain SQL over
one connection: words (`<name>_words`, bm25), then substrings (`<name>_tri`, trigram, bm25),
then terms too short for the trigram tokenizer (LIKE, newest first).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from toolweave.storage.retrieval._words import scored_hits
from toolweave.storage.retrieval.index import (
    RANGE_OPERATORS,
    SUBSTRING_FALLBACK,
    IndexHit,
    Record,
    Where,
    check_where,
)
from toolweave.storage.text import (
    TRIGRAM_MIN_CHARS,
    fts5_match,
    has_cjk,
    like_pattern,
    query_terms,
)

Rows = list[tuple[str, str, str]]
"""(id, text, payload JSON) rows."""


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
    lost), then any term among the newest `rank_cap` matches. Every hit keeps its bm25 score,
    which fusion weighs against the vector side's cosine.
    """

    name: str
    rank_cap: int
    oversample: int

    def hits(
        self,
        conn: sqlite3.Connection,
        query: str,
        limit: int,
        collection: str,
        clause: str,
        params: list[Any],
    ) -> list[IndexHit]:
        """Up to `limit` hits for `query` in `collection` that pass `clause`, best first, each
        with its bm25 score (substring-only matches get a share of the weakest word match)."""
        terms = query_terms(query)
        t = self.name
        pieces = [p for p in query.split() if p]
        long_pieces = [p for p in dict.fromkeys(pieces + terms) if len(p) >= TRIGRAM_MIN_CHARS]
        short = [p for p in terms if len(p) < TRIGRAM_MIN_CHARS and has_cjk(p)]
        seen: dict[str, Record] = {}
        scores: dict[str, float] = {}

        def take(rows: list[tuple[Any, ...]], cap: int) -> None:
            for id_, text, payload, *score in rows:
                if id_ not in seen and len(seen) < cap:
                    seen[id_] = Record(id_, text, json.loads(payload), collection)
                    scores[id_] = float(score[0]) if score else 0.0

        by_words = 0
        substrings = min(limit, SUBSTRING_FALLBACK)
        for table, words in ((f"{t}_words", terms), (f"{t}_tri", long_pieces)):
            cap = limit if table == f"{t}_words" else substrings
            if words and len(seen) < cap:
                for level in self._levels(conn, table, words):
                    filters = [collection, *params]
                    take(self._ranked(conn, table, level, cap, seen, filters, clause), cap)
                    if len(seen) >= cap:
                        break
            if table == f"{t}_words":
                by_words = len(seen)
        for term in short:
            if len(seen) >= substrings:
                break
            take(
                conn.execute(
                    f"SELECT r.id, r.text, r.payload FROM {t} r"
                    f" WHERE r.text LIKE ? ESCAPE '\\' AND r.collection = ?{clause}"
                    " ORDER BY r.rowid DESC LIMIT ?",
                    [like_pattern(term), collection, *params, substrings],
                ).fetchall(),
                substrings,
            )
        return scored_hits(list(seen.values()), scores, by_words)

    def _levels(
        self, conn: sqlite3.Connection, table: str, terms: list[str]
    ) -> list[tuple[str, bool]]:
        """The MATCH expressions to rank, best first, each with whether it is bounded."""
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
        levels = [(fts5_match(terms, "AND"), True)] if len(terms) > 1 else []
        if rare:
            levels.append((fts5_match(rare), False))
        if len(rare) < len(terms):
            levels.append((fts5_match(terms), True))
        return levels

    def _ranked(
        self,
        conn: sqlite3.Connection,
        table: str,
        level: tuple[str, bool],
        limit: int,
        seen: dict[str, Record],
        params: list[Any],
        clause: str,
    ) -> list[tuple[str, str, str, float]]:
        """(id, text, payload, bm25) of the best rows not in `seen` that pass the filter among
        the matches of one level (the newest `rank_cap` matches if it is bounded), enough to
        bring `seen` to `limit`, widened while the filter (or `seen`) rejects too many."""
        match, bounded = level
        needed = limit - len(seen)
        want, cap = limit * self.oversample, self.rank_cap
        while True:
            row = (
                conn.execute(
                    f"SELECT rowid FROM {table} WHERE {table} MATCH ?"
                    " ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                    [match, cap - 1],
                ).fetchone()
                if bounded
                else None
            )
            floor = int(row[0]) if row else 0
            # FTS5 ranks fastest with ORDER BY rank LIMIT n in the virtual table itself;
            # filters apply afterwards.
            rows = conn.execute(
                f"SELECT r.id, r.text, r.payload, -m.rank FROM {self.name} r JOIN"
                f" (SELECT rowid, rank FROM {table} WHERE {table} MATCH ? AND rowid >= ?"
                " ORDER BY rank LIMIT ?) m"
                f" ON m.rowid = r.rowid WHERE r.collection = ?{clause} ORDER BY m.rank",
                [match, floor, want, *params],
            ).fetchall()
            if sum(1 for row in rows if row[0] not in seen) >= needed:
                return rows
            matched = conn.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ?"
                " AND rowid >= ? LIMIT ?)",
                [match, floor, want],
            ).fetchone()[0]
            if matched == want:
                want *= 8
            elif floor > 0:
                cap *= 8
            else:
                return rows
