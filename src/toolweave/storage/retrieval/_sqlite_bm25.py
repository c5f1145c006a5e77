"""bm25 for `SQLiteTextIndex` at index speed: each query term's postings (the records that hold
it, with its frequency in each) held in memory as numpy arrays, scored over each collection's
own statistics without reading a candidate's text.

FTS5's `bm25()` weighs a term by the whole table (every user of a shared store, every
knowledge-base namespace), so it only supplies the postings: a term's are read once from the
words table's `fts5vocab` instance view (`<name>_words_terms`: one row per occurrence, in C,
already stemmed and segmented as FTS5 indexed it) and kept. Every record's collection and length
(its tokens, FTS5's `docsize`) are held in two arrays indexed by rowid, read by one scan of the
table. A query then costs a few numpy operations per term over its postings (the formula of
`_pg_bm25`: k1 1.2, b 0.75, idf ln((N - df + 0.5) / (df + 0.5)), at least 1e-6, with N, the
average length and df the collection's), whatever the number of matches: every match is scored,
none is cut by age or a cap.

The arrays follow the file: this index's own writes are queued as they commit (`committed`,
on the database's thread) and applied at the next search (new rows' lengths read, their terms
counted into the postings kept; removed rows marked as belonging to no collection). A write by
anyone else (the table's write counter moved further than this index's writes account for)
drops them, and the next search reads them again.

A term's first read walks its occurrences in FTS5's index (milliseconds for a common word of a
large table, paid by the first query that asks). `read_postings` reads every term's postings at
once, in one sorted pass over the vocabulary view on another connection, and `Postings.adopt`
takes them if no write came between: `_sqlite_warm` runs it in the background when the index
opens, after a write that dropped the postings kept and after another process's write.

A query's words are matched to the terms FTS5 indexed by FTS5's own tokenizer (`Tokenizer`),
so "Technologies" finds "technology" exactly as a MATCH would.
"""

from __future__ import annotations

import itertools
import sqlite3
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolweave.storage.retrieval._background import SearchGate
from toolweave.storage.retrieval._live_vectors import WRITES_KEY
from toolweave.storage.retrieval._pg_bm25 import bm25_scores
from toolweave.storage.retrieval._words import WORDS_TOKENIZER
from toolweave.storage.retrieval.index import DEFAULT_POSTINGS_KEPT

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    IDs = npt.NDArray[np.int64]
    Floats = npt.NDArray[np.float64]

_KEYS_KEPT = 65_536
"""Distinct query tokens whose terms are kept (queries meet the same few words again)."""
_READ_BATCH = 8_192
"""Postings fetched at a time by `read_postings` (between two waits for the searches in flight
and checks of its stop flag)."""
_STOP_CHECK = 100_000
"""SQLite virtual-machine steps between two waits for the searches in flight and checks of
`read_postings`' stop flag."""
RECOUNT_ROWS = 2_000
"""Rows one write may add before the postings kept are dropped instead of counted in (reading
a term's postings again costs less than segmenting and stemming that many records)."""


