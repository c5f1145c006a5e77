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

With `ToolSearch(native=True)` the provider searches instead: past the threshold every request
carries all the definitions (sorted, byte-stable) with every tool but the pinned ones marked
deferred (`ModelRequest.deferred_tools`) and the provider's `tool_search` among its provider
tools; a tool a rule denies outright is left out, so no search can find it. The provider's
search call and result come back as `ProviderToolPart`s and go back with the history.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolweave.errors import ConfigError
from toolweave.governance.context import GateContext
from toolweave.governance.pipeline import Governance
from toolweave.governance.visibility import denied_outright
from toolweave.llm import Model, ProviderTool
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
        self,
        settings: ToolSearch,
        governance: Governance,
        pinned: Sequence[str] = (),
        model: Model | None = None,
    ) -> None:
        self.settings = settings
        self.governance = governance
        self.pinned = (*settings.always_load, *pinned)
        self._sessions: weakref.WeakKeyDictionary[Session, _SessionSearch] = (
            weakref.WeakKeyDictionary()
        )
        self._native: weakref.WeakKeyDictionary[Session, frozenset[str]] = (
            weakref.WeakKeyDictionary()
        )
        if settings.native and not getattr(model, "supports_tool_search", False):
            raise ConfigError(
                f"ToolSearch(native=True) needs a model whose provider searches deferred tools "
                f"(AnthropicModel, OpenAIResponsesModel); {type(model).__name__} has none. Pass "
                "native=False to use toolweave's own tool_search with any model"
            )

    def install(self, registry: ToolRegistry) -> None:
        """Check that the agent's tools leave the name `tool_search` free."""
        if self.settings.native:
            return
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
        if self.settings.native:
            return self._native_offered(session, registry, defs)
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

    def request_fields(self, session: Session, fields: dict[str, Any]) -> dict[str, Any]:
        """The request fields of `session`'s next request: in native search mode, which tools
        are deferred and the provider's `tool_search`; else `fields` unchanged."""
        deferred = self._native.get(session)
        if not deferred:
            return fields
        searching = (*fields["provider_tools"], ProviderTool("tool_search"))
        return {**fields, "deferred_tools": deferred, "provider_tools": searching}

    def _native_offered(
        self, session: Session, registry: ToolRegistry, defs: Sequence[ToolDef]
    ) -> list[ToolDef]:
        """Every definition a rule does not deny outright; past the threshold, the ones not
        pinned are this session's deferred tools."""
        count = sum(1 for d in defs if d.name not in self.pinned)
        if not self.settings.active(count):
            self._native.pop(session, None)
            return list(defs)
        allowed = self._allowed(session, registry)
        kept = [d for d in defs if (tool := registry.get(d.name)) is None or allowed(tool)]
        self._native[session] = frozenset(d.name for d in kept if d.name not in self.pinned)
        return kept

    def _allowed(self, session: Session, registry: ToolRegistry) -> Callable[[Tool], bool]:
        governance = self.governance

        def allowed(tool: Tool) -> bool:
            rules = governance.rules_for(tool, GateContext.of(session, registry.policy))
            return denied_outright(rules, tool.name, tool) is None

        return allowed

    def _start(self, session: Session, registry: ToolRegistry) -> _SessionSearch:
        state = _SessionSearch(LoadedTools(self.pinned))
        self._sessions[session] = state
        allowed = self._allowed(session, registry)
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
