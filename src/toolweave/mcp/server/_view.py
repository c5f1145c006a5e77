"""`ServerView`: the server as its handlers and transports read it.

`MCPServer` (in `app.py`) sits at the top of `mcp/server/`: it holds the registries and builds
sessions, and everything below it reaches it only through this protocol, so no module below
imports the app. The session itself needs less (`SessionHost`: the method table the server
registered, its info and caching hints); the handlers read the rest here, handed to them as
their first argument when the server binds them (`_handlers.bind_handlers`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from toolweave.mcp.server._session import SessionHost

if TYPE_CHECKING:
    from toolweave.mcp.server._catalog import CatalogSource, PromptEntry, ResourceEntry
    from toolweave.mcp.server._input import RequestStates
    from toolweave.mcp.server._listen import ChangeFeed
    from toolweave.mcp.server._session import ServerSession
    from toolweave.mcp.server._tasks import TaskManager
    from toolweave.mcp.server._tools import ToolEntry
    from toolweave.mcp.server.skills import SkillServing


class ServerView(SessionHost, Protocol):
    """What the handlers and transports read of an `MCPServer` (`MCPServer` is one)."""

    @property
    def name(self) -> str: ...

    @property
    def instructions(self) -> str | None: ...

    @property
    def deps(self) -> Any: ...

    @property
    def page_size(self) -> int | None: ...

    @property
    def request_states(self) -> RequestStates: ...

    @property
    def tasks(self) -> TaskManager: ...

    @property
    def changes(self) -> ChangeFeed: ...

    @property
    def sessions(self) -> set[ServerSession]: ...

    @property
    def resources(self) -> list[ResourceEntry]: ...

    @property
    def prompts(self) -> dict[str, PromptEntry]: ...

    @property
    def completions(self) -> dict[str, Callable[..., Any]]: ...

    @property
    def catalog_sources(self) -> list[CatalogSource]: ...

    @property
    def skills(self) -> SkillServing: ...

    def capabilities(self) -> dict[str, Any]: ...

    def new_session(
        self, *, session_id: str | None = None, stateless: bool = False
    ) -> ServerSession: ...

    async def load_tool_sources(self) -> None: ...

    def tool_entry(self, name: str) -> ToolEntry | None: ...

    def tool_names(self) -> list[str]: ...

    def tool_definitions_for(self, session: ServerSession) -> list[dict[str, Any]]: ...