class Tokenizer:
    """Terms as the words table indexes them, from FTS5's own tokenizer (`WORDS_TOKENIZER`) run
    over a private in-memory table: a query token's term is remembered, a text's terms are
    counted. (A Python Porter stemmer differs from FTS5's on some words: "technology" is
    "technologi" to PyStemmer, "technolog" to FTS5.)"""

    def __init__(self) -> None:
        self._conn: sqlite3.Connection | None = None
        self._known: dict[str, str] = {}

    def _scratch(self) -> sqlite3.Connection:
        if self._conn is None:
            conn = sqlite3.connect(":memory:", check_same_thread=False)
            conn.execute(f"CREATE VIRTUAL TABLE s USING fts5(words, tokenize='{WORDS_TOKENIZER}')")
            conn.execute("CREATE VIRTUAL TABLE s_terms USING fts5vocab(s, instance)")
            self._conn = conn
        return self._conn

    def _indexed(self, texts: list[str], sql: str) -> list[tuple[Any, ...]]:
        conn = self._scratch()
        with conn:
            conn.executemany("INSERT INTO s (rowid, words) VALUES (?, ?)", enumerate(texts))
            rows = conn.execute(sql).fetchall()
            conn.execute("DELETE FROM s")
        return rows

    def keys(self, tokens: list[str]) -> list[str]:
        """Each token's term ("" for a token FTS5 would not index)."""
        new = [token for token in dict.fromkeys(tokens) if token not in self._known]
        if new:
            if len(self._known) + len(new) > _KEYS_KEPT:
                self._known.clear()
            self._known.update(dict.fromkeys(new, ""))
            for doc, term in self._indexed(new, "SELECT doc, term FROM s_terms"):
                self._known[new[doc]] = term
        return [self._known[token] for token in tokens]

    def counts(self, texts: list[str]) -> list[tuple[int, str, int]]:
        """(text's position, term, frequency) of every term of `texts`."""
        sql = "SELECT doc, term, count(*) FROM s_terms GROUP BY doc, term"
        return [(int(d), str(t), int(n)) for d, t, n in self._indexed(texts, sql)]


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


def vocabulary_statement(t: str) -> str:
    """The `fts5vocab` view of `t`'s words table postings are read from."""
    return (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {t}_words_terms USING fts5vocab({t}_words, instance)"
    )


@dataclass
class _Write:
    removed: list[int]
    first: int
    added: int


@dataclass
class _Rows:
    """Every record's collection (an index into `names`, -1 for none) and length, by rowid."""

    owner: Any
    length: Any
    names: dict[str, int]
    records: list[int]
    tokens: list[int]
    top: int
    terms: dict[str, tuple[Any, Any]] = field(default_factory=dict)
    held: int = 0


@dataclass
class Snapshot:
    """Every term's postings (up to a bound) of one table as of its write counter `writes`."""

    writes: int
    terms: dict[str, tuple[Any, Any]]
    complete: bool


def read_postings(
    conn: sqlite3.Connection, name: str, kept: int, stop: threading.Event, gate: SearchGate
) -> Snapshot | None:
    """The postings of table `name`'s terms, in term order until `kept` postings, read in one
    transaction (on a connection of its own: the index's keeps serving); None if `stop` was set
    meanwhile (SQLite's own work is interrupted then, its sort of the vocabulary included).
    Every step (`_STOP_CHECK` of SQLite's, a batch of `_READ_BATCH` rows) first waits for the
    index's searches in flight (`gate`)."""
    import numpy as np

    def halted() -> bool:
        gate.wait_idle(stop)
        return stop.is_set()

    parts: dict[str, list[tuple[Any, Any]]] = {}
    held, full = 0, False
    conn.set_progress_handler(halted, _STOP_CHECK)
    conn.execute("BEGIN")
    try:
        row = conn.execute(f"SELECT value FROM {name}_meta WHERE key = ?", [WRITES_KEY]).fetchone()
        cursor = conn.execute(
            f"SELECT term, doc, count(*) FROM {name}_words_terms GROUP BY term, doc"
        )
        while not full and (batch := cursor.fetchmany(_READ_BATCH)):
            if halted():
                return None
            terms, docs, counts = zip(*batch, strict=True)
            ids = np.array(docs, np.int64)
            tf = np.array(counts, np.float64)
            ordered = np.array(terms, object)
            bounds = [0, *(np.flatnonzero(ordered[1:] != ordered[:-1]) + 1).tolist(), len(ids)]
            for start, end in itertools.pairwise(bounds):
                held += end - start
                if held > kept:  # this term (begun in an earlier batch perhaps) stays out
                    parts.pop(terms[start], None)
                    full = True
                    break
                parts.setdefault(terms[start], []).append((ids[start:end], tf[start:end]))
    except sqlite3.OperationalError:
        if stop.is_set():  # interrupted by the progress handler
            return None
        raise
    finally:
        conn.set_progress_handler(None, 0)
        conn.execute("ROLLBACK")
    found = {
        key: pieces[0]
        if len(pieces) == 1
        else (np.concatenate([p[0] for p in pieces]), np.concatenate([p[1] for p in pieces]))
        for key, pieces in parts.items()
    }
    return Snapshot(int(row[0]) if row else 0, found, not full)


