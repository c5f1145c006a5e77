"""Reading `SQLiteTextIndex`'s postings ahead, in the background, so that no query pays a word's
first read (a walk of its occurrences in FTS5's index: tens of milliseconds for the common words
of a 100k-chunk table).

`PostingsWarmer.soon()` starts one read when the index's postings are not all held
(`Postings.whole` is False: the index just opened, a large write dropped them, another process
wrote): every term's postings up to the index's `postings_kept`, read by `read_postings` on a
read-only connection of its own, so the index's connection keeps serving searches and writes
meanwhile, by a thread that yields to searches (`yield_to_searches`: searches during the read
took 14.7-17.3 ms p50 beside it at full priority, 5.6-6.6 ms at nice 19); then
`Postings.adopt` takes them on the index's thread, unless a write came in between (then it
reads again). An in-memory database has no second connection: its words are read as queries
ask for them.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import threading

from toolweave.storage.retrieval._background import yield_to_searches
from toolweave.storage.retrieval._sqlite_bm25 import Postings, Snapshot, read_postings
from toolweave.storage.sqlite import SQLiteDatabase

log = logging.getLogger(__name__)


class PostingsWarmer:
    """The background reads of one index's postings (`postings`, kept on `db`'s thread)."""

    def __init__(self, db: SQLiteDatabase, postings: Postings) -> None:
        self.db = db
        self.postings = postings
        self._task: asyncio.Task[int] | None = None
        self._again = False
        self._failed = False
        self._stop = threading.Event()

    def soon(self) -> None:
        """Start a read unless one runs, the postings are all held, or the file is in memory."""
        if self._stop.is_set() or self._failed or self.postings.whole or self.db.path == ":memory:":
            return
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._read())
        else:  # a write may have come after the read under way began: read again after it
            self._again = True

    async def wait(self) -> int:
        """Read now if needed (or wait for the read under way); the postings held then."""
        self.soon()
        if self._task is not None:
            await asyncio.shield(self._task)
        return await self.db.run(self.postings.held)

    async def close(self) -> None:
        """Stop a read under way (at its next batch) and wait for it."""
        self._stop.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    async def _read(self) -> int:
        while True:
            self._again = False
            held = await self._read_once()
            if self.postings.whole or not self._again or self._stop.is_set():
                return held

    async def _read_once(self) -> int:
        postings, stop = self.postings, self._stop
        try:
            reader = SQLiteDatabase(self.db.path, read_only=True)
            try:
                snapshot: Snapshot | None = await reader.run(
                    lambda conn: _read_behind_searches(conn, postings, stop)
                )
            finally:
                await reader.close()
        except sqlite3.Error as error:  # searches read their words themselves from now on
            log.warning("reading the postings of %s ahead failed: %s", postings.name, error)
            self._failed = True
            return 0
        if snapshot is None or stop.is_set():
            return 0
        return await self.db.run(lambda conn: postings.adopt(conn, snapshot))


def _read_behind_searches(
    conn: sqlite3.Connection, postings: Postings, stop: threading.Event
) -> Snapshot | None:
    """`read_postings` on the reader's own thread (it ends with the read), at the priority of
    background work."""
    yield_to_searches()
    return read_postings(conn, postings.name, postings.kept, stop)
