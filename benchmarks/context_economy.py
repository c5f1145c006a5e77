"""Context economy over a long scripted session: bytes per request, and what the model can still
reach of what its tools returned.

The session reads real documents (this project's docs and the Python standard library's largest
modules, 20 files of 20-200 kB), one per turn, each far over the result budget; after each read
the model looks for a phrase from the middle of that document. Four configurations, the same
script, each request serialised by the real Anthropic adapter (`build_body`):

- `cut` (`context=False`): the middle of every result is lost; the model cannot find the phrase;
- `saved` (the default): results saved whole, the model finds the phrase with `read_result`;
- `saved+stubs`: the same under a history budget (`Session(max_history_tokens=...)`: old
  results stubbed, their handles kept);
- `saved+summary`: the same budget with `ContextEconomy(summarize=True)`; the summariser here is
  scripted (it returns the first `summary_max_tokens` worth of the transcript it is sent), so the
  bytes are a real summary's upper bound and its cost is the input it was sent.

Prints, per configuration: bytes of the largest and the last request, total bytes sent over the
session, and how many of the middle phrases the model found. One command:
`python benchmarks/context_economy.py`.
"""

from __future__ import annotations

import asyncio
import json
import re
import sysconfig
from pathlib import Path
from typing import Any

from toolweave.agent import Agent, ContextEconomy, Session
from toolweave.llm import Message, ModelRequest, ModelResponse, ScriptedModel, ToolCallPart, Usage
from toolweave.llm.anthropic import AnthropicModel
from toolweave.tools import tool

ROOT = Path(__file__).resolve().parents[1]
BUDGET = 8000  # the agent's default max_tool_result_chars
HISTORY_TOKENS = 30_000
_HANDLE = re.compile(r'saved whole as "(r-[0-9a-f]{12})"')


def documents() -> list[Path]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    modules = sorted(stdlib.glob("*.py"), key=lambda p: p.stat().st_size, reverse=True)[:12]
    docs = sorted(ROOT.glob("docs/*.md"), key=lambda p: p.stat().st_size, reverse=True)[:8]
    return [p for p in (*docs, *modules) if p.stat().st_size > 4 * BUDGET]


def middle_phrase(text: str) -> str:
    """A literal piece of the first full line past the middle of `text` (what the model will
    look for)."""
    for line in text[len(text) // 2 :].splitlines()[1:]:
        if len(line.strip()) >= 20:
            return line.strip()[:30]
    raise ValueError("no line of 20 characters past the middle")


def reader(paths: list[Path], found: list[bool]) -> ScriptedModel:
    """The scripted model: read each document; when its result is cut and saved, look for the
    middle phrase with `read_result`; when not saved, check whether the phrase is in context."""
    queue = list(paths)
    phrase = ""

    def step(request: ModelRequest) -> Message:
        nonlocal phrase
        last = request.messages[-1]
        result = last.tool_results[0] if last.role == "tool" else None
        if result is not None and result.name == "read_doc":
            handle = _HANDLE.search(result.text)
            if handle is not None:
                args = {"handle": handle.group(1), "pattern": phrase}
                return Message.assistant("", [ToolCallPart("find", "read_result", args)])
            found.append(phrase in result.text)
        elif result is not None:
            found.append("occurs" in result.text)
        if not queue:
            return Message.assistant("all documents read")
        path = queue.pop(0)
        phrase = middle_phrase(path.read_text("utf-8"))
        return Message.assistant("", [ToolCallPart(path.name, "read_doc", {"path": str(path)})])

    return ScriptedModel([step] * (2 * len(paths) + 1))


def summariser(max_tokens: int) -> ScriptedModel:
    def summarise(request: ModelRequest) -> ModelResponse:
        sent = request.messages[-1].text
        return ModelResponse(
            Message.assistant(sent[: max_tokens * 4]), usage=Usage(len(sent) // 4, max_tokens)
        )

    return ScriptedModel([summarise] * 1000)


async def run(name: str, paths: list[Path], context: Any, session: Session) -> dict[str, Any]:
    @tool(read_only=True)
    def read_doc(path: str) -> str:
        """Read a document."""
        return Path(path).read_text("utf-8")

    found: list[bool] = []
    model = reader(paths, found)
    agent = Agent(model, [read_doc], max_turns=10_000, context=context)
    result = await agent.run("Read each document and find its middle.", session)
    anthropic = AnthropicModel("claude-sonnet-4-5", api_key="k")
    sizes = [
        len(json.dumps(anthropic.build_body(r, stream=False), ensure_ascii=False))
        for r in model.requests
    ]
    return {
        "name": name,
        "requests": len(sizes),
        "max": max(sizes),
        "last": sizes[-1],
        "total": sum(sizes),
        "found": sum(found),
        "of": len(paths),
        "tokens": result.usage.input_tokens,
    }


async def main() -> None:
    paths = documents()
    kb = sum(p.stat().st_size for p in paths) // 1000
    print(f"{len(paths)} real documents, {kb} kB in all; result budget {BUDGET} characters")
    rows = [
        await run("cut", paths, False, Session()),
        await run("saved", paths, None, Session()),
        await run("saved+stubs", paths, None, Session(max_history_tokens=HISTORY_TOKENS)),
        await run(
            "saved+summary",
            paths,
            ContextEconomy(summarize=True, summary_model=summariser(1024)),
            Session(max_history_tokens=HISTORY_TOKENS),
        ),
    ]
    columns = ("requests", "largest", "last", "total sent")
    print(
        f"{'configuration':<15}" + "".join(f"{c:>12}" for c in columns) + "  found  summary tokens"
    )
    for row in rows:
        print(
            f"{row['name']:<15}{row['requests']:>12}{row['max']:>12,}{row['last']:>12,}"
            f"{row['total']:>12,}  {row['found']:>2}/{row['of']}  {row['tokens']:>14,}"
        )


if __name__ == "__main__":
    asyncio.run(main())
