"""The query log: one row per run (or served tool call), from trigger to final response.

When a user asks "why did the bot answer that" or "what did it cost", the answer is a row: the
input, the session, who asked (`client`, the caller's identity), how many tool calls and which
tools (the first 20 names, plus the total), tokens, duration, how it ended (`status`) and what
became of it (`outcome`: "ran", "failed", "stopped" or "refused:<stage>", the stage that refused
it: plan, policy, gate, rules, hook, admin, approval or quota; "asked" for a call paused for its
client's answer). A row is written as `running` when the
work starts and finished in place, so a crash leaves a visible `running` row rather than
nothing. `search` filters rows by tool, client, time and outcome; the same store keeps the
approval decisions (`toolweave.accounting.audit`), so one file answers "who ran what, and who
allowed it". An agent run's tool calls are rows of their own (`kind` "call", `parent` the
run's row), so a filter by tool or outcome finds them as it finds served calls.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from toolweave.accounting.audit import (
    APPROVAL_SCHEMA,
    ApprovalRecord,
    Since,
    approval_rows,
    identities,
    insert_approval,
    since_timestamp,
)
from toolweave.errors import ConfigError
from toolweave.storage.sql import Dialect, Program, ProgramFactory, SQLStore

T = TypeVar("T")
QueryStatus = Literal["running", "success", "stopped", "timeout", "error", "paused"]
QUERY_STATUSES: tuple[QueryStatus, ...] = (
    "running",
    "success",
    "stopped",
    "timeout",
    "error",
    "paused",
)
OUTCOMES = ("ran", "failed", "stopped", "asked", "refused")
"""What became of a row ("asked": a 2026-07-28 call paused for its client's answer, which the
retry brings); a refusal is stored as "refused:<stage>" (filter by either)."""
MAX_LOGGED_TOOLS = 20
"""Tool names kept per row; `tool_calls` still counts them all."""
MAX_LOGGED_INPUT_CHARS = 4000
_OUTCOME_OF: dict[str, str] = {"success": "ran", "error": "failed", "timeout": "failed"}

_SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS toolweave_query_log (
    id TEXT PRIMARY KEY, started DOUBLE PRECISION NOT NULL, input TEXT NOT NULL,
    session_id TEXT NOT NULL, tool_calls INTEGER NOT NULL, tools TEXT NOT NULL,
    tokens BIGINT NOT NULL, duration DOUBLE PRECISION NOT NULL, status TEXT NOT NULL,
    error TEXT NOT NULL, kind TEXT NOT NULL, client TEXT NOT NULL DEFAULT '',
    tool TEXT NOT NULL DEFAULT '', outcome TEXT NOT NULL DEFAULT '',
    parent TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS toolweave_query_log_started ON toolweave_query_log (started);
"""
    + APPROVAL_SCHEMA
)
_ADDED_COLUMNS = ("client", "tool", "outcome", "parent")
"""Columns a query log written before the audit lacks; added on open."""
_COLUMNS = (
    "id, started, input, session_id, tool_calls, tools, tokens, duration, status, error, kind, "
    "client, tool, outcome, parent"
)


@dataclass(frozen=True, slots=True)
class QueryRecord:
    """One logged run. `tools` holds at most `MAX_LOGGED_TOOLS` names; `kind` is "run" for an
    agent run, "call" for one tool call of an agent run (`parent` is the run's row id) and
    "tool" for a tool call served by `toolweave serve`; `client` is who asked (the caller's
    identity) and `tool` the call's tool; `outcome` is "ran", "failed", "stopped" or
    "refused:<stage>" ("" while running)."""

    id: str
    input: str
    session_id: str
    status: QueryStatus
    started: float
    tool_calls: int = 0
    tools: list[str] = field(default_factory=list)
    tokens: int = 0
    duration: float = 0.0
    error: str = ""
    kind: str = "run"
    client: str = ""
    tool: str = ""
    outcome: str = ""
    parent: str = ""


