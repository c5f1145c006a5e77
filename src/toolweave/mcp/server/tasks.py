"""Where MCP tasks (SEP-2663) live: a small async store protocol, on SQLite or on Postgres.

A task is a tool call that finishes later. The server answers the call with the task's id, runs
the tool in the background and records each change here: `working`, `input_required` (the tool
asked the client something; the questions are in `input_requests`), then one terminal status,
`completed` (with the tool's result, an error result included), `failed` (a protocol failure,
with a JSON-RPC `error`) or `cancelled`. Clients read it with `tasks/get`, so the store, not the
process, is the truth: a task is durable before its id is sent, outlives the request that made
it and is visible to every replica that shares the store.

Each task belongs to the caller that created it (the authenticated principal; "" when the
transport checks nobody), and another caller's lookup finds nothing. Each expires `ttl_ms` after
its creation. A store is opened by one *instance* (a replica's stable name) per *boot*: tasks an
earlier boot of the same instance left active can no longer finish, so `recover()` marks them
`failed` with "host restarted".

`SQLiteTaskStore` (one host; in memory by default) and `PostgresTaskStore` (every replica of a
fleet on one database) are the same code: each operation is one transaction program run by
`toolweave.storage.sql.SQLStore` on either database. On Postgres every replica needs its own
`instance` name, or one replica's boot would fail the tasks another is running.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from toolweave.mcp.shared.errors import INTERNAL_ERROR

if TYPE_CHECKING:
    from toolweave.storage.sql import Dialect, Program, SQLStore

#: A tool's `task` option: never a task, a task when the client supports tasks, only a task.
TASK_SUPPORT = (None, "optional", "required")
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
#: The error a task still active when its host stopped ends with.
HOST_RESTARTED = {"code": INTERNAL_ERROR, "message": "failed: host restarted"}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS mcp_tasks (
    task_id TEXT PRIMARY KEY,
    owner TEXT NOT NULL,
    tool TEXT NOT NULL,
    status TEXT NOT NULL,
    status_message TEXT,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL,
    ttl_ms BIGINT NOT NULL,
    poll_interval_ms BIGINT NOT NULL,
    instance TEXT NOT NULL,
    boot TEXT NOT NULL,
    result TEXT,
    error TEXT,
    input_requests TEXT
);
CREATE INDEX IF NOT EXISTS mcp_tasks_expiry ON mcp_tasks (created_at);
"""
_JSON_FIELDS = ("result", "error", "input_requests")
_ACTIVE = "status IN ('working', 'input_required')"


def _iso(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds")


@dataclass
class TaskRecord:
    """One task as stored; `wire()` is what `tasks/get` and the creating call answer."""

    task_id: str
    owner: str
    tool: str
    status: str = "working"
    ttl_ms: int = 0
    poll_interval_ms: int = 0
    created_at: float = field(default_factory=time.time)
    updated_at: float = 0.0
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None
    instance: str = ""
    boot: str = ""

    def __post_init__(self) -> None:
        self.updated_at = self.updated_at or self.created_at

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    def wire(self, *, detailed: bool = True) -> dict[str, Any]:
        """The task's fields; `detailed` adds what the status carries (result, error, inputs)."""
        task: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": _iso(self.created_at),
            "lastUpdatedAt": _iso(self.updated_at),
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_interval_ms,
        }
        if self.status_message:
            task["statusMessage"] = self.status_message
        if detailed:
            if self.status == "completed" and self.result is not None:
                task["result"] = self.result
            elif self.status == "failed" and self.error is not None:
                task["error"] = self.error
            elif self.status == "input_required" and self.input_requests:
                task["inputRequests"] = self.input_requests
        return task


class TaskStore(Protocol):
    """The async protocol every task store implements (SQLite here, Postgres for a fleet)."""

    instance: str
    boot: str

    async def create(self, task: TaskRecord) -> None:
        """Store a new task; it is readable by `get` once this returns."""

    async def get(self, task_id: str, owner: str) -> TaskRecord | None:
        """The task, or None when it is unknown, expired or another owner's."""

    async def update(self, task_id: str, changes: dict[str, Any]) -> TaskRecord | None:
        """Apply `changes` (TaskRecord field names) unless the task already ended; the task as
        it now is, None when unknown. A change to a terminal status is applied once."""

    async def recover(self) -> int:
        """Fail the tasks an earlier boot of this instance left active; how many."""

    async def close(self) -> None: ...


