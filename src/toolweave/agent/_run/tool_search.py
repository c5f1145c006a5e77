"""Tool-search mode inside the agent loop: which definitions each model request carries.

`Agent(tool_search=ToolSearch(...))` hands the run an `AgentToolSearch`. Each request, the loop
passes it the definitions it would send (`offered`); while a session's agent has no more tools
than the threshold they go through unchanged. Past it, the session gets its own `tool_search`
tool (in its registry overlay) and a `LoadedTools` order: the pinned tools (`always_load`, the
structured-output tool, every tool the session's history already called), then each tool a
search loads, appended. The order lives as long as the `Session` object, so later runs start
with the tools the earlier ones loaded, and a session resumed from a store starts with the
tools its history used. Search results pass governance: a tool a rule denies outright is never
returned (`governance.visibility`), nor one the permission policy refuses.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolweave.errors import ConfigError
from toolweave.governance.context import GateContext
from toolweave.governance.pipeline import Governance
from toolweave.governance.visibility import denied_outright
from toolweave.tools import Tool, ToolDef, ToolRegistry
from toolweave.tools.base import tool_def
from toolweave.tools.search_mode import TOOL_SEARCH, LoadedTools, ToolSearch, search_tool

if TYPE_CHECKING:
    from toolweave.agent.session import Session


@dataclass(slots=True)
class _SessionSearch:
    """A session's search-mode state: its tool order and how much history was read for
    tools it called."""

    loaded: LoadedTools
    scanned: int = 0


class AgentToolSearch:
    """One agent's search mode (see the module docstring)."""

    def __init__(
        self, settings: ToolSearch, governance: Governance, pinned: Sequence[str] = ()
    ) -> None:
        self.settings = settings
        self.governance = governance
        self.pinned = (*settings.always_load, *pinned)
        self._sessions: weakref.WeakKeyDictionary[Session, _SessionSearch] = (
            weakref.WeakKeyDictionary()
        )

    def install(self, registry: ToolRegistry) -> None:
        """Check that the agent's tools leave the name `tool_search` free."""
        if TOOL_SEARCH in registry:
            raise ConfigError(
                f"Agent(tool_search=...) adds the tool {TOOL_SEARCH!r}, but the agent already "
                "has a tool of that name; rename yours or leave tool_search off"
            )

    def offered(
        self, session: Session, registry: ToolRegistry, defs: Sequence[ToolDef]
    ) -> list[ToolDef]:
        """The definitions this request sends: `defs` below the threshold, else the session's
        pinned and loaded tools in load order."""
        state = self._sessions.get(session)
        if state is None:
            count = sum(1 for d in defs if d.name not in self.pinned)
            if not self.settings.active(count):
                return list(defs)
            state = self._start(session, registry)
        self._scan(state, session, registry)
        if not any(d.name == TOOL_SEARCH for d in defs):  # registered after `defs` were read
            tool = registry.get(TOOL_SEARCH)
            defs = [*defs, tool_def(tool)] if tool is not None else list(defs)
        return state.loaded.definitions(defs)

    def _start(self, session: Session, registry: ToolRegistry) -> _SessionSearch:
        state = _SessionSearch(LoadedTools(self.pinned))
        self._sessions[session] = state
        governance = self.governance

        def allowed(tool: Tool) -> bool:
            rules = governance.rules_for(tool, GateContext.of(session, registry.policy))
            return denied_outright(rules, tool.name, tool) is None

        if self.settings.index is not None:
            registry.search_index = self.settings.index
        if TOOL_SEARCH in registry:  # another agent's, bound to that agent's session state
            registry.unregister(TOOL_SEARCH)
        registry.register(search_tool(self.settings, lambda: registry, state.loaded, allowed))
        return state

    def _scan(self, state: _SessionSearch, session: Session, registry: ToolRegistry) -> None:
        """Pin the tools the history called since the last look (a rewritten, shorter history
        is read again from its start)."""
        messages = session.messages
        if state.scanned > len(messages):
            state.scanned = 0
        called = [
            call.name
            for message in messages[state.scanned :]
            for call in message.tool_calls
            if call.name in registry
        ]
        state.loaded.add(called)
        state.scanned = len(messages)
