"""`LISTEN` connections the fleet's Postgres stores share: opened, followed across a Postgres
restart, closed.

The change relay, the 2025-era session store and the console's approvals queue each hear the
other replicas through `NOTIFY` on one channel. `follow` hands every note to its handler and,
when Postgres goes away (a restart), connects again with backoff (`RECONNECT_FIRST_DELAY`,
doubled up to `RECONNECT_MAX_DELAY`) and calls `on_reconnect`, since the notes sent while
nobody listened are lost; no replica needs a restart.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolweave.storage.sql import SQLStore

logger = logging.getLogger(__name__)

RECONNECT_FIRST_DELAY = 0.2
RECONNECT_MAX_DELAY = 5.0
"""Seconds between the attempts to listen again after losing Postgres: the first wait, doubled
each failure up to the last."""


async def listening(dsn: str, channel: str) -> Any:
    """A new autocommit connection already listening on `channel`."""
    import psycopg

    connection = await psycopg.AsyncConnection.connect(dsn, autocommit=True)
    await connection.execute(f"LISTEN {channel}")
    return connection


async def follow(
    dsn: str,
    channel: str,
    connection: Any,
    on_note: Callable[[str], Awaitable[None]],
    on_reconnect: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Pass each note's payload on `connection` (from `listening`) to `on_note`, until
    cancelled; listen again when Postgres goes away, then `on_reconnect()`."""
    import psycopg

    while True:
        try:
            async with connection:
                async for note in connection.notifies():
                    await on_note(note.payload)
        except psycopg.OperationalError as exc:
            logger.warning("%s: lost its Postgres connection (%s); reconnecting", channel, exc)
        delay = RECONNECT_FIRST_DELAY
        while True:
            try:
                connection = await listening(dsn, channel)
                break
            except psycopg.OperationalError:
                await asyncio.sleep(delay)
                delay = min(delay * 2, RECONNECT_MAX_DELAY)
        logger.warning("%s: listening again", channel)
        if on_reconnect is not None:
            await on_reconnect()


async def close_listening(
    pending: set[asyncio.Task[None]], listener: asyncio.Task[None] | None, db: SQLStore
) -> None:
    """Finish the writes in flight, stop listening, close the store (a listener's `close`)."""
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    if listener is not None:
        listener.cancel()
        await asyncio.gather(listener, return_exceptions=True)
    await db.close()
