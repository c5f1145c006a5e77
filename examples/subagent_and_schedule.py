"""Orchestration: a subagent run and a scheduled task.

1. The main agent hands a self-contained task to a disposable subagent (`subagent_run`, on a
   cheaper model in production); only the subagent's final answer comes back, after one line
   of metadata.
2. A scheduler fires a cron task (weekdays 09:30 UTC) as a fresh run of the same agent and
   delivers only the answer. The example drives it with a fake clock and `tick()`, so it runs
   in an instant; in production `await scheduler.start()` wakes it on its own.

.venv/bin/python examples/subagent_and_schedule.py                      # offline
TOOLWEAVE_MODEL=openai:gpt-4o .venv/bin/python examples/subagent_and_schedule.py
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from toolweave import Agent
from toolweave.agent.orchestration import Children
from toolweave.llm import Message, Model, ScriptedModel, ToolCallPart
from toolweave.scheduler import Scheduler
from toolweave.tools.demo import get_weather

TASK = "查询北京天气并用一句话总结。"


def _model(script: list[Any]) -> Model | str:
    """`TOOLWEAVE_MODEL` when set, else the offline script."""
    return os.environ.get("TOOLWEAVE_MODEL") or ScriptedModel(script)


async def main() -> None:
    delegate = ToolCallPart("s1", "subagent_run", {"task": TASK})
    main_model = _model([Message.assistant(tool_calls=[delegate]), Message.assistant("已汇总。")])
    weather = ToolCallPart("w1", "get_weather", {"city": "北京"})
    sub_model = _model(
        [Message.assistant(tool_calls=[weather]), Message.assistant("北京晴，12°C。")]
    )
    agent = Agent(
        main_model,
        [get_weather],
        orchestration=Children(subagents=True, subagent_model=sub_model),
    )
    result = await agent.run("请让助手去查北京天气。")
    (report,) = [i.result.text for i in result.invocations if i.name == "subagent_run"]
    print("subagent:", " ".join(report.split()))
    print("main:", result.output)

    now = [datetime(2026, 12, 1, 9, 29, tzinfo=UTC).timestamp()]  # a Tuesday, 09:29 UTC
    delivered: list[tuple[str, str]] = []

    async def deliver(target: str, text: str) -> None:
        delivered.append((target, text))

    daily = Agent(_model([Message.assistant("今日没有未处理的事故。")]))
    path = Path(tempfile.mkdtemp()) / "schedules.db"
    scheduler = Scheduler(daily, path, deliver=deliver, clock=lambda: now[0])
    task_id = scheduler.create("30 9 * * 1-5", "总结今天未处理的事故", "chat-42")
    await scheduler.tick()  # 09:29: nothing is due
    now[0] += 60
    await scheduler.tick()  # 09:30: the task fires once
    print("delivered:", delivered)
    print("runs:", [run.status for run in scheduler.log(task_id)])
    await scheduler.close()


if __name__ == "__main__":
    asyncio.run(main())
