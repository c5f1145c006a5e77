"""Reading `PostgresQdrantIndex`'s postings ahead, in the background, so that no search pays a
collection's first read (the server aggregating every tsvector of the collection: seconds for a
100k-chunk one).

`PgPostingsWarmer.soon()` starts one read when the index's postings are not all held
(`PgPostings.whole` is False: the index just opened, or a large write dropped a collection): on
a connection of its own, in one `REPEATABLE READ` snapshot, every collection not held, in name
order, while their postings (a record's distinct words: `length(words)`) fit the index's
`postings_kept`; then `PgPostings.adopt` takes them (a collection a write reached meanwhile
catches up at its next search; after a large write of this index it reads again). The index's
connection keeps serving searches and writes meanwhile.
"""

from __future__ import annotations

import threading
from typing import Any

from toolweave.storage.retrieval._pg_collection import read_collections, read_horizon
from toolweave.storage.retrieval._pg_postings import PgPostings, Snapshot, snapshot_writes
from toolweave.storage.retrieval._warm import PostingsReader


class PgPostingsWarmer(PostingsReader):
    """The background reads of one index's postings (`postings`, kept on the event loop)."""

    def __init__(self, dsn: str, postings: PgPostings) -> None:
        super().__init__(postings.name)
        self.dsn = dsn
        self.postings = postings

    def needed(self) -> bool:
        return not self.postings.whole

    async def held(self) -> int:
        return self.postings.held

    async def close(self) -> None:
        """Stop a read under way (cancelling its statement) and wait for it."""
        if self._task is not None:
            self._task.cancel()
        await super().close()

    async def read_once(self, stop: threading.Event) -> bool:
        import psycopg

        postings = self.postings
        try:
            async with await psycopg.AsyncConnection.connect(self.dsn, autocommit=True) as conn:
                snapshot = await self._snapshot(conn, postings.holding(), stop)
        except psycopg.Error as error:
            self.failed(error)
            return True
        if snapshot is None or stop.is_set():
            return True
        return postings.adopt(snapshot)

    async def _snapshot(self, conn: Any, held: set[str], stop: threading.Event) -> Snapshot | None:
        t, budget = self.postings.name, self.postings.kept - self.postings.held
        async with conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            writes, horizon = await snapshot_writes(conn, t), await read_horizon(conn)
            cursor = await conn.execute(
                f"SELECT collection, sum(length(words)) FROM {t} GROUP BY 1 ORDER BY 1"
            )
            chosen, complete = [], True
            for name, size in await cursor.fetchall():
                if name in held:
                    continue
                if int(size) > budget:
                    complete = False
                    continue
                chosen.append(name)
                budget -= int(size)
            if stop.is_set():
                return None
            collections = await read_collections(conn, t, chosen, writes, horizon) if chosen else {}
        return Snapshot(writes, collections, held, complete)
