"""Daily quotas: cap the tokens (and served tool calls) a session and everyone together may use.

A model call is *reserved* before it is sent (its estimated input) and *settled* after it with
the real usage, so a run that would pass the limit is refused before money is spent, and what
was actually used is what counts. Both steps are idempotent on their `reservation_id`: a retried
model call, or a settle repeated after a crash, never counts twice. Counters live in one row per
(day, scope, metric) and change with single conditional UPDATEs inside one transaction, so two
processes sharing a Postgres store cannot both slip under the limit. Keys are per UTC day, so
yesterday's usage simply stops mattering at midnight (the reset time `QuotaExceeded` reports).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from toolweave.accounting.errors import GLOBAL_SCOPE, Metric, QuotaExceeded
from toolweave.errors import ConfigError
from toolweave.storage.sql import Dialect, Program, SQLStore

_SCHEMA = """
CREATE TABLE IF NOT EXISTS toolweave_quota_usage (
    day TEXT NOT NULL, scope TEXT NOT NULL, metric TEXT NOT NULL, amount BIGINT NOT NULL,
    PRIMARY KEY (day, scope, metric)
);
CREATE TABLE IF NOT EXISTS toolweave_quota_reservations (
    id TEXT PRIMARY KEY, day TEXT NOT NULL, session TEXT NOT NULL, reserved BIGINT NOT NULL,
    tokens BIGINT, settled INTEGER NOT NULL, created DOUBLE PRECISION NOT NULL
);
"""
_ADD = (
    "INSERT INTO toolweave_quota_usage (day, scope, metric, amount) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (day, scope, metric) DO UPDATE SET "
    "amount = toolweave_quota_usage.amount + excluded.amount"
)


@dataclass(frozen=True, slots=True)
class QuotaUsage:
    """Today's counters for one session and for everyone."""

    day: str
    session_tokens: int
    global_tokens: int
    session_calls: int
    global_calls: int
    reset_at: datetime


