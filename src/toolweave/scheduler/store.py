"""Persisted scheduled tasks and their firings, on SQLite or a shared Postgres database.

The firing key is `(task_id, fire_time)`, the primary key of the runs table: claiming a firing
is an INSERT of that key, so however many schedulers look at the same due task (two processes,
a restart, a hot reload) exactly one gets the row and the others see the conflict. On Postgres
the due tasks are also selected `FOR UPDATE SKIP LOCKED`, so a second scheduler skips the rows the
first is claiming instead of waiting for them. Claiming advances the task to its next slot
after *now* in the same transaction: after downtime a task runs once, not once per missed slot.
"""

from __future__ import annotations

import builtins
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from zoneinfo import ZoneInfo

from toolweave.errors import ConfigError
from toolweave.scheduler._cron import parse_spec
from toolweave.storage.sql import Dialect, Program, SQLStore, for_update, skip_locked

if TYPE_CHECKING:
    from toolweave.agent.run_state import RunState

RunStatus = Literal["running", "success", "timeout", "error", "interrupted", "paused"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS toolweave_schedule_tasks (
    id TEXT PRIMARY KEY, spec TEXT NOT NULL, prompt TEXT NOT NULL, target TEXT NOT NULL,
    run_once INTEGER NOT NULL, timeout DOUBLE PRECISION NOT NULL, enabled INTEGER NOT NULL,
    created DOUBLE PRECISION NOT NULL, anchor DOUBLE PRECISION NOT NULL,
    next_fire DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS toolweave_schedule_tasks_due
    ON toolweave_schedule_tasks (enabled, next_fire);
CREATE TABLE IF NOT EXISTS toolweave_schedule_runs (
    task_id TEXT NOT NULL, fire_time DOUBLE PRECISION NOT NULL, status TEXT NOT NULL,
    owner TEXT NOT NULL, started DOUBLE PRECISION NOT NULL, finished DOUBLE PRECISION,
    deadline DOUBLE PRECISION NOT NULL, output TEXT NOT NULL, error TEXT NOT NULL,
    tokens BIGINT NOT NULL, PRIMARY KEY (task_id, fire_time)
);
CREATE TABLE IF NOT EXISTS toolweave_schedule_run_calls (
    task_id TEXT NOT NULL, fire_time DOUBLE PRECISION NOT NULL, seq INTEGER NOT NULL,
    name TEXT NOT NULL, ok INTEGER NOT NULL, duration DOUBLE PRECISION NOT NULL,
    error TEXT NOT NULL, PRIMARY KEY (task_id, fire_time, seq)
);
CREATE TABLE IF NOT EXISTS toolweave_schedule_paused (
    task_id TEXT NOT NULL, fire_time DOUBLE PRECISION NOT NULL, target TEXT NOT NULL,
    timeout DOUBLE PRECISION NOT NULL, run_once INTEGER NOT NULL,
    paused DOUBLE PRECISION NOT NULL, state TEXT NOT NULL, PRIMARY KEY (task_id, fire_time)
)
"""
_PAUSED_COLUMNS = "task_id, fire_time, target, timeout, run_once, paused, state"
_TASK_COLUMNS = "id, spec, prompt, target, run_once, timeout, enabled, created, anchor, next_fire"
_RUN_COLUMNS = "task_id, fire_time, status, owner, started, finished, output, error, tokens"
INTERRUPT_GRACE = 60.0
"""Seconds past a run's timeout after which any scheduler may mark it interrupted."""


@dataclass(frozen=True, slots=True)
class ScheduledTask:
    id: str
    spec: str
    prompt: str
    target: str
    run_once: bool
    timeout: float
    enabled: bool
    created: float
    next_fire: float


@dataclass(frozen=True, slots=True)
class TaskToolCall:
    """One tool call a firing made: its name, whether it succeeded, how long it took, and the
    error text when it failed (what the seed's task log records as the call details)."""

    name: str
    ok: bool
    duration: float
    error: str = ""


@dataclass(frozen=True, slots=True)
class TaskRun:
    """One firing: `status` is running, success, timeout, error or interrupted; `tool_calls`
    the calls it made, in order (background subagents' calls are theirs, not listed)."""

    task_id: str
    fire_time: float
    status: RunStatus
    owner: str
    started: float
    finished: float | None
    output: str
    error: str
    tokens: int
    tool_calls: tuple[TaskToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class PausedRun:
    """A firing waiting for approvals (its run status is "paused"): answer it with
    `Scheduler.answer(task_id, fire_time, approvals)`; `state` is its `RunState` and
    `state.pending` the questions, each with the `call_id` to answer by."""

    task_id: str
    fire_time: float
    target: str
    timeout: float
    run_once: bool
    paused: float
    state: RunState


def _paused(row: tuple[Any, ...], secret: str | None) -> PausedRun:
    from toolweave.agent.run_state import RunState

    state = RunState.from_json(row[6], secret=secret)
    return PausedRun(
        row[0], float(row[1]), row[2], float(row[3]), bool(row[4]), float(row[5]), state
    )


def _task(row: tuple[Any, ...]) -> ScheduledTask:
    return ScheduledTask(
        id=row[0],
        spec=row[1],
        prompt=row[2],
        target=row[3],
        run_once=bool(row[4]),
        timeout=float(row[5]),
        enabled=bool(row[6]),
        created=float(row[7]),
        next_fire=float(row[9]),
    )


def _run(row: tuple[Any, ...]) -> TaskRun:
    return TaskRun(
        task_id=row[0],
        fire_time=float(row[1]),
        status=row[2],
        owner=row[3],
        started=float(row[4]),
        finished=None if row[5] is None else float(row[5]),
        output=row[6],
        error=row[7],
        tokens=int(row[8]),
    )


class ScheduleStore:
    """The tasks and runs tables; each method is one transaction (`*_sync` twins for sync use)."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        dsn: str | None = None,
        timezone: str = "UTC",
        state_secret: str | None = None,
    ) -> None:
        self.store = SQLStore(path, dsn=dsn, schema=_SCHEMA, owner="Scheduler")
        self.state_secret = state_secret  # seals paused runs' states (`RunState.to_json`)
        try:
            self.tz = ZoneInfo(timezone)
        except (KeyError, ValueError):
            raise ConfigError(
                f"Scheduler(timezone={timezone!r}) is not an IANA time zone such as 'UTC' or "
                "'Asia/Shanghai'"
            ) from None

    # -- task programs ------------------------------------------------------------------------

    def create(
        self, spec: str, prompt: str, target: str, run_once: bool, timeout: float, now: float
    ) -> Program[ScheduledTask]:
        parsed = parse_spec(spec)
        task = ScheduledTask(
            id=uuid.uuid4().hex[:12],
            spec=parsed.text,
            prompt=prompt,
            target=target,
            run_once=run_once,
            timeout=timeout,
            enabled=True,
            created=now,
            next_fire=parsed.next_after(now, now, self.tz),
        )
        yield (
            f"INSERT INTO toolweave_schedule_tasks ({_TASK_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?, ?)",
            (task.id, task.spec, prompt, target, int(run_once), timeout, now, now, task.next_fire),
        )
        return task

    def get(self, dialect: Dialect, task_id: str) -> Program[ScheduledTask | None]:
        rows = yield (
            f"SELECT {_TASK_COLUMNS} FROM toolweave_schedule_tasks "
            f"WHERE id = ?{for_update(dialect)}",
            (task_id,),
        )
        return _task(rows[0]) if rows else None

    def list_tasks(self, target: str | None) -> Program[builtins.list[ScheduledTask]]:
        if target is None:
            rows = yield (f"SELECT {_TASK_COLUMNS} FROM toolweave_schedule_tasks", ())
        else:
            rows = yield (
                f"SELECT {_TASK_COLUMNS} FROM toolweave_schedule_tasks WHERE target = ?",
                (target,),
            )
        return sorted((_task(r) for r in rows), key=lambda t: (t.next_fire, t.id))

    def update(
        self, dialect: Dialect, task_id: str, changes: dict[str, Any], now: float
    ) -> Program[ScheduledTask | None]:
        current = yield from self.get(dialect, task_id)
        if current is None:
            return None
        updated = replace(current, **changes)
        next_fire = current.next_fire
        if "spec" in changes or ("enabled" in changes and updated.enabled):
            parsed = parse_spec(updated.spec)
            updated = replace(updated, spec=parsed.text)
            next_fire = parsed.next_after(
                now, now if "spec" in changes else current.created, self.tz
            )
        updated = replace(updated, next_fire=next_fire)
        yield (
            "UPDATE toolweave_schedule_tasks SET spec = ?, prompt = ?, target = ?, run_once = ?, "
            "timeout = ?, enabled = ?, anchor = CASE WHEN spec = ? THEN anchor ELSE ? END, "
            "next_fire = ? WHERE id = ?",
            (
                updated.spec,
                updated.prompt,
                updated.target,
                int(updated.run_once),
                updated.timeout,
                int(updated.enabled),
                updated.spec,
                now,
                next_fire,
                task_id,
            ),
        )
        return updated

    def delete(self, task_id: str) -> Program[bool]:
        rows = yield ("DELETE FROM toolweave_schedule_tasks WHERE id = ? RETURNING id", (task_id,))
        return bool(rows)

    def log(self, task_id: str, limit: int) -> Program[builtins.list[TaskRun]]:
        rows = yield (
            f"SELECT {_RUN_COLUMNS} FROM toolweave_schedule_runs WHERE task_id = ? "
            "ORDER BY fire_time DESC LIMIT ?",
            (task_id, limit),
        )
        runs = [_run(r) for r in rows]
        if not runs:
            return runs
        calls = yield (
            "SELECT fire_time, name, ok, duration, error FROM toolweave_schedule_run_calls "
            "WHERE task_id = ? AND fire_time >= ? ORDER BY fire_time, seq",
            (task_id, min(r.fire_time for r in runs)),
        )
        by_firing: dict[float, list[TaskToolCall]] = {}
        for fire_time, name, ok, duration, error in calls:
            by_firing.setdefault(float(fire_time), []).append(
                TaskToolCall(name, bool(ok), float(duration), error)
            )
        return [replace(r, tool_calls=tuple(by_firing.get(r.fire_time, ()))) for r in runs]

    # -- firing programs ----------------------------------------------------------------------

    def claim(
        self, dialect: Dialect, owner: str, now: float, limit: int
    ) -> Program[builtins.list[tuple[ScheduledTask, float]]]:
        """Claim every due firing not claimed yet and move each task to its next slot."""
        rows = yield (
            f"SELECT {_TASK_COLUMNS} FROM toolweave_schedule_tasks WHERE enabled = 1 AND "
            f"next_fire <= ? ORDER BY next_fire LIMIT ?{skip_locked(dialect)}",
            (now, limit),
        )
        claimed: builtins.list[tuple[ScheduledTask, float]] = []
        for row in rows:
            task, anchor = _task(row), float(row[8])
            fire_time = task.next_fire
            inserted = yield (
                f"INSERT INTO toolweave_schedule_runs ({_RUN_COLUMNS}, deadline) "
                "VALUES (?, ?, 'running', ?, ?, NULL, '', '', 0, ?) "
                "ON CONFLICT (task_id, fire_time) DO NOTHING RETURNING task_id",
                (task.id, fire_time, owner, now, now + task.timeout + INTERRUPT_GRACE),
            )
            if task.run_once:
                yield ("UPDATE toolweave_schedule_tasks SET enabled = 0 WHERE id = ?", (task.id,))
            else:
                following = parse_spec(task.spec).next_after(max(now, fire_time), anchor, self.tz)
                yield (
                    "UPDATE toolweave_schedule_tasks SET next_fire = ? WHERE id = ?",
                    (following, task.id),
                )
            if inserted:
                claimed.append((task, fire_time))
        return claimed

    def finish(
        self,
        task_id: str,
        fire_time: float,
        status: RunStatus,
        output: str,
        error: str,
        tokens: int,
        delete_task: bool,
        calls: Sequence[TaskToolCall] = (),
    ) -> Program[None]:
        yield (
            "UPDATE toolweave_schedule_runs SET status = ?, finished = ?, output = ?, error = ?, "
            "tokens = ? WHERE task_id = ? AND fire_time = ?",
            (status, time.time(), output, error, tokens, task_id, fire_time),
        )
        for seq, call in enumerate(calls):
            yield (
                "INSERT INTO toolweave_schedule_run_calls (task_id, fire_time, seq, name, ok, "
                "duration, error) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (task_id, fire_time, seq, call.name, int(call.ok), call.duration, call.error),
            )
        if delete_task:
            yield ("DELETE FROM toolweave_schedule_tasks WHERE id = ?", (task_id,))

    def pause(self, task: ScheduledTask, fire_time: float, state: RunState) -> Program[None]:
        """Keep a paused firing's state, sealed, until it is answered."""
        text = state.to_json(secret=self.state_secret)
        yield (
            f"INSERT INTO toolweave_schedule_paused ({_PAUSED_COLUMNS}) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (task.id, fire_time, task.target, task.timeout, int(task.run_once), time.time(), text),
        )

    def paused(self, target: str | None) -> Program[builtins.list[PausedRun]]:
        where, params = ("WHERE target = ? ", (target,)) if target is not None else ("", ())
        rows = yield (
            f"SELECT {_PAUSED_COLUMNS} FROM toolweave_schedule_paused {where}ORDER BY paused",
            params,
        )
        return [_paused(r, self.state_secret) for r in rows]

    def take_paused(self, task_id: str, fire_time: float) -> Program[PausedRun | None]:
        """Remove a paused firing and return it: of two answers at once, one gets it."""
        rows = yield (
            "DELETE FROM toolweave_schedule_paused WHERE task_id = ? AND fire_time = ? "
            f"RETURNING {_PAUSED_COLUMNS}",
            (task_id, fire_time),
        )
        return _paused(rows[0], self.state_secret) if rows else None

    def mark_interrupted(self, owner: str, now: float) -> Program[int]:
        """Runs this scheduler left `running` (it restarted), and runs of anyone long past their
        deadline, become `interrupted`; run-once tasks whose firing was lost are removed."""
        rows = yield (
            "UPDATE toolweave_schedule_runs SET status = 'interrupted', finished = ? "
            "WHERE status = 'running' AND (owner = ? OR deadline < ?) RETURNING task_id",
            (now, owner, now),
        )
        yield (
            "DELETE FROM toolweave_schedule_tasks WHERE run_once = 1 AND enabled = 0 AND id IN "
            "(SELECT task_id FROM toolweave_schedule_runs WHERE status = 'interrupted')",
            (),
        )
        return len(rows)

    def next_due(self) -> Program[float | None]:
        rows = yield (
            "SELECT MIN(next_fire) FROM toolweave_schedule_tasks WHERE enabled = 1",
            (),
        )
        return None if not rows or rows[0][0] is None else float(rows[0][0])
