"""bm25 for `SQLiteTextIndex` over each collection's own statistics, computed for the candidates
keyword search found, never by FTS5.

FTS5's `bm25()` weighs a term by the whole table (every user of a shared store, every
knowledge-base namespace), and to do so it reads every match of every term it weighs: 40 ms a
query for a word that a 1M store holds everywhere, whatever rowid bound the query has. So FTS5
only finds candidates (a bounded set, see `KeywordSearch`), and this module scores them, with
the formula `_pg_bm25` scores the scale-out backend with (k1 1.2, b 0.75, idf
ln((N - df + 0.5) / (df + 0.5)), at least 1e-6), where N, the average length and each term's
document frequency are the collection's:
- the records and their total length are read once per collection (a scan of it), then brought
  up to date from the rows written since (`rowid` above the last one seen), and read again
  once more than `STATS_DRIFT` of the collection was written after the scan (deletes shift
  the figures until then: scores move, matches do not);
- a term's frequency is counted the first time a query holds it (a walk of its matches), then
  kept up to date from the rows written since.
A document's length is the one FTS5 keeps (its tokens, in `<name>_words_docsize`); a term's
frequency in it is counted from its indexed words (the `words` column): the tokens that begin
like the term, each matched to it by its Porter stem (PyStemmer's `porter`, the algorithm of
FTS5's `porter` tokenizer). A term is one unicode61 token (`keyword_terms` splits the query as
FTS5 splits text: "max_retries" is "max" and "retries"), so the tokens counted are those FTS5
matched, in whatever spelling ("max-retries", "MAX_RETRIES", "max retries").
"""

from __future__ import annotations

import math
import re
import sqlite3
from dataclasses import dataclass, field

from toolweave.storage.retrieval._live_vectors import WRITES_KEY
from toolweave.storage.retrieval._pg_bm25 import BM25_B, BM25_K1, MIN_IDF, STATS_DRIFT
from toolweave.storage.text import TOKEN_CHAR, fts5_match

_STEM_CACHE = 65_536
"""Distinct tokens whose stems are kept (a query's terms meet the same few words again)."""
_TERMS_KEPT = 10_000
"""Terms whose frequency a collection keeps (past it they are counted again as queries ask)."""


@dataclass
class _Collection:
    records: int
    tokens: int
    top: int
    writes: int
    alone: bool
    """Whether the collection held every row of the table when last brought up to date."""
    grown: int = 0
    frequencies: dict[str, int] = field(default_factory=dict)


class Stemmer:
    """Lower-case Porter stems of tokens, remembered (PyStemmer, imported on first use)."""

    def __init__(self) -> None:
        import Stemmer as stemmer

        self._stem = stemmer.Stemmer("porter").stemWord
        self._known: dict[str, str] = {}

    def __call__(self, token: str) -> str:
        stem = self._known.get(token)
        if stem is None:
            if len(self._known) >= _STEM_CACHE:
                self._known.clear()
            stem = self._known[token] = self._stem(token)
        return stem


def document_length(size: bytes) -> int:
    """A document's tokens from its FTS5 `docsize` entry: one SQLite varint per column (7 bits a
    byte, high bit set on all but the last; a ninth byte holds 8)."""
    value = 0
    for i, byte in enumerate(size[:9]):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            break
    return value