@dataclass(frozen=True, slots=True)
class QueryFilter:
    """Which rows `QueryLog.search` returns: `tool` (a served call's tool, or a run that called
    it), `client` (an identity such as "principal:alice", or just "alice"), `since`/`until`
    (epoch seconds, a datetime, an ISO 8601 time or a span back from now such as "2h", "7d"),
    `outcome` ("ran", "failed", "stopped", "refused" or "refused:approval"), `kind` and
    `parent` (the calls of one agent run: its row id)."""

    tool: str | None = None
    client: str | None = None
    since: Since = None
    until: Since = None
    outcome: str | None = None
    kind: str | None = None
    parent: str | None = None

    def where(self) -> tuple[str, list[Any]]:
        """The SQL condition and its parameters (portable: both databases run it)."""
        clauses: list[str] = []
        params: list[Any] = []
        if self.tool:
            clauses.append("(tool = ? OR tools LIKE ? ESCAPE '\\')")
            params += [self.tool, f"%{_like(json.dumps(self.tool, ensure_ascii=False))}%"]
        if self.client:
            clauses.append("client IN (?, ?, ?)")
            params += identities(self.client)
        for name, bound, op in (("since", self.since, ">="), ("until", self.until, "<=")):
            if bound is not None:
                clauses.append(f"started {op} ?")
                params.append(since_timestamp(bound, field=name))
        if self.outcome:
            base = self.outcome.split(":", 1)[0]
            if base not in OUTCOMES:
                raise ConfigError(
                    f"outcome={self.outcome!r} is not an outcome; use one of "
                    f"{', '.join(OUTCOMES)} (or refused:<stage>, e.g. refused:approval)"
                )
            if self.outcome == "refused":
                clauses.append("outcome LIKE 'refused:%'")
            else:
                clauses.append("outcome = ?")
                params.append(self.outcome)
        for name, value in (("kind", self.kind), ("parent", self.parent)):
            if value:
                clauses.append(f"{name} = ?")
                params.append(value)
        return (" WHERE " + " AND ".join(clauses) if clauses else ""), params


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class QueryLog:
    """Rows in an embedded SQLite file (`path`) or a shared Postgres database (`dsn`)."""

    def __init__(self, path: str | Path | None = None, *, dsn: str | None = None) -> None:
        self.store = SQLStore(path, dsn=dsn, schema=_SCHEMA, owner="QueryLog")
        self._upgraded = False

    async def start(
        self,
        input: str,
        session_id: str,
        *,
        kind: str = "run",
        client: str = "",
        tool: str = "",
        parent: str = "",
        started: float | None = None,
    ) -> str:
        """Write a `running` row and return its id; `client` is who asked, `parent` the row of
        the run a call belongs to, `started` when it began (epoch seconds; default now)."""
        row_id = uuid.uuid4().hex
        text = input[:MAX_LOGGED_INPUT_CHARS]
        began = time.time() if started is None else started

        def program(dialect: Dialect) -> Program[None]:
            yield (
                f"INSERT INTO toolweave_query_log ({_COLUMNS}) "
                "VALUES (?, ?, ?, ?, 0, '[]', 0, 0, 'running', '', ?, ?, ?, '', ?)",
                (row_id, began, text, session_id, kind, client, tool, parent),
            )

        await self._transact(program)
        return row_id

    async def finish(
        self,
        row_id: str,
        status: QueryStatus,
        *,
        tools: Sequence[str] = (),
        tokens: int = 0,
        duration: float | None = None,
        error: str = "",
        outcome: str | None = None,
    ) -> None:
        """Finish the row: `tools` are every tool name called, in order (all are counted, the
        first `MAX_LOGGED_TOOLS` kept); `duration` defaults to the time since `start`;
        `outcome` defaults to what `status` says ("ran", "failed" or "stopped")."""
        if status not in QUERY_STATUSES or status == "running":
            raise ConfigError(
                f"QueryLog.finish(status={status!r}) must be one of success, stopped, timeout, "
                "error"
            )
        names = json.dumps(list(tools)[:MAX_LOGGED_TOOLS], ensure_ascii=False)
        became = outcome or _OUTCOME_OF.get(status, "stopped")
        now = time.time()

        def program(dialect: Dialect) -> Program[None]:
            took = duration
            if took is None:
                rows = yield ("SELECT started FROM toolweave_query_log WHERE id = ?", (row_id,))
                took = now - float(rows[0][0]) if rows else 0.0
            yield (
                "UPDATE toolweave_query_log SET status = ?, tool_calls = ?, tools = ?, tokens = ?, "
                "duration = ?, error = ?, outcome = ? WHERE id = ?",
                (
                    status,
                    len(tools),
                    names,
                    tokens,
                    took,
                    error[:MAX_LOGGED_INPUT_CHARS],
                    became,
                    row_id,
                ),
            )

        await self._transact(program)

    async def recent(self, n: int = 20) -> list[QueryRecord]:
        """The newest `n` rows, newest first."""
        return await self.search(limit=n)

    def recent_sync(self, n: int = 20) -> list[QueryRecord]:
        """`recent` for synchronous callers (the `toolweave log` command)."""
        return self.search_sync(limit=n)

    async def search(self, *, limit: int = 20, **filters: Any) -> list[QueryRecord]:
        """The newest `limit` rows that match `filters` (`QueryFilter`'s fields), newest first."""
        where = QueryFilter(**filters).where()
        return await self._transact(lambda d: _select(where, limit))

    def search_sync(self, *, limit: int = 20, **filters: Any) -> list[QueryRecord]:
        """`search` for synchronous callers."""
        where = QueryFilter(**filters).where()
        return self._transact_sync(lambda d: _select(where, limit))

    async def record_approval(
        self,
        *,
        tool: str,
        args: Any,
        decided_by: str,
        decision: str,
        session_id: str | None = None,
        requester: str | None = None,
        kind: str = "user",
        call_id: str | None = None,
        reason: str = "",
        asked: float = 0.0,
    ) -> None:
        """Keep one approval decision: who decided (`decided_by`), what (`decision`, one of
        `DECISIONS`), on which call and arguments; `asked` is when the question was put."""
        record = ApprovalRecord(
            tool=tool,
            args=ApprovalRecord.arguments(args),
            decided_by=decided_by,
            decision=decision,
            session_id=session_id or "",
            requester=requester or "",
            kind=kind,
            call_id=call_id or "",
            reason=reason,
            asked=asked,
        )
        await self._transact(lambda d: insert_approval(record))

    async def approvals(self, *, limit: int = 20, **filters: Any) -> list[ApprovalRecord]:
        """The newest `limit` approval decisions, newest first; filters: `tool`, `requester`,
        `decided_by`, `since`, `until`, `approved`."""
        return await self._transact(lambda d: approval_rows(limit, **filters))

    def approvals_sync(self, *, limit: int = 20, **filters: Any) -> list[ApprovalRecord]:
        """`approvals` for synchronous callers."""
        return self._transact_sync(lambda d: approval_rows(limit, **filters))

    async def _transact(self, factory: ProgramFactory[T]) -> T:
        if not self._upgraded:
            await self.store.transact(_upgrade)
            self._upgraded = True
        return await self.store.transact(factory)

    def _transact_sync(self, factory: ProgramFactory[T]) -> T:
        if not self._upgraded:
            self.store.transact_sync(_upgrade)
            self._upgraded = True
        return self.store.transact_sync(factory)

    async def close(self) -> None:
        await self.store.close()

    def close_sync(self) -> None:
        self.store.close_sync()


