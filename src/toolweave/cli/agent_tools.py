"""The tools `toolweave run` and `toolweave chat` give their agent, and what must be closed after.

Three sources, combined: the built-in demo set (`--tools demo`), a `toolweave.toml` (`--config`:
exactly the tools `toolweave serve` would publish, its providers and `[mcpServers]` gateway behind
the same `[serve.policy]`), and MCP servers from an `mcp.json` (`--mcp`, Claude Desktop's
`mcpServers` or VS Code's `servers` format; a VS Code `${input:id}` is asked for at the terminal,
a password input hidden). MCP tools load lazily by default: the agent gets
`mcp_discover` and `mcp_load` and pulls in only the tools it needs, which keeps the prompt small;
`--eager` offers every tool from the start.

Runs, tool calls and approval decisions go to a query log: `--config`'s (with `[serve].query_log`
on), else, for plain `toolweave chat`, `chat_log` (default `~/.toolweave/query_log.db`, the file
a plain `toolweave log` reads), so the terminal's decisions are kept either way.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolweave.tools.base import Tool

if TYPE_CHECKING:
    from toolweave.accounting.query_log import QueryLog
    from toolweave.governance.approvals import ApprovalAudit
    from toolweave.governance.pipeline import Governance
    from toolweave.mcp.client.config_values import InputSpec
    from toolweave.mcp.client.manager import MCPManager
    from toolweave.skills import SkillLibrary

logger = logging.getLogger("toolweave.cli")

TOOL_SETS = ("demo", "none")
DATA_DIR = "~/.toolweave"
"""The user's data dir: chat sessions and plain chat's query log (`toolweave serve`'s default)."""


@dataclass(slots=True)
class AgentTools:
    """What the command line hands to `Agent`."""

    tools: list[Tool] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """One line per MCP server that could not be reached (shown to the user, not raised)."""
    governance: Governance | None = None
    """`--config`'s `[serve.rules]` and hooks: the agent applies them, with its own approver
    (the person at the terminal), to every call."""
    audit: ApprovalAudit | None = None
    """`--config`'s query log (with `[serve].query_log` on): the terminal's approval decisions
    are kept there beside the served ones (`toolweave log --approvals`); plain chat's own log."""
    query_log: QueryLog | None = None
    """Where the agent's runs and tool calls are logged (`RunLimits(query_log=...)`)."""
    skills: SkillLibrary | None = None
    """The skills `--mcp`'s servers serve by the MCP skills extension (None: they serve none)."""


@asynccontextmanager
async def open_agent_tools(
    tools: str | None,
    mcp: Path | None,
    config: Path | None,
    *,
    eager: bool,
    chat_log: Path | None = None,
) -> AsyncIterator[AgentTools]:
    """Assemble the tools; every provider and MCP connection is closed on exit. Without
    `config`, `chat_log` (a SQLite file) keeps the runs, tool calls and approval decisions.

    Raises `ConfigError` (with the file and the key) for a bad `--config` or `--mcp`.
    """
    from toolweave.errors import ConfigError

    chosen = tools if tools is not None else ("none" if config is not None else "demo")
    if chosen not in TOOL_SETS:
        raise ConfigError(f"--tools must be 'demo' or 'none', got {chosen!r}")
    result = AgentTools()
    if chosen == "demo":
        from toolweave.tools.demo import DEMO_TOOLS

        result.tools.extend(DEMO_TOOLS)
    async with AsyncExitStack() as stack:
        if config is not None:
            await _host_tools(config, result, stack)
        elif chat_log is not None:
            from toolweave.accounting.query_log import QueryLog

            result.query_log = result.audit = QueryLog(chat_log)
            stack.push_async_callback(result.query_log.close)
        if mcp is not None:
            await _mcp_tools(mcp, result, stack, eager=eager)
        yield result


def chat_log_file(chosen: Path | None) -> Path:
    """Plain chat's query log: `chosen`, else `query_log.db` in the user's data dir (made)."""
    from toolweave.accounting.calls import QUERY_LOG_FILE

    if chosen is not None:
        return chosen.expanduser()
    file = Path(DATA_DIR).expanduser() / QUERY_LOG_FILE
    file.parent.mkdir(parents=True, exist_ok=True)
    return file


async def _host_tools(config: Path, result: AgentTools, stack: AsyncExitStack) -> None:
    """Exactly the tools `toolweave serve --config` would publish: its providers and its
    `[mcpServers]` gateway, as far as the host's `[serve.policy]` lets them be listed.

    The tools come without the host's own gate, whose only approver is an MCP client's
    elicitation: the agent's governance applies the same `[serve.rules]` and hooks and asks
    the person running the agent, so a `y` at its prompt lets the call run."""
    from toolweave.host import ToolHost, load_host_config
    from toolweave.host.governed import unwrapped

    host = ToolHost(load_host_config(config))
    stack.push_async_callback(host.close)
    await host.server.load_tool_sources()
    result.governance = host.governance.governance
    result.audit = host.accounting if host.config.query_log else None
    result.query_log = host.accounting.query_log()
    for name in host.server.tool_names():
        entry = host.server.tool_entry(name)
        if entry is not None:
            published = entry.tool()
            result.tools.append(unwrapped(published))


async def _mcp_tools(mcp: Path, result: AgentTools, stack: AsyncExitStack, *, eager: bool) -> None:
    from toolweave.mcp.client.manager import MCPManager
    from toolweave.mcp.toolset.lazy import lazy_tools

    manager = MCPManager.from_config(mcp, ask=ask_input)
    stack.push_async_callback(manager.close)
    for name, error in (await manager.start(quiet=True)).items():
        result.notes.append(f"MCP server {name!r} is unavailable: {error}")
    result.tools.extend(manager.tools() if eager else lazy_tools(manager))
    result.skills = await remote_skills(manager)


async def remote_skills(manager: MCPManager) -> SkillLibrary | None:
    """A library of the skills `manager`'s servers serve (listed only; read when asked), or
    None when they serve none."""
    from toolweave.skills import SkillLibrary

    library = SkillLibrary(roots=[])
    library.add_remote(manager)
    await library.refresh_remote()
    return library if library.remote else None


def ask_input(spec: InputSpec) -> str:
    """Ask the person at the terminal for a VS Code `${input:id}` (a password input hidden)."""
    from rich.markup import escape
    from rich.prompt import Prompt

    label = escape(spec.description or spec.id)  # the config's text, never Rich markup
    extra: dict[str, Any] = {} if spec.default is None else {"default": spec.default}
    if spec.options:
        extra["choices"] = list(spec.options)
    return str(Prompt.ask(label, password=spec.password, **extra))