class Quota:
    """Per-session and global daily limits; `None` means unlimited (usage is still counted).

    Give `path` for an embedded SQLite file or `dsn` for a Postgres database shared by several
    processes. `clock` returns epoch seconds (tests pass a fake one).
    """

    def __init__(
        self,
        path: str | Path | None = None,
        per_session_daily_tokens: int | None = None,
        global_daily_tokens: int | None = None,
        *,
        per_session_daily_calls: int | None = None,
        global_daily_calls: int | None = None,
        dsn: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        for name, value in (
            ("per_session_daily_tokens", per_session_daily_tokens),
            ("global_daily_tokens", global_daily_tokens),
            ("per_session_daily_calls", per_session_daily_calls),
            ("global_daily_calls", global_daily_calls),
        ):
            if value is not None and (isinstance(value, bool) or value < 0):
                raise ConfigError(f"Quota({name}=...) must be a non-negative integer or None")
        self.limits: dict[tuple[str, Metric], int | None] = {
            ("session", "tokens"): per_session_daily_tokens,
            (GLOBAL_SCOPE, "tokens"): global_daily_tokens,
            ("session", "calls"): per_session_daily_calls,
            (GLOBAL_SCOPE, "calls"): global_daily_calls,
        }
        self.store = SQLStore(path, dsn=dsn, schema=_SCHEMA, owner="Quota")
        self._now = clock

    # -- the day -----------------------------------------------------------------------------

    def day(self) -> str:
        return datetime.fromtimestamp(self._now(), UTC).strftime("%Y-%m-%d")

    def reset_at(self) -> datetime:
        today = datetime.fromtimestamp(self._now(), UTC).replace(
            hour=0, minute=0, second=0, microsecond=0
        )
        return today + timedelta(days=1)

    # -- reserve and settle ------------------------------------------------------------------

    async def reserve(
        self,
        session_key: str,
        *,
        tokens: int | None = None,
        calls: int | None = None,
        reservation_id: str | None = None,
    ) -> str:
        """Count `tokens` (an estimate, corrected by `settle`) and `calls` against today's limits,
        or raise `QuotaExceeded` and count nothing. A metric left `None` is neither checked nor
        counted (a served tool call is checked on calls, a model call on tokens, even with an
        estimate of 0: a used-up day refuses it). Returns the reservation id; reserving an id
        that already exists is a no-op (a retried call)."""
        rid = reservation_id or uuid.uuid4().hex
        day, reset_at, now = self.day(), self.reset_at(), self._now()
        await self.store.transact(
            lambda d: self._reserve(d, rid, day, reset_at, now, session_key, tokens, calls)
        )
        return rid

    async def settle(self, reservation_id: str, *, tokens: int) -> None:
        """Replace the reservation's estimate with the real `tokens`; repeating it is a no-op.
        Real usage always counts, even past the limit (the call already happened)."""
        await self.store.transact(lambda d: self._settle(d, reservation_id, tokens))

    async def add(self, session_key: str, *, tokens: int, reservation_id: str) -> None:
        """Count usage that happened without a reservation (work outside a model call the quota
        saw); idempotent on `reservation_id`."""
        day, reset_at, now = self.day(), self.reset_at(), self._now()

        def program(dialect: Dialect) -> Program[None]:
            yield from self._reserve(
                dialect, reservation_id, day, reset_at, now, session_key, 0, None, check=False
            )
            yield from self._settle(dialect, reservation_id, tokens)

        await self.store.transact(program)

    async def usage(self, session_key: str) -> QuotaUsage:
        day = self.day()

        def program(dialect: Dialect) -> Program[dict[tuple[str, str], int]]:
            rows = yield (
                "SELECT scope, metric, amount FROM toolweave_quota_usage "
                "WHERE day = ? AND scope IN (?, ?)",
                (day, _session_scope(session_key), GLOBAL_SCOPE),
            )
            return {(scope, metric): int(amount) for scope, metric, amount in rows}

        found = await self.store.transact(program)
        scope = _session_scope(session_key)
        return QuotaUsage(
            day=day,
            session_tokens=found.get((scope, "tokens"), 0),
            global_tokens=found.get((GLOBAL_SCOPE, "tokens"), 0),
            session_calls=found.get((scope, "calls"), 0),
            global_calls=found.get((GLOBAL_SCOPE, "calls"), 0),
            reset_at=self.reset_at(),
        )

    async def close(self) -> None:
        await self.store.close()

    # -- programs ----------------------------------------------------------------------------

    def _reserve(
        self,
        dialect: Dialect,
        rid: str,
        day: str,
        reset_at: datetime,
        now: float,
        session_key: str,
        tokens: int | None,
        calls: int | None,
        *,
        check: bool = True,
    ) -> Program[None]:
        fresh = yield (
            "INSERT INTO toolweave_quota_reservations "
            "(id, day, session, reserved, settled, created) VALUES (?, ?, ?, ?, 0, ?) "
            "ON CONFLICT (id) DO NOTHING RETURNING id",
            (rid, day, session_key, tokens or 0, now),
        )
        if not fresh:
            return  # a retry of a reservation already made
        metrics: tuple[tuple[Metric, int | None], ...] = (("tokens", tokens), ("calls", calls))
        for kind, scope in (("session", _session_scope(session_key)), (GLOBAL_SCOPE, GLOBAL_SCOPE)):
            for metric, amount in metrics:
                if amount is None:
                    continue
                limit = self.limits[(kind, metric)] if check else None
                if limit is None:
                    yield (f"{_ADD} RETURNING amount", (day, scope, metric, amount))
                    continue
                # One conditional upsert: the check and the increment cannot be separated.
                added = yield (
                    f"{_ADD} WHERE toolweave_quota_usage.amount < ? AND "
                    "toolweave_quota_usage.amount + excluded.amount <= ? RETURNING amount",
                    (day, scope, metric, amount, limit, limit),
                )
                if not added or amount > limit:
                    used = yield (
                        "SELECT amount FROM toolweave_quota_usage "
                        "WHERE day = ? AND scope = ? AND metric = ?",
                        (day, scope, metric),
                    )
                    # Raising rolls the whole transaction back: nothing was counted.
                    raise QuotaExceeded(
                        session_key if kind == "session" else GLOBAL_SCOPE,
                        metric,
                        limit,
                        int(used[0][0]) - (amount if added else 0) if used else 0,
                        amount,
                        reset_at,
                    )

    def _settle(self, dialect: Dialect, rid: str, tokens: int) -> Program[None]:
        rows = yield (
            "UPDATE toolweave_quota_reservations SET settled = 1, tokens = ? "
            "WHERE id = ? AND settled = 0 RETURNING day, session, reserved",
            (tokens, rid),
        )
        if not rows:
            return  # settled already (a repeated settle) or never reserved
        day, session_key, reserved = rows[0]
        yield (
            "UPDATE toolweave_quota_usage SET amount = amount + ? "
            "WHERE day = ? AND scope IN (?, ?) AND metric = 'tokens'",
            (tokens - int(reserved), day, _session_scope(str(session_key)), GLOBAL_SCOPE),
        )


def _session_scope(session_key: str) -> str:
    return f"session:{session_key}"
