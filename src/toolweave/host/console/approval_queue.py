"""The console's approvals queue on Postgres: every replica's console sees and answers them all.

`ConsoleApprovals` keeps the requests waiting for an admin in its own process. Behind a load
balancer the admin's browser reaches any replica, so with `[serve].store_dsn` each request is
also a row of `console_approvals` (`PostgresApprovalQueue`): the console of every replica lists
the pending rows, an answer given on any replica is written to the row (who decided, from which
replica and address, when) and announced with `NOTIFY`, and the replica whose call is waiting
resolves it. The caps (`max_pending`, `max_pending_per_client`) count the rows, so they hold
for the whole fleet.

The rows are the audit: a request stays once decided, with its decision (`approve`, `deny`,
`always`), or `expired` (nobody answered within the timeout: denied), or `abandoned` (its
replica stopped while it waited: the call was not run; the replica marks them when it starts
again under the same `[serve].instance`). An answer is taken once: the first decision wins, and
answering a request that is no longer pending changes nothing.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from toolweave.mcp.server.postgres_listen import close_listening, follow, listening

if TYPE_CHECKING:
    from toolweave.storage.sql import Dialect, Program

APPROVALS_CHANNEL = "toolweave_console_approvals"
PENDING = "pending"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS console_approvals (
    id TEXT PRIMARY KEY,
    instance TEXT NOT NULL,
    boot TEXT NOT NULL,
    requester TEXT NOT NULL,
    request TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL,
    status TEXT NOT NULL,
    decided_by TEXT,
    decided_at DOUBLE PRECISION
);
CREATE INDEX IF NOT EXISTS console_approvals_status ON console_approvals (status, created);
"""
Decided = Callable[[str, str], object]


