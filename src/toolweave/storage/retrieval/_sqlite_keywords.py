"""Keyword search and payload filters for `SQLiteTextIndex`, apart from its writes and vectors.

Ranking is the part of the SQLite index that changes most (levels, caps, widening) and the part
whose cost depends on how common a term is, so it lives in its own module, as plain SQL over
one connection: words (bm25 over the collection from postings in memory, `_sqlite_bm25`), then
substrings (`<name>_tri`, trigram, FTS5's bm25), then terms too short for the trigram tokenizer
(LIKE, newest first).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from toolweave.storage.retrieval._sqlite_bm25 import Postings
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
    keyword_terms,
    like_pattern,
    query_terms,
)

CHUNK = 500
"""Ids per `IN (...)` list (SQLite allows 32,766 parameters; smaller lists plan better)."""


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

    Words first: every record of the collection that holds any query word, scored with bm25
    over the collection's own statistics from the postings kept in memory (`postings`,
    `_sqlite_bm25`), the score fusion weighs against the vector side's cosine. Substrings
    (trigrams, ranked by FTS5, at most `rank_cap` newest matches of a common substring) and
    short CJK terms (LIKE, newest first) follow while too few records matched as words.
    """

    name: str
    rank_cap: int
    oversample: int
    postings: Postings
    max_terms: int

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

        words = keyword_terms(query)
        if words:
            take(self._by_words(conn, words, limit, collection, clause, params), limit)
        by_words = len(seen)
        substrings = min(limit, SUBSTRING_FALLBACK)
        table = f"{t}_tri"
        if long_pieces and len(seen) < substrings:
            filters = [collection, *params]
            for level in self._levels(conn, table, long_pieces):
                rows = self._ranked(conn, table, level, substrings, seen, filters, clause)
                take(rows, substrings)
                if len(seen) >= substrings:
                    break
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

    def _by_words(
        self,
        conn: sqlite3.Connection,
        terms: list[str],
        limit: int,
        collection: str,
        clause: str,
        params: list[Any],
    ) -> list[tuple[str, str, str, float]]:
        """(id, text, payload, bm25) of the best `limit` word matches, best first (equal scores:
        the newest first). Every match is scored (`Postings`); the best are read from the rows,
        more of them while the filter rejects too many."""
        import numpy as np

        rowids, bm25 = self.postings.scores(conn, collection, terms, self.max_terms)
        want = limit * self.oversample if clause else limit
        t = self.name
        while True:
            best = np.arange(len(rowids))
            if want < len(rowids):  # the `want` best, all of those tied with the last
                best = np.flatnonzero(bm25 >= -np.partition(-bm25, want - 1)[want - 1])
            best = best[np.lexsort((-rowids[best], -bm25[best]))][:want]
            picked = [int(k) for k in rowids[best]]
            scores = dict(zip(picked, bm25[best].tolist(), strict=True))
            records = {
                rowid: row
                for start in range(0, len(picked), CHUNK)
                for rowid, *row in conn.execute(
                    f"SELECT rowid, id, text, payload FROM {t} WHERE rowid IN"
                    f" ({', '.join('?' * len(picked[start : start + CHUNK]))}){clause}",
                    [*picked[start : start + CHUNK], *params],
                )
            }
            if len(records) >= limit or want >= len(rowids):
                break
            want *= 8
        return [(*records[k], scores[k]) for k in picked if k in records][:limit]

    def _rare(self, conn: sqlite3.Connection, table: str, terms: list[str]) -> list[str]:
        """The terms with at most `rank_cap` matches in the whole table."""
        cap = self.rank_cap
        return [
            term
            for term in terms
            if conn.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {table} MATCH ? LIMIT ?)",
                [fts5_match([term]), cap + 1],
            ).fetchone()[0]
            <= cap
        ]

    def _levels(
        self, conn: sqlite3.Connection, table: str, terms: list[str]
    ) -> list[tuple[str, bool]]:
        """The MATCH expressions to rank, best first, each with whether it is bounded."""
        rare = self._rare(conn, table, terms)
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
