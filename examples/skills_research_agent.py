"""A skills agent: the `web-research` skill (examples/skills) guides a search, then the answer
comes back as a structured report (the seed's web research + structured writing).

The model reads the skill, whose `allowed-tools` are then pre-approved for the run, checks the
skill's source policy with `skill_data`, searches with `tavily_search` (offline demo results
here; point it at a real search API in production) and writes a `ResearchReport`.

.venv/bin/python examples/skills_research_agent.py                      # offline
TOOLWEAVE_MODEL=openai:gpt-4o .venv/bin/python examples/skills_research_agent.py
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from pydantic import BaseModel, Field

from toolweave import Agent, tool
from toolweave.llm import Message, Model, ModelRequest, ScriptedModel, ToolCallPart
from toolweave.skills import SkillLibrary

SKILLS = Path(__file__).with_name("skills")
SKILL = "web-research"
QUESTION = "LangGraph 现在主要适合做什么？请给出来源。"
DEMO_RESULTS = [
    {
        "title": "LangGraph documentation",
        "url": "https://langchain-ai.github.io/langgraph/",
        "source_type": "official_docs",
        "snippet": "LangGraph builds stateful, multi-actor applications with LLMs.",
    },
    {
        "title": "langgraph releases",
        "url": "https://github.com/langchain-ai/langgraph/releases",
        "source_type": "github",
        "snippet": "Checkpointing, human-in-the-loop interrupts and streaming of graph state.",
    },
]


class Finding(BaseModel):
    claim: str
    source: str = Field(description="URL the claim comes from")


class ResearchReport(BaseModel):
    """What the research produced: findings with their sources, and what stays uncertain."""

    question: str
    findings: list[Finding]
    uncertainty: str


@tool(read_only=True, open_world=True)
def tavily_search(query: str, max_results: int = 5) -> list[dict[str, str]]:
    """Search the web (offline demo results) and return title, url, source type and snippet."""
    return DEMO_RESULTS[:max_results]


def _last_results(request: ModelRequest) -> list[dict[str, str]]:
    """The search results in the last tool message (inside its data boundary)."""
    text = [p.text for m in request.messages if m.role == "tool" for p in m.tool_results][-1]
    found = re.search(r"\[.*\]", text, re.DOTALL)
    if found is None:
        raise ValueError(f"no search results in: {text[:200]}")
    results: list[dict[str, str]] = json.loads(found.group(0))
    return results


def research_model() -> Model | str:
    """`TOOLWEAVE_MODEL`, or an offline script that follows the skill's workflow."""
    configured = os.environ.get("TOOLWEAVE_MODEL")
    if configured:
        return configured

    def report(request: ModelRequest) -> Message:
        findings = [{"claim": r["snippet"], "source": r["url"]} for r in _last_results(request)]
        arguments = {
            "question": QUESTION,
            "findings": findings,
            "uncertainty": "演示数据：没有核对发布日期，需以官方文档的最新版本为准。",
        }
        return Message.assistant(tool_calls=[ToolCallPart("4", "final_output", arguments)])

    policy = {"name": SKILL, "path": "data/source_policy.json", "query": "official"}
    return ScriptedModel(
        [
            Message.assistant(
                tool_calls=[ToolCallPart("1", "skill_read", {"name": "web-research"})]
            ),
            Message.assistant(tool_calls=[ToolCallPart("2", "skill_data", policy)]),
            Message.assistant(
                tool_calls=[ToolCallPart("3", "tavily_search", {"query": "LangGraph use cases"})]
            ),
            report,
        ]
    )


def main() -> None:
    agent = Agent(
        research_model(),
        [tavily_search],
        skills=SkillLibrary([SKILLS]),
        output_type=ResearchReport,
        instructions="Follow the matching skill. Cite a source for every claim.",
    )
    result = agent.run_sync(QUESTION)
    print("tools:", [i.name for i in result.invocations])
    report = result.output
    for finding in report.findings:
        print(f"- {finding.claim} ({finding.source})")
    print("uncertainty:", report.uncertainty)


if __name__ == "__main__":
    main()
