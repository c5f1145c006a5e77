"""The scheduler: agent runs at a cron time or `@every` interval, durable across restarts.

`Scheduler` claims due tasks from its `ScheduleStore` (SQLite or Postgres) and runs each as an
agent run; `clock_tools` lets a model manage its own schedule, and `BackgroundSubagents` runs
subagents past the turn that started them. It sits above `toolweave.agent`, which knows nothing
of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Scheduler": "toolweave.scheduler.scheduler",
    "ScheduleStore": "toolweave.scheduler.store",
    "PausedRun": "toolweave.scheduler.store",
    "ScheduledTask": "toolweave.scheduler.store",
    "TaskRun": "toolweave.scheduler.store",
    "TaskToolCall": "toolweave.scheduler.store",
    "clock_tools": "toolweave.scheduler.clock_tools",
    "BackgroundSubagents": "toolweave.scheduler.background",
    "background_tools": "toolweave.scheduler.background",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from toolweave.scheduler.background import BackgroundSubagents, background_tools
    from toolweave.scheduler.clock_tools import clock_tools
    from toolweave.scheduler.scheduler import Scheduler
    from toolweave.scheduler.store import (
        PausedRun,
        ScheduledTask,
        ScheduleStore,
        TaskRun,
        TaskToolCall,
    )

__all__ = [
    "BackgroundSubagents",
    "PausedRun",
    "ScheduleStore",
    "ScheduledTask",
    "Scheduler",
    "TaskRun",
    "TaskToolCall",
    "background_tools",
    "clock_tools",
]
