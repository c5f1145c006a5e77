"""Knowledge-base Q&A: a manual goes into a knowledge base, the agent searches it with
`kb_search` and answers with the passage's citation (title > heading path).

.venv/bin/python examples/kb_qa_agent.py                      # offline
TOOLWEAVE_MODEL=openai:gpt-4o .venv/bin/python examples/kb_qa_agent.py
"""

from __future__ import annotations

import asyncio
import json
import os
import re

from toolweave import Agent
from toolweave.kb import KnowledgeBase, knowledge_base_tools
from toolweave.llm import Message, Model, ModelRequest, ScriptedModel, ToolCallPart

MANUAL = """# toolweave 服务手册

## 端口

`toolweave serve --http` 默认监听 127.0.0.1 的 8765 端口，MCP 端点是 /mcp。

## Logs

Logs go to ~/.toolweave/logs and rotate daily.
"""
QUESTION = "toolweave serve 默认用哪个端口？"


def qa_model() -> Model | str:
    configured = os.environ.get("TOOLWEAVE_MODEL")
    if configured:
        return configured

    def answer(request: ModelRequest) -> Message:
        text = [p.text for m in request.messages if m.role == "tool" for p in m.tool_results][-1]
        found = re.search(r"\{.*\}|\[.*\]", text, re.DOTALL)
        if found is None:
            raise ValueError(f"no passages in the tool result: {text[:200]}")
        hits = json.loads(found.group(0))
        best = (hits["results"] if isinstance(hits, dict) else hits)[0]
        port = re.findall(r"\d{4,5}", best["text"])[0]
        where = f"{best['title']} > {best['heading_path']}"
        return Message.assistant(f"默认端口是 {port}。来源：{where}")

    search = ToolCallPart("k1", "kb_search", {"query": "默认端口", "k": 2})
    return ScriptedModel([Message.assistant(tool_calls=[search]), answer])


async def main() -> None:
    async with KnowledgeBase(":memory:") as kb:
        await kb.add_text(MANUAL, title="服务手册")
        tools = knowledge_base_tools(kb)
        agent = Agent(qa_model(), tools, instructions="Answer from the knowledge base; cite it.")
        result = await agent.run(QUESTION)
    print(result.output)


if __name__ == "__main__":
    asyncio.run(main())
