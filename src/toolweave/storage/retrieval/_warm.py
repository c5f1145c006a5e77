"""One background read of an index's postings at a time, for both backends (`_sqlite_warm`,
`_pg_warm`): started when the index opens and after a write that dropped postings kept, read
again when a write came in while it ran, stopped when the index closes.

A subclass says whether a read is needed (`needed`), reads and adopts once (`read_once`: False
when the snapshot it read was refused because a write came in between, to read again), and
counts the postings held (`held`). A read that fails logs a warning once; searches then read the
words they need themselves, as before any read ahead.
"""

from __future__ import annotations

import asyncio
import logging
import threading

log = logging.getLogger(__name__)


class PostingsReader:
    """The background reads of one index's postings (`name`: the index table, for the log)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self._failed = False
        self._stop = threading.Event()

    def needed(self) -> bool:
        """Whether postings the index could hold are not held."""
        raise NotImplementedError

    async def read_once(self, stop: threading.Event) -> bool:
        """Read the postings not held and adopt them; False if refused (a write came in)."""
        raise NotImplementedError

    async def held(self) -> int:
        """The postings held now."""
        raise NotImplementedError

    def soon(self) -> None:
        """Start a read unless one runs or none is needed."""
        if self._stop.is_set() or self._failed or not self.needed():
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
        return await self.held()

    async def close(self) -> None:
        """Stop a read under way (at its next step) and wait for it."""
        self._stop.set()
        if self._task is not None:
            await asyncio.gather(self._task, return_exceptions=True)

    def failed(self, error: Exception) -> None:
        """A read failed: searches read their words themselves from now on."""
        log.warning("reading the postings of %s ahead failed: %s", self.name, error)
        self._failed = True

    async def _read(self) -> None:
        while not self._stop.is_set() and not self._failed:
            self._again = False
            adopted = await self.read_once(self._stop)
            if adopted and not (self._again and self.needed()):
                return