class PostgresApprovalQueue:
    """Console approvals shared by the replicas on `dsn` (see the module docstring); this
    replica is `instance` (its `[serve].instance`)."""

    def __init__(self, dsn: str, *, instance: str) -> None:
        from toolweave.storage.sql import SQLStore

        self.dsn = dsn
        self.instance = instance
        self.boot = secrets.token_hex(8)  # this run of the replica
        self.db = SQLStore(dsn=dsn, schema=_SCHEMA, owner="PostgresApprovalQueue")
        self._decided: Decided | None = None
        self._added = asyncio.Event()
        self._listener: asyncio.Task[None] | None = None
        self._starting = asyncio.Lock()

    def attach(self, decided: Decided) -> None:
        """`decided(approval_id, decision)` hears every answer, given on any replica."""
        self._decided = decided

    async def start(self) -> None:
        """Listen for answers, and mark abandoned what this instance's earlier run left
        waiting (once; every other method calls it)."""
        async with self._starting:
            if self._listener is not None:
                return
            instance, boot = self.instance, self.boot

            def abandon(dialect: Dialect) -> Program[None]:
                yield (
                    "UPDATE console_approvals SET status = 'abandoned', decided_at = ? "
                    "WHERE instance = ? AND boot <> ? AND status = ?",
                    (time.time(), instance, boot, PENDING),
                )

            await self.db.transact(abandon)
            connection = await listening(self.dsn, APPROVALS_CHANNEL)
            self._listener = asyncio.ensure_future(
                follow(self.dsn, APPROVALS_CHANNEL, connection, self._receive)
            )

    async def _receive(self, payload: str) -> None:
        kind, _, rest = payload.partition(":")
        if kind == "new":
            self._added.set()
            self._added = asyncio.Event()
        elif kind == "decided" and self._decided is not None:
            approval_id, _, decision = rest.partition(":")
            self._decided(approval_id, decision)

    async def full(self, requester: str, max_pending: int, max_per_client: int) -> bool:
        """Whether the fleet already holds `max_pending` requests, or `max_per_client` of
        `requester`'s."""
        await self.start()

        def program(dialect: Dialect) -> Program[bool]:
            rows = yield (
                "SELECT COUNT(*), COALESCE(SUM(CASE WHEN requester = ? THEN 1 ELSE 0 END), 0) "
                "FROM console_approvals WHERE status = ?",
                (requester, PENDING),
            )
            total, mine = rows[0]
            return bool(total >= max_pending or mine >= max_per_client)

        return await self.db.transact(program)

    async def add(self, approval_id: str, requester: str, shown: dict[str, Any]) -> None:
        """Queue a request (`shown`: what the console lists) and tell every console."""
        await self.start()
        row = (approval_id, self.instance, self.boot, requester, json.dumps(shown), time.time())

        def program(dialect: Dialect) -> Program[None]:
            yield (
                "INSERT INTO console_approvals "
                "(id, instance, boot, requester, request, created, status) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (*row, PENDING),
            )
            yield "SELECT pg_notify(?, ?)", (APPROVALS_CHANNEL, f"new:{approval_id}")

        await self.db.transact(program)

    async def pending(self) -> list[dict[str, Any]]:
        """The requests waiting on any replica, oldest first, as the console lists them."""
        await self.start()

        def program(dialect: Dialect) -> Program[list[dict[str, Any]]]:
            rows = yield (
                "SELECT request, instance FROM console_approvals WHERE status = ? ORDER BY created",
                (PENDING,),
            )
            return [{**json.loads(shown), "instance": instance} for shown, instance in rows]

        return await self.db.transact(program)

    async def wait_pending(self, count: int = 1) -> list[dict[str, Any]]:
        """Wait until at least `count` requests wait in the fleet (for tests and scripts)."""
        while True:
            added = self._added
            found = await self.pending()
            if len(found) >= count:
                return found
            await added.wait()

    async def decide(self, approval_id: str, decision: str, by: str) -> bool:
        """Record an admin's answer (`by`: who, from where) and pass it to the replica waiting;
        False when the request is not pending (answered, expired, abandoned, unknown)."""
        await self.start()

        def program(dialect: Dialect) -> Program[bool]:
            rows = yield (
                "UPDATE console_approvals SET status = ?, decided_by = ?, decided_at = ? "
                "WHERE id = ? AND status = ? RETURNING 1",
                (decision, by, time.time(), approval_id, PENDING),
            )
            if rows:
                yield (
                    "SELECT pg_notify(?, ?)",
                    (APPROVALS_CHANNEL, f"decided:{approval_id}:{decision}"),
                )
            return bool(rows)

        return await self.db.transact(program)

    async def expire(self, approval_id: str) -> str | None:
        """The request timed out here: mark it expired, unless an answer won the race (then
        that decision is returned)."""

        def program(dialect: Dialect) -> Program[str | None]:
            rows = yield (
                "UPDATE console_approvals SET status = 'expired', decided_at = ? "
                "WHERE id = ? AND status = ? RETURNING 1",
                (time.time(), approval_id, PENDING),
            )
            if rows:
                return None
            rows = yield "SELECT status FROM console_approvals WHERE id = ?", (approval_id,)
            return str(rows[0][0]) if rows else None

        return await self.db.transact(program)

    async def history(self, limit: int) -> list[dict[str, Any]]:
        """The audit: the newest `limit` decided requests, with who decided and when."""
        await self.start()

        def program(dialect: Dialect) -> Program[list[dict[str, Any]]]:
            rows = yield (
                "SELECT request, instance, status, decided_by, decided_at FROM console_approvals "
                "WHERE status <> ? ORDER BY created DESC LIMIT ?",
                (PENDING, limit),
            )
            return [
                {**json.loads(shown), "instance": instance, "status": status, "decided_by": by,
                 "decided_at": at}
                for shown, instance, status, by, at in rows
            ]  # fmt: skip

        return await self.db.transact(program)

    async def close(self) -> None:
        await close_listening(set(), self._listener, self.db)
