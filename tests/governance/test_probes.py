"""Governance acts on the permission patterns a tool reports (the forge probe, seed 002): a
probed pattern a rule allows runs without asking, one a rule denies is refused, the
explanation names the pattern, and a call whose patterns no rule names is asked about as
before. Against a real server of the toolkit over Streamable HTTP, through an agent."""

from __future__ import annotations

from tests.mcp.server.inprocess import serve_in_process
from toolweave.agent import Agent
from toolweave.governance import Governance, Rules
from toolweave.llm import Message, ScriptedModel, ToolCallPart
from toolweave.mcp import MCPClient, MCPServer
from toolweave.mcp.toolset.bridge import as_tools


def writer(writes: list[str]) -> MCPServer:
    server = MCPServer("writer")

    @server.tool(permission_patterns=lambda args: [f"write:{args['path']}"])
    def write_file(path: str, content: str) -> str:
        """Write a file."""
        writes.append(path)
        return f"wrote {path}"

    return server


async def test_probed_patterns_decide_before_anyone_is_asked() -> None:
    writes: list[str] = []
    probes = 0
    async with (
        serve_in_process(writer(writes)) as url,
        MCPClient.http(url, name="writer") as client,
    ):
        (tool,) = await as_tools(client)
        original = tool.permission_patterns

        async def counted(args: dict[str, object]) -> object:
            nonlocal probes
            probes += 1
            return await original(args)  # type: ignore[arg-type]

        tool.permission_patterns = counted  # type: ignore[method-assign]
        rules = Rules(
            allow=["mcp__writer__write_file(write:docs/*)"],
            deny=["mcp__writer__write_file(write:/etc/*)"],
        )
        calls = [
            ToolCallPart("c1", tool.name, {"path": "docs/说明.md", "content": "x"}),
            ToolCallPart("c2", tool.name, {"path": "/etc/passwd", "content": "x"}),
            ToolCallPart("c3", tool.name, {"path": "notes.txt", "content": "x"}),
        ]
        model = ScriptedModel([Message.assistant(tool_calls=calls), Message.assistant("done")])
        agent = Agent(model, [tool], governance=Governance(rules=rules))
        result = await agent.run("write them")
    outcomes = {r.call_id: r.text for m in result.messages for r in m.tool_results}
    assert writes == ["docs/说明.md"]  # allowed by its probed pattern, nobody asked
    denied = outcomes["c2"]
    assert "'write:/etc/passwd'" in denied and "mcp__writer__write_file(write:/etc/*)" in denied
    asked = outcomes["c3"]  # no rule names 'write:notes.txt': the usual question
    assert "no approver is configured" in asked
    assert probes == 3


async def test_without_rules_for_patterns_the_server_is_not_probed() -> None:
    writes: list[str] = []
    async with (
        serve_in_process(writer(writes)) as url,
        MCPClient.http(url, name="writer") as client,
    ):
        (tool,) = await as_tools(client)

        async def never(args: dict[str, object]) -> object:
            raise AssertionError("probed without a rule that could use the answer")

        tool.permission_patterns = never  # type: ignore[method-assign]
        model = ScriptedModel(
            [
                Message.assistant(
                    tool_calls=[ToolCallPart("c1", tool.name, {"path": "a", "content": ""})]
                ),
                Message.assistant("done"),
            ]
        )
        agent = Agent(model, [tool], governance=Governance(rules=Rules(allow=["Bash(ls:*)"])))
        result = await agent.run("write")
    (answer,) = [r.text for m in result.messages for r in m.tool_results]
    assert writes == [] and "no approver is configured" in answer
