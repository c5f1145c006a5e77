"""The query log: one row per run (or served tool call), from trigger to final response.

When a user asks "why did the bot answer that" or "what did it cost", the answer is a row: the
input, the session, how many tool calls and which tools (the first 20 names, plus the total),
tokens, duration and how it ended. A row is written as `running` when the work starts and
finished in place, so a crash leaves a visible `running` row rather than nothing.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from toolweave.errors import ConfigError
from toolweave.storage.sql import Dialect, Program, SQLStore

QueryStatus = Literal["running", "success", "stopped", "timeout", "error", "paused"]
QUERY_STATUSES: tuple[QueryStatus, ...] = (
    "running",
    "success",
    "stopped",
    "timeout",
    "error",
    "paused",
)
MAX_LOGGED_TOOLS = 20
"""Tool names kept per row; `tool_calls` still counts them all."""
MAX_LOGGED_INPUT_CHARS = 4000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS toolweave_query_log (
    id TEXT PRIMARY KEY, started DOUBLE PRECISION NOT NULL, input TEXT NOT NULL,
    session_id TEXT NOT NULL, tool_calls INTEGER NOT NULL, tools TEXT NOT NULL,
    tokens BIGINT NOT NULL, duration DOUBLE PRECISION NOT NULL, status TEXT NOT NULL,
    error TEXT NOT NULL, kind TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS toolweave_query_log_started ON toolweave_query_log (started)
"""
_COLUMNS = (
    "id, started, input, session_id, tool_calls, tools, tokens, duration, status, error, kind"
)


@dataclass(frozen=True, slots=True)
class QueryRecord:
    """One logged run. `tools` holds at most `MAX_LOGGED_TOOLS` names; `kind` is "run" for an
    agent run and "tool" for a tool call served by `toolweave serve`."""

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


class QueryLog:
    """Rows in an embedded SQLite file (`path`) or a shared Postgres database (`dsn`)."""

    def __init__(self, path: str | Path | None = None, *, dsn: str | None = None) -> None:
        self.store = SQLStore(path, dsn=dsn, schema=_SCHEMA, owner="QueryLog")

    async def start(self, input: str, session_id: str, *, kind: str = "run") -> str:
        """Write a `running` row and return its id."""
        row_id = uuid.uuid4().hex
        text = input[:MAX_LOGGED_INPUT_CHARS]

        def program(dialect: Dialect) -> Program[None]:
            yield (
                f"INSERT INTO toolweave_query_log ({_COLUMNS}) "
                "VALUES (?, ?, ?, ?, 0, '[]', 0, 0, 'running', '', ?)",
                (row_id, time.time(), text, session_id, kind),
            )

        await self.store.transact(program)
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
    ) -> None:
        """Finish the row: `tools` are every tool name called, in order (all are counted, the
        first `MAX_LOGGED_TOOLS` kept); `duration` defaults to the time since `start`."""
        if status not in QUERY_STATUSES or status == "running":
            raise ConfigError(
                f"QueryLog.finish(status={status!r}) must be one of success, stopped, timeout, "
                "error"
            )
        names = json.dumps(list(tools)[:MAX_LOGGED_TOOLS], ensure_ascii=False)
        now = time.time()

        def program(dialect: Dialect) -> Program[None]:
            took = duration
            if took is None:
                rows = yield ("SELECT started FROM toolweave_query_log WHERE id = ?", (row_id,))
                took = now - float(rows[0][0]) if rows else 0.0
            yield (
                "UPDATE toolweave_query_log SET status = ?, tool_calls = ?, tools = ?, tokens = ?, "
                "duration = ?, error = ? WHERE id = ?",
                (status, len(tools), names, tokens, took, error[:MAX_LOGGED_INPUT_CHARS], row_id),
            )

        await self.store.transact(program)

    async def recent(self, n: int = 20) -> list[QueryRecord]:
        """The newest `n` rows, newest first."""
        return await self.store.transact(lambda d: _recent(n))

    def recent_sync(self, n: int = 20) -> list[QueryRecord]:
        """`recent` for synchronous callers (the `toolweave log` command)."""
        return self.store.transact_sync(lambda d: _recent(n))

    async def close(self) -> None:
        await self.store.close()

    def close_sync(self) -> None:
        self.store.close_sync()


def _recent(n: int) -> Program[list[QueryRecord]]:
    if n < 1:
        raise ConfigError(f"QueryLog.recent(n={n}) must be at least 1")
    rows = yield (
        f"SELECT {_COLUMNS} FROM toolweave_query_log ORDER BY started DESC, id DESC LIMIT ?",
        (n,),
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
        )
        for row in rows
    ]