class Postings:
    """The postings and record figures of one index table `name`, kept between queries (the
    index's own; used only on the database's thread), at most `kept` of them."""

    def __init__(self, name: str, kept: int = DEFAULT_POSTINGS_KEPT) -> None:
        self.name = name
        self.kept = kept
        self.whole = False
        """Whether the postings were read ahead (`adopt`) since they were last dropped."""
        self.complete = False
        """Whether every term of the table is held (a write's new words are then counted in)."""
        self._rows: _Rows | None = None
        self._writes: int | None = None
        self._pending: list[_Write] = []
        self.tokenizer = Tokenizer()

    def committed(self, removed: list[int], first: int, added: int, writes: int) -> None:
        """This index's write that just committed (rows `removed`, `added` rows from rowid
        `first`), which brought the table's write counter to `writes`."""
        if self._rows is None or self._writes is None:
            return
        if writes != self._writes + 1:
            self._rows, self.whole, self.complete = None, False, False
            return
        self._pending.append(_Write(removed, first, added))
        self._writes = writes
        if added and (first <= self._rows.top or added > RECOUNT_ROWS):
            self.whole = False  # `_apply` will drop the postings kept: read them ahead again

    def scores(
        self, conn: sqlite3.Connection, collection: str, terms: list[str], max_terms: int
    ) -> tuple[IDs, Floats]:
        """(rowids, bm25) of every record of `collection` holding any of `terms` (the
        `max_terms` rarest in the collection, if there are more; a word more than half of a
        large collection holds only when no other word matched: `EVERYWHERE`)."""
        import numpy as np

        rows = self._current(conn)
        owner = rows.names.get(collection)
        empty = (np.empty(0, np.int64), np.empty(0, np.float64))
        if owner is None or rows.records[owner] == 0:
            return empty
        held = []
        alone = len(rows.names) == 1 and rows.records[owner] == int(np.sum(rows.owner >= 0))
        for key in dict.fromkeys(key for key in self.tokenizer.keys(terms) if key):
            ids, tf = self._postings(conn, rows, key)
            if not alone:  # another collection's records, or removed ones, are in the table
                keep = rows.owner[ids] == owner
                ids, tf = ids[keep], tf[keep]
            if len(ids):
                held.append((ids, tf))
        count = rows.records[owner]
        average = rows.tokens[owner] / count
        return bm25_scores(
            held, count=count, average=average, length=rows.length, max_terms=max_terms
        )

    def held(self, conn: sqlite3.Connection) -> int:
        """Postings in memory once the writes committed are applied."""
        return self._current(conn).held

    def adopt(self, conn: sqlite3.Connection, snapshot: Snapshot) -> int:
        """Take the postings read ahead unless a write came after them; the postings held."""
        rows = self._current(conn)
        if snapshot.writes != self._writes:
            return rows.held
        for key, found in snapshot.terms.items():
            if key not in rows.terms:
                rows.terms[key] = found
                rows.held += len(found[0])
        self.whole = True
        self.complete = snapshot.complete
        return rows.held

    # -- loading and following writes ------------------------------------------------------

    def _current(self, conn: sqlite3.Connection) -> _Rows:
        row = conn.execute(
            f"SELECT value FROM {self.name}_meta WHERE key = ?", [WRITES_KEY]
        ).fetchone()
        writes = int(row[0]) if row else 0
        if self._rows is None or writes != self._writes:
            self._rows, self._writes, self._pending = self._load(conn), writes, []
            self.whole = self.complete = False
        elif self._pending:
            for write in self._pending:
                self._apply(conn, self._rows, write)
            self._pending = []
        return self._rows

    def _load(self, conn: sqlite3.Connection) -> _Rows:
        import numpy as np

        t = self.name
        top = int(conn.execute(f"SELECT coalesce(max(rowid), 0) FROM {t}").fetchone()[0])
        rows = _Rows(np.full(top + 1, -1, np.int32), np.zeros(top + 1, np.float64), {}, [], [], top)
        sql = (
            f"SELECT r.rowid, r.collection, d.sz FROM {t} r"
            f" JOIN {t}_words_docsize d ON d.id = r.rowid"
        )
        for rowid, collection, size in conn.execute(sql):
            _add(rows, rowid, collection, document_length(size))
        return rows

    def _apply(self, conn: sqlite3.Connection, rows: _Rows, write: _Write) -> None:
        import numpy as np

        for rowid in write.removed:
            if rowid <= rows.top and rows.owner[rowid] >= 0:
                owner = int(rows.owner[rowid])
                rows.records[owner] -= 1
                rows.tokens[owner] -= int(rows.length[rowid])
                rows.owner[rowid] = -1
        if not write.added:
            return
        last = write.first + write.added - 1
        if write.first <= rows.top or write.added > RECOUNT_ROWS:
            rows.terms.clear()  # a rowid used again, or too many rows to count in
            rows.held = 0
            self.whole = self.complete = False
        if last > rows.top:
            grow = last - rows.top
            rows.owner = np.concatenate([rows.owner, np.full(grow, -1, np.int32)])
            rows.length = np.concatenate([rows.length, np.zeros(grow)])
            rows.top = last
        t, count = self.name, bool(rows.terms or self.complete)
        found = conn.execute(
            f"SELECT r.rowid, r.collection, d.sz, {'w.words' if count else 'NULL'}"
            f" FROM {t} r JOIN {t}_words_docsize d ON d.id = r.rowid"
            f" JOIN {t}_words w ON w.rowid = r.rowid WHERE r.rowid BETWEEN ? AND ?",
            [write.first, last],
        ).fetchall()
        for rowid, collection, size, _ in found:
            _add(rows, rowid, collection, document_length(size))
        if not count:
            return
        counted: dict[str, list[tuple[int, int]]] = {}
        for at, key, tf in self.tokenizer.counts([words for *_, words in found]):
            if key in rows.terms or self.complete:
                counted.setdefault(key, []).append((found[at][0], tf))
        for key, pairs in counted.items():
            if key not in rows.terms and rows.held + len(pairs) > self.kept:
                self.complete = False  # a new word past the bound: read as queries ask
                continue
            ids, tf = rows.terms.get(key, (np.empty(0, np.int64), np.empty(0)))
            new = np.array(pairs, np.int64)
            rows.terms[key] = (np.concatenate([ids, new[:, 0]]), np.concatenate([tf, new[:, 1]]))
            rows.held += len(pairs)

    def _postings(self, conn: sqlite3.Connection, rows: _Rows, key: str) -> tuple[IDs, Floats]:
        """(rowids, frequencies) of the records holding `key`, every collection's."""
        import numpy as np

        found = rows.terms.get(key)
        if found is None:
            pairs = np.array(
                conn.execute(
                    f"SELECT doc, count(*) FROM {self.name}_words_terms WHERE term = ?"
                    " GROUP BY doc",
                    [key],
                ).fetchall(),
                np.int64,
            ).reshape(-1, 2)
            pairs = pairs[pairs[:, 0] <= rows.top]  # rows of a write not applied yet
            ids, tf = pairs[:, 0], pairs[:, 1].astype(np.float64)
            found = (ids, tf)
            if rows.held + len(ids) > self.kept:
                rows.terms.clear()
                rows.held = 0
                self.complete = False
            rows.terms[key] = found
            rows.held += len(ids)
        return found


def _add(rows: _Rows, rowid: int, collection: str, length: int) -> None:
    owner = rows.names.get(collection)
    if owner is None:
        owner = rows.names[collection] = len(rows.records)
        rows.records.append(0)
        rows.tokens.append(0)
    rows.owner[rowid] = owner
    rows.length[rowid] = length
    rows.records[owner] += 1
    rows.tokens[owner] += length
