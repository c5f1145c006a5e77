"""Spent `requestState` nonces on Postgres: an input-required state is accepted once by a fleet.

A 2026-07-28 call that needs the client's input ends with a sealed `requestState`; the client's
retry brings it back, and the server accepts each state once (a replayed state is refused). The
record of spent states is in process by default, so a state replayed to another replica would
pass there. `PostgresSpentStates` keeps the record in one table the replicas share: the first
replica to spend a nonce inserts it, every later attempt (on any replica) finds it. A row is
kept until its state expires (`request_state_ttl`), then swept. The replicas must also share
the HMAC key that seals the states (`MCPServer(state_key=...)`; `[serve].state_key` for
`toolweave serve`), or a state issued by one is refused by the others as altered.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolweave.storage.sql import Dialect, Program

SWEEP_EVERY = 60.0
"""Seconds between two sweeps of expired nonces by one process."""
_SCHEMA = """
CREATE TABLE IF NOT EXISTS mcp_spent_states (
    nonce TEXT PRIMARY KEY,
    expires DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS mcp_spent_states_expires ON mcp_spent_states (expires);
"""


class PostgresSpentStates:
    """The once-only record of `requestState` nonces for every replica on `dsn` (a
    `SpentStates`; `MCPServer(spent_states=...)`)."""

    def __init__(self, dsn: str) -> None:
        from toolweave.storage.sql import SQLStore

        self.db = SQLStore(dsn=dsn, schema=_SCHEMA, owner="PostgresSpentStates")
        self._swept = 0.0

    async def spend(self, nonce: str, expires: float) -> bool:
        now = time.time()
        sweep = now - self._swept >= SWEEP_EVERY
        if sweep:
            self._swept = now

        def program(dialect: Dialect) -> Program[bool]:
            if sweep:
                yield "DELETE FROM mcp_spent_states WHERE expires < ?", (now,)
            rows = yield (
                "INSERT INTO mcp_spent_states (nonce, expires) VALUES (?, ?) "
                "ON CONFLICT (nonce) DO NOTHING RETURNING 1",
                (nonce, expires),
            )
            return bool(rows)

        return await self.db.transact(program)

    async def close(self) -> None:
        await self.db.close()