def _upgrade(dialect: Dialect) -> Program[None]:
    """Add the audit's columns to a query log written before them (empty for old rows)."""
    if dialect == "sqlite":
        rows = yield ("PRAGMA table_info(toolweave_query_log)", ())
        have = {row[1] for row in rows}
    else:
        rows = yield (
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'toolweave_query_log' AND table_schema = current_schema()",
            (),
        )
        have = {row[0] for row in rows}
    exists = " IF NOT EXISTS" if dialect == "postgres" else ""  # replicas may race on it
    for column in _ADDED_COLUMNS:
        if column not in have:
            yield (
                f"ALTER TABLE toolweave_query_log ADD COLUMN{exists} {column} TEXT NOT NULL "
                "DEFAULT ''",
                (),
            )


def _select(where: tuple[str, list[Any]], n: int) -> Program[list[QueryRecord]]:
    if n < 1:
        raise ConfigError(f"QueryLog.search(limit={n}) must be at least 1")
    condition, params = where
    rows = yield (
        f"SELECT {_COLUMNS} FROM toolweave_query_log{condition} "
        "ORDER BY started DESC, id DESC LIMIT ?",
        (*params, n),
    )
    return [
        QueryRecord(
            id=row[0],
            started=float(row[1]),
            input=row[2],
            session_id=row[3],
            tool_calls=int(row[4]),
            tools=list(json.loads(row[5])),
            tokens=int(row[6]),
            duration=float(row[7]),
            status=row[8],
            error=row[9],
            kind=row[10],
            client=row[11],
            tool=row[12],
            outcome=row[13],
            parent=row[14],
        )
        for row in rows
    ]
