"""Orchestration: a team run.

The lead agent (`Agent(..., orchestration=Children(teams=True))`) calls `team_run` with
two ad-hoc members, a 研究员 (researcher) and a writer, each with its role prompt. Both
members run at once as subagents on the same task and see none of the lead's history; their
answers come back under their names, in the order given, and the lead writes the final answer
from them.

Offline, each member's answer is picked by its role (a `FunctionModel`), since members run in
parallel and the order of their model calls is not fixed.

.venv/bin/python examples/team_run.py                      # offline
TOOLWEAVE_MODEL=openai:gpt-4o .venv/bin/python examples/team_run.py
"""

from __future__ import annotations

import asyncio
import os

from toolweave import Agent
from toolweave.agent.orchestration import Children
from toolweave.llm import FunctionModel, Message, Model, ModelRequest, ScriptedModel, ToolCallPart

TASK = "为新上线的天气查询功能写一段两句话的发布说明。"
MEMBERS = [
    {"name": "研究员", "role": "调研要点：列出这个功能对用户最重要的两点。"},
    {"name": "writer", "role": "Write the release note in plain Chinese, two sentences."},
]
ANSWERS = {
    "研究员": "要点：支持全国城市；结果含温度与穿衣建议。",
    "writer": "天气查询现已上线，支持全国城市。查询结果附带温度和穿衣建议。",
}


def _member(request: ModelRequest) -> Message:
    """The offline member: answers as whichever member its role prompt names."""
    system = " ".join(m.text for m in request.messages if m.role == "system")
    (name,) = [n for n in ANSWERS if f"as {n}:" in system]
    return Message.assistant(ANSWERS[name])


def _members_of(report: str) -> list[tuple[str, str, str]]:
    """(name, status, answer) per `## name` section of the `team_run` result.

    Each section is the member's name, one metadata line (`[subagent NAME: STATUS, 0.0s, ...]`)
    and its answer; the timing and token counts are left out so the output is stable.
    """
    sections: list[tuple[str, str, str]] = []
    for chunk in report.split("\n## ")[1:]:
        name, meta, *answer = chunk.split("\n")
        status = meta.removeprefix(f"[subagent {name}: ").split(",")[0]
        sections.append((name, status, " ".join(" ".join(answer).split())))
    return sections


async def main() -> None:
    configured = os.environ.get("TOOLWEAVE_MODEL")
    call = ToolCallPart("t1", "team_run", {"task": TASK, "members": MEMBERS})
    lead: Model | str = configured or ScriptedModel(
        [
            Message.assistant(tool_calls=[call]),
            Message.assistant("发布说明：天气查询现已上线，支持全国城市，并附带穿衣建议。"),
        ]
    )
    member: Model | str = configured or FunctionModel(_member)
    agent = Agent(lead, orchestration=Children(teams=True, subagent_model=member))
    result = await agent.run("请组一个小团队，为天气查询功能写发布说明。")
    (report,) = [i.result.text for i in result.invocations if i.name == "team_run"]
    print(report.splitlines()[0])
    for name, status, answer in _members_of(report):
        print(f"member {name} ({status}): {answer}")
    print("final:", result.output)


if __name__ == "__main__":
    asyncio.run(main())
