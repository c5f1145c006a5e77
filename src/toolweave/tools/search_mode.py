"""Tool-search mode: the model sees a few pinned tools and `tool_search`, which loads the rest.

Past a threshold of tools (`ToolSearch.threshold`), sending every definition with every request
costs more than it helps. In search mode the model sees the pinned tools (`always_load`, plus
every tool the session already used or loaded) and `tool_search(query, k)`; a search ranks the
tools the caller may use (`ToolRegistry.search`) and loads the ones it returns.

The prompt's tool list stays cache-friendly: `LoadedTools` keeps one order per session, the
pinned tools first (by name) and then each loaded tool appended in load order, never re-sorted,
so every request's definitions start with the previous request's, byte for byte, and the
provider's prompt cache keeps its prefix. The agent (`Agent(tool_search=ToolSearch())`) and
`toolweave serve` (`[serve] tool_search = true`) both build on this.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass

from toolweave.errors import ConfigError
from toolweave.tools.base import Tool, ToolDef
from toolweave.tools.errors import InvalidArguments
from toolweave.tools.function_tool import FunctionTool
from toolweave.tools.registry import ToolRegistry
from toolweave.tools.result import TextContent, ToolResult
from toolweave.tools.search import ToolIndex

TOOL_SEARCH = "tool_search"
"""The search tool's name, in every place search mode shows it."""
DEFAULT_TOOL_SEARCH_THRESHOLD = 30
"""Search mode comes on past this many tools (an agent's and `toolweave serve`'s default)."""
_DESCRIPTION_CHARS = 160


@dataclass(frozen=True, slots=True)
class ToolSearch:
    """Search-mode settings: on when more than `threshold` tools are offered; `always_load`
    names the tools always shown; `k` is how many tools a search loads unless the model asks
    for another number, at most `max_k`; `index` ranks (a `ToolIndex` such as
    `HybridToolIndex`; None: the registry's own, keyword BM25). `native` hands the search to the
    provider instead (Anthropic's tool-search tool, OpenAI Responses' `tool_search`): every tool
    but the pinned ones is sent deferred, the provider loads what its search finds, and the
    model's adapter must support it (`supports_tool_search`)."""

    threshold: int = DEFAULT_TOOL_SEARCH_THRESHOLD
    always_load: Sequence[str] = ()
    k: int = 5
    max_k: int = 20
    index: ToolIndex | None = None
    native: bool = False

    def __post_init__(self) -> None:
        for field_name in ("threshold", "k", "max_k"):
            value = getattr(self, field_name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(
                    f"ToolSearch({field_name}={value!r}) must be a non-negative integer"
                )
        if not 1 <= self.k <= self.max_k:
            raise ConfigError(
                f"ToolSearch(k={self.k}) must be between 1 and max_k ({self.max_k}); raise "
                "max_k or lower k"
            )
        if isinstance(self.always_load, str):
            raise ConfigError(
                f"ToolSearch(always_load={self.always_load!r}) must be a list of tool names, "
                f"not one string; write always_load=[{self.always_load!r}]"
            )
        names = tuple(self.always_load)
        bad = [name for name in names if not isinstance(name, str) or not name]
        if bad:
            raise ConfigError(f"ToolSearch(always_load=...) items must be tool names, got {bad}")
        object.__setattr__(self, "always_load", names)
        if self.index is not None and not callable(getattr(self.index, "search", None)):
            raise ConfigError(
                f"ToolSearch(index=...) must be a ToolIndex (an async `search(query, tools, "
                f"k)`), got {type(self.index).__name__}"
            )

    @classmethod
    def of(cls, value: ToolSearch | bool | None) -> ToolSearch | None:
        """What `tool_search=` accepts: settings, True for the defaults, False/None for off."""
        if value is None or value is False:
            return None
        if value is True:
            return cls()
        if isinstance(value, ToolSearch):
            return value
        raise TypeError(f"tool_search=... must be a ToolSearch or a bool, got {value!r}")

    def size(self, k: object) -> int:
        """How many tools a search asked for `k` returns: `k` (None: the default), at most
        `max_k`; anything but a positive integer is an `InvalidArguments` the model can fix."""
        wanted = self.k if k is None else k
        if isinstance(wanted, bool) or not isinstance(wanted, int) or wanted < 1:
            raise InvalidArguments(
                f"tool_search k must be a positive integer, got {k!r}", tool=TOOL_SEARCH
            )
        return min(wanted, self.max_k)

    def active(self, count: int) -> bool:
        """Whether search mode is on for `count` offered tools."""
        return count > self.threshold


class LoadedTools:
    """One session's tool order in search mode: pinned names first, then loads appended."""

    def __init__(self, pinned: Iterable[str]) -> None:
        self.order: list[str] = sorted({*pinned, TOOL_SEARCH})
        self._known = set(self.order)

    def add(self, names: Iterable[str]) -> list[str]:
        """Append the names not yet here, in the given order; returns the new ones."""
        added = [name for name in names if name not in self._known]
        self.order.extend(added)
        self._known.update(added)
        return added

    def __contains__(self, name: object) -> bool:
        return name in self._known

    def definitions(self, offered: Sequence[ToolDef]) -> list[ToolDef]:
        """`offered` narrowed to this session's tools, in this session's order (a name not
        offered now, such as a tool that went away, is skipped and keeps its place)."""
        by_name = {d.name: d for d in offered}
        return [by_name[name] for name in self.order if name in by_name]


def search_tool(
    settings: ToolSearch,
    registry: Callable[[], ToolRegistry],
    loaded: LoadedTools,
    allowed: Callable[[Tool], bool] | None = None,
    on_load: Callable[[list[str]], Awaitable[None]] | None = None,
) -> Tool:
    """The `tool_search` tool over `registry()`: ranks the tools `allowed` accepts (never
    itself), adds the found ones to `loaded` and, when they are new, awaits `on_load`."""

    def visible(tool: Tool) -> bool:
        return tool.name != TOOL_SEARCH and (allowed is None or allowed(tool))

    async def tool_search(query: str, k: int | None = None) -> ToolResult:
        """Find tools for a task and load them, so you can call them from your next step.

        Describe what you want to do in words ("send an email", "list open issues"); the best
        matching tools are loaded and listed with their descriptions. Search again with other
        words if none fits.

        Args:
            query: What the tool should do.
            k: How many tools to load (default: a few).
        """
        current = registry()
        matches = await current.search(query, settings.size(k), allowed=visible)
        names = [m.name for m in matches]
        added = loaded.add(names)
        if added and on_load is not None:
            await on_load(added)
        if not names:
            text = f"No tool matches {query!r}; search again with other words."
            return ToolResult([TextContent(text)], structured={"loaded": []})
        lines = [f"Loaded {len(names)} tool(s); call them directly:"]
        for name in names:
            tool = current.get(name)
            lines.append(f"- {name}: {_summary(tool.description if tool else '')}")
        return ToolResult([TextContent("\n".join(lines))], structured={"loaded": names})

    return FunctionTool(tool_search, read_only=True, idempotent=True, tags=["search"])


def _summary(description: str) -> str:
    line = " ".join(description.split())
    if len(line) <= _DESCRIPTION_CHARS:
        return line
    return line[: _DESCRIPTION_CHARS - 3] + "..."