def new_task_id() -> str:
    return secrets.token_urlsafe(18)


_COLUMNS = tuple(f.name for f in fields(TaskRecord))


class _SQLTaskStore:
    """The task store's logic, written once over `SQLStore` (see the module docstring)."""

    def __init__(self, database: SQLStore, instance: str) -> None:
        self.db = database
        self.instance = instance
        self.boot = secrets.token_hex(8)

    async def create(self, task: TaskRecord) -> None:
        task.instance, task.boot = self.instance, self.boot
        row = [_column(name, getattr(task, name)) for name in _COLUMNS]
        now = time.time()

        def program(dialect: Dialect) -> Program[None]:
            yield "DELETE FROM mcp_tasks WHERE created_at + ttl_ms / 1000.0 < ?", (now,)
            marks = ", ".join("?" for _ in _COLUMNS)
            yield f"INSERT INTO mcp_tasks ({', '.join(_COLUMNS)}) VALUES ({marks})", row

        await self.db.transact(program)

    async def get(self, task_id: str, owner: str) -> TaskRecord | None:
        task = await self.db.transact(lambda dialect: _read(task_id))
        if task is None or task.owner != owner:
            return None
        if task.created_at + task.ttl_ms / 1000 < time.time():
            return None
        return task

    async def update(self, task_id: str, changes: dict[str, Any]) -> TaskRecord | None:
        values = {name: _column(name, value) for name, value in changes.items()}
        values["updated_at"] = time.time()
        assignments = ", ".join(f"{name} = ?" for name in values)
        terminal = ", ".join(f"'{status}'" for status in sorted(TERMINAL_STATUSES))

        def program(dialect: Dialect) -> Program[TaskRecord | None]:
            yield (
                f"UPDATE mcp_tasks SET {assignments} WHERE task_id = ? "
                f"AND status NOT IN ({terminal})",
                [*values.values(), task_id],
            )
            return (yield from _read(task_id))

        return await self.db.transact(program)

    async def recover(self) -> int:
        error = json.dumps(HOST_RESTARTED)
        now = time.time()

        def program(dialect: Dialect) -> Program[int]:
            rows = yield (
                "UPDATE mcp_tasks SET status = 'failed', error = ?, input_requests = NULL, "
                "status_message = ?, updated_at = ? WHERE instance = ? AND boot != ? "
                f"AND {_ACTIVE} RETURNING task_id",
                (error, HOST_RESTARTED["message"], now, self.instance, self.boot),
            )
            return len(rows)

        return await self.db.transact(program)

    async def close(self) -> None:
        await self.db.close()


class SQLiteTaskStore(_SQLTaskStore):
    """Tasks in an SQLite file (WAL, synchronous FULL; `":memory:"` keeps them in this process).

    sqlite3 is imported when the first store is built, not when the server starts."""

    def __init__(self, path: str | Path = ":memory:", *, instance: str = "local") -> None:
        from toolweave.storage.sql import SQLStore

        database = SQLStore(path, schema=_SCHEMA, owner="SQLiteTaskStore", synchronous="FULL")
        super().__init__(database, instance)


class PostgresTaskStore(_SQLTaskStore):
    """Tasks in Postgres, shared by every replica given the same `dsn`; `instance` names this
    replica (unique in the fleet, stable across its restarts). Needs the `postgres` extra."""

    def __init__(self, dsn: str, *, instance: str) -> None:
        from toolweave.storage.sql import SQLStore

        super().__init__(SQLStore(dsn=dsn, schema=_SCHEMA, owner="PostgresTaskStore"), instance)


def _column(name: str, value: Any) -> Any:
    return json.dumps(value) if name in _JSON_FIELDS and value is not None else value


def _read(task_id: str) -> Program[TaskRecord | None]:
    rows = yield f"SELECT {', '.join(_COLUMNS)} FROM mcp_tasks WHERE task_id = ?", (task_id,)
    if not rows:
        return None
    values = dict(zip(_COLUMNS, rows[0], strict=True))
    for name in _JSON_FIELDS:
        if values[name] is not None:
            values[name] = json.loads(values[name])
    return TaskRecord(**values)
