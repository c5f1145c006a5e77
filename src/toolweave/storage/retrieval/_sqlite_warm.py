"""Reading `SQLiteTextIndex`'s postings ahead, in the background, so that no query pays a word's
first read (a walk of its occurrences in FTS5's index: tens of milliseconds for the common words
of a 100k-chunk table).

`PostingsWarmer.soon()` starts one read when the index's postings are not all held
(`Postings.whole` is False: the index just opened, a large write dropped them, another process
wrote): every term's postings up to the index's `postings_kept`, read by `read_postings` on a
read-only connection of its own, so the index's connection keeps serving searches and writes
meanwhile, by a thread that yields to searches (`yield_to_searches`: searches during the read
took 14.7-17.3 ms p50 beside it at full priority, 5.6-6.6 ms at nice 19 on a busy machine) and
waits before each step for the index's searches in flight (`SearchGate`: on an idle machine
the reader at nice 19 had the other core, and searches took 11.2 ms p50 beside it); then
`Postings.adopt` takes them on the index's thread, unless a write came in between (then it
reads again). An in-memory database has no second connection: its words are read as queries
ask for them. The loop of reads is `_warm.PostingsReader`, shared with Postgres.
"""

from __future__ import annotations

import sqlite3
import threading

from toolweave.storage.retrieval._background import SearchGate, yield_to_searches
from toolweave.storage.retrieval._sqlite_bm25 import Postings, Snapshot, read_postings
from toolweave.storage.retrieval._warm import PostingsReader
from toolweave.storage.sqlite import SQLiteDatabase


class PostingsWarmer(PostingsReader):
    """The background reads of one index's postings (`postings`, kept on `db`'s thread)."""

    def __init__(self, db: SQLiteDatabase, postings: Postings, gate: SearchGate) -> None:
        super().__init__(postings.name)
        self.db = db
        self.postings = postings
        self.gate = gate

    def needed(self) -> bool:
        return not self.postings.whole and self.db.path != ":memory:"

    async def held(self) -> int:
        return await self.db.run(self.postings.held)

    async def close(self) -> None:
        self._stop.set()
        self.gate.wake()  # a read waiting for the searches in flight sees the stop now
        await super().close()

    async def read_once(self, stop: threading.Event) -> bool:
        postings = self.postings
        try:
            reader = SQLiteDatabase(self.db.path, read_only=True)
            try:
                snapshot: Snapshot | None = await reader.run(
                    lambda conn: _read_behind_searches(conn, postings, stop, self.gate)
                )
            finally:
                await reader.close()
        except sqlite3.Error as error:
            self.failed(error)
            return True
        if snapshot is None or stop.is_set():
            return True
        await self.db.run(lambda conn: postings.adopt(conn, snapshot))
        return postings.whole


def _read_behind_searches(
    conn: sqlite3.Connection, postings: Postings, stop: threading.Event, gate: SearchGate
) -> Snapshot | None:
    """`read_postings` on the reader's own thread (it ends with the read), at the priority of
    background work, each step once the index's searches in flight end (`gate`)."""
    yield_to_searches()
    return read_postings(conn, postings.name, postings.kept, stop, gate)