class TermStatistics:
    """Each collection's records, total length and terms' frequencies for one index
    table `name`, kept between queries (the index's own; read on the database's thread)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._collections: dict[str, _Collection] = {}
        self._stemmer: Stemmer | None = None

    @property
    def stemmer(self) -> Stemmer:
        if self._stemmer is None:
            self._stemmer = Stemmer()
        return self._stemmer

    def collection(self, conn: sqlite3.Connection, collection: str) -> _Collection:
        """The collection's figures as of the last commit (within `STATS_DRIFT`)."""
        t = self.name
        row = conn.execute(f"SELECT value FROM {t}_meta WHERE key = ?", [WRITES_KEY]).fetchone()
        writes = int(row[0]) if row else 0
        known = self._collections.get(collection)
        if known is not None and known.writes != writes:
            self._catch_up(conn, collection, known, writes)
            if known.grown > max(1.0, STATS_DRIFT * known.records):
                known = None
        if known is None:
            known = self._collections[collection] = self._scan(conn, collection, writes)
        return known

    def _scan(self, conn: sqlite3.Connection, collection: str, writes: int) -> _Collection:
        t = self.name
        records = tokens = 0
        for (size,) in conn.execute(
            f"SELECT d.sz FROM {t} r CROSS JOIN {t}_words_docsize d ON d.id = r.rowid"
            " WHERE r.collection = ?",
            [collection],
        ):
            records += 1
            tokens += document_length(size)
        total, top = conn.execute(f"SELECT count(*), coalesce(max(rowid), 0) FROM {t}").fetchone()
        return _Collection(records, tokens, int(top), writes, alone=int(total) == records)

    def _catch_up(
        self, conn: sqlite3.Connection, collection: str, known: _Collection, writes: int
    ) -> None:
        """Add the rows written since `known` was read (those with a higher rowid)."""
        t = self.name
        rows = conn.execute(
            f"SELECT r.rowid, r.collection, d.sz FROM {t} r CROSS JOIN {t}_words_docsize d"
            " ON d.id = r.rowid WHERE r.rowid > ?",
            [known.top],
        ).fetchall()
        mine = [(rowid, size) for rowid, owner, size in rows if owner == collection]
        if len(mine) < len(rows):
            known.alone = False
        if mine:
            low = mine[0][0]
            known.records += len(mine)
            known.grown += len(mine)
            known.tokens += sum(document_length(size) for _, size in mine)
            for term in list(known.frequencies):
                known.frequencies[term] += self._matches(conn, term, collection, low, False)
        known.top = max([known.top, *(rowid for rowid, _, _ in rows)])
        known.writes = writes

    def _matches(
        self, conn: sqlite3.Connection, term: str, collection: str, low: int, alone: bool
    ) -> int:
        """Records of `collection` from rowid `low` on that match `term`."""
        t = self.name
        if alone:
            sql = f"SELECT count(*) FROM {t}_words WHERE {t}_words MATCH ? AND rowid >= ?"
            return int(conn.execute(sql, [fts5_match([term]), low]).fetchone()[0])
        sql = (
            f"SELECT count(*) FROM {t}_words w CROSS JOIN {t} r ON r.rowid = w.rowid"
            f" WHERE {t}_words MATCH ? AND w.rowid >= ? AND r.collection = ?"
        )
        return int(conn.execute(sql, [fts5_match([term]), low, collection]).fetchone()[0])

    def frequency(
        self, conn: sqlite3.Connection, stats: _Collection, collection: str, term: str
    ) -> int:
        """Records of the collection that match `term`: counted once, then kept up to date."""
        found = stats.frequencies.get(term)
        if found is None:
            if len(stats.frequencies) >= _TERMS_KEPT:
                stats.frequencies.clear()
            found = stats.frequencies[term] = self._matches(conn, term, collection, 0, stats.alone)
        return found

    def query(self, conn: sqlite3.Connection, collection: str, terms: list[str]) -> ScoredQuery:
        """The query `terms` weighed by the collection."""
        stats = self.collection(conn, collection)
        frequencies = {term: self.frequency(conn, stats, collection, term) for term in terms}
        return ScoredQuery(stats, frequencies, self.stemmer)


class ScoredQuery:
    """bm25 of candidate records for one query over one collection's statistics."""

    def __init__(self, stats: _Collection, frequencies: dict[str, int], stem: Stemmer) -> None:
        self.frequencies = frequencies
        count = stats.records
        self._average = max(stats.tokens / max(count, 1), 1.0)
        self._stem = stem
        self._weights: dict[str, float] = {}
        for term, df in frequencies.items():
            idf = max(math.log((count - df + 0.5) / (df + 0.5)), MIN_IDF)
            key = stem(term)
            self._weights[key] = max(self._weights.get(key, 0.0), idf)
        starts = sorted({_start(term, stem(term)) for term in frequencies}, key=len, reverse=True)
        alternatives = "|".join(map(re.escape, starts))
        self._tokens = re.compile(
            f"(?<!{TOKEN_CHAR})(?:{alternatives}){TOKEN_CHAR}*", re.IGNORECASE
        )

    def score(self, words: str, size: bytes) -> float:
        """bm25 of a record from its words column and its FTS5 docsize entry."""
        weights, stem = self._weights, self._stem
        held: dict[str, int] = {}
        for token in self._tokens.findall(words):
            key = stem(token.lower())
            if key in weights:
                held[key] = held.get(key, 0) + 1
        k1 = BM25_K1
        norm = k1 * (1 - BM25_B + BM25_B * document_length(size) / self._average)
        return sum(weights[key] * tf * (k1 + 1) / (tf + norm) for key, tf in held.items())


def _start(term: str, stem: str) -> str:
    """What every token with this stem begins with: the term and its stem's common prefix
    ("happy" -> "happi": "happ")."""
    n = 0
    while n < min(len(term), len(stem)) and term[n] == stem[n]:
        n += 1
    return term[: max(n, 1)]
