"""The tool registry: lookup, permission checks, validation, timeouts, concurrent invocation.

`definitions()` is sorted by name and cached, so every turn sends byte-identical tool lists and
provider prompt caches hit. `search()` ranks the tools a caller may use for a task described in
words (`toolweave.tools.search`). `overlay()` gives a session layer whose tools shadow the
shared ones without touching them. `invoke` is the hot path of every agent turn: it never
raises for a failed call (the error is part of the `ToolInvocation`) and does no work a call
does not need.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from time import perf_counter
from typing import Any

from toolweave.errors import ToolweaveError
from toolweave.tools.arguments import parse_arguments
from toolweave.tools.base import Tool, ToolDef, tool_def
from toolweave.tools.calls import ToolCall, ToolInvocation
from toolweave.tools.clock import RequestClock, TimeoutTimer
from toolweave.tools.context import ToolContext
from toolweave.tools.errors import (
    ExecutionFailed,
    PermissionDenied,
    ToolCancelled,
    ToolError,
    ToolNotFound,
    ToolTimeout,
)
from toolweave.tools.permissions import PermissionPolicy
from toolweave.tools.result import ToolResult, to_tool_result
from toolweave.tools.search import KeywordToolIndex, ToolIndex, ToolMatch

TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
DEFAULT_BATCH_TIMEOUT = 60.0
MAX_LISTED_TOOLS = 50  # in a ToolNotFound message; hundreds of MCP tools would drown the model


@dataclass(slots=True)
class ToolStats:
    calls: int = 0
    errors: int = 0
    total_duration: float = 0.0

    @property
    def mean_duration(self) -> float:
        return self.total_duration / self.calls if self.calls else 0.0


@dataclass(slots=True)
class _Entry:
    tool: Tool
    tags: frozenset[str]
    category: str | None
    timeout: float | None


class ToolRegistry:
    """Holds tools by name and runs them safely. Never raises from `invoke`."""

    def __init__(
        self, policy: PermissionPolicy | None = None, *, parent: ToolRegistry | None = None
    ) -> None:
        self._policy = policy
        self._parent = parent
        self._entries: dict[str, _Entry] = {}
        self._stats: dict[str, ToolStats] = {}
        self._version = 0
        self._definitions_key: tuple[int, ...] = (-1,)
        self._definitions: list[ToolDef] = []
        self._tools_key: tuple[int, ...] = (-1,)
        self._tools: list[Tool] = []
        self._search_index: ToolIndex | None = None

    @property
    def policy(self) -> PermissionPolicy | None:
        """This registry's policy; an overlay without its own follows the shared one, live."""
        if self._policy is None and self._parent is not None:
            return self._parent.policy
        return self._policy

    @policy.setter
    def policy(self, policy: PermissionPolicy | None) -> None:
        self._policy = policy

    # -- contents -------------------------------------------------------------------------

    def register(
        self,
        tool: Tool,
        *,
        tags: Iterable[str] | None = None,
        category: str | None = None,
        timeout: float | None = None,
    ) -> Tool:
        self._check_new(getattr(tool, "name", tool))
        entry = _Entry(
            tool=tool,
            tags=frozenset(tags if tags is not None else getattr(tool, "tags", ())),
            category=category if category is not None else getattr(tool, "category", None),
            timeout=timeout if timeout is not None else getattr(tool, "timeout", None),
        )
        if entry.timeout is not None and not entry.timeout > 0:
            raise ToolError(
                f"cannot register tool {tool.name!r}: timeout must be a positive number of "
                f"seconds or None (no limit), got {entry.timeout!r}",
                tool=tool.name,
            )
        self._entries[tool.name] = entry
        self._version += 1
        return tool

    def register_all(self, tools: Iterable[Tool]) -> None:
        """Register several tools: all of them, or (on a bad or duplicate name) none."""
        batch = list(tools)
        names: list[object] = [getattr(t, "name", t) for t in batch]
        for index, name in enumerate(names):
            self._check_new(name)
            if name in names[:index]:
                raise ToolError(
                    f"cannot register tool {name!r}: it appears twice in this batch; "
                    "give each tool its own name",
                    tool=str(name),
                )
        for t in batch:
            self.register(t)

    def _check_new(self, name: object) -> None:
        if not isinstance(name, str):
            raise TypeError(
                f"cannot register {name!r}: a registry holds Tools (with a `name` and an async "
                "`execute`); turn a function into one with @tool or FunctionTool(func)"
            )
        if not TOOL_NAME.match(name):
            raise ToolError(
                f"cannot register tool {name!r}: names must be 1-64 characters of letters, "
                "digits, '_' or '-' (what every model provider accepts); rename it"
            )
        if name in self._entries:
            raise ToolError(
                f"cannot register tool {name!r}: a tool with that name is already registered; "
                "unregister it first or choose another name",
                tool=name,
            )

    def unregister(self, name: str) -> Tool:
        entry = self._entries.pop(name, None)
        if entry is None:
            raise ToolNotFound(f"cannot unregister {name!r}: no such tool in this registry")
        self._version += 1
        return entry.tool

    def _entry(self, name: str) -> _Entry | None:
        entry = self._entries.get(name)
        if entry is None and self._parent is not None:
            return self._parent._entry(name)
        return entry

    def get(self, name: str) -> Tool | None:
        entry = self._entry(name)
        return entry.tool if entry is not None else None

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._entry(name) is not None

    def __len__(self) -> int:
        return len(self.names())

    def _all_entries(self) -> dict[str, _Entry]:
        merged = self._parent._all_entries() if self._parent is not None else {}
        merged.update(self._entries)
        return merged

    def names(self) -> list[str]:
        return sorted(self._all_entries())

    def tools(self) -> list[Tool]:
        """Tools sorted by name; sorted again only when the contents change."""
        key = self._key()
        if key != self._tools_key:
            self._tools = [e.tool for _, e in sorted(self._all_entries().items())]
            self._tools_key = key
        return list(self._tools)

    def _key(self) -> tuple[int, ...]:
        own = (id(self), self._version)
        return own + self._parent._key() if self._parent is not None else own

    def definitions(self) -> list[ToolDef]:
        """Definitions sorted by name; the same objects until the contents change."""
        key = self._key()
        if key != self._definitions_key:
            self._definitions = [tool_def(t) for t in self.tools()]
            self._definitions_key = key
        return list(self._definitions)

    def find_by_tag(self, tag: str) -> list[Tool]:
        return [e.tool for _, e in sorted(self._all_entries().items()) if tag in e.tags]

    def find_by_category(self, category: str) -> list[Tool]:
        return [e.tool for _, e in sorted(self._all_entries().items()) if e.category == category]

    def overlay(self, policy: PermissionPolicy | None = None) -> ToolRegistry:
        """A session layer: its tools shadow this registry's, which stays untouched.

        The layer uses `policy` when given, else this registry's as it is at each call (a
        policy set on the shared registry later applies to existing sessions too). Its stats
        count only calls made through it; `unregister` removes only its own tools.
        """
        return ToolRegistry(policy, parent=self)

    @property
    def search_index(self) -> ToolIndex:
        """What `search` ranks with: this registry's own, else the shared one's (an overlay
        follows it), else a `KeywordToolIndex` made on first use."""
        if self._search_index is None:
            if self._parent is not None:
                return self._parent.search_index
            self._search_index = KeywordToolIndex()
        return self._search_index

    @search_index.setter
    def search_index(self, index: ToolIndex) -> None:
        self._search_index = index

    async def search(
        self,
        query: str,
        k: int = 10,
        *,
        allowed: Callable[[Tool], bool] | None = None,
        explain: bool = False,
    ) -> list[ToolMatch]:
        """The `k` tools that best fit `query`, best first (`toolweave.tools.search`).

        Only tools the caller may use are ranked: those this registry's permission policy
        allows and, when given, those `allowed` accepts (governance passes its rules here), so a
        refused tool is never returned. The index follows tools being added, removed and
        changed: it is handed the current tools and re-reads those it holds another object
        (or, for `HybridToolIndex`, another text) for."""
        if not isinstance(query, str) or not query.strip():
            raise ToolError("search needs a query: say what the tool should do")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ToolError(f"search k must be a positive integer, got {k!r}")
        candidates = self.tools()
        if self.policy is not None or allowed is not None:
            candidates = [
                tool
                for tool in candidates
                if self._policy_allows(tool) and (allowed is None or allowed(tool))
            ]
        return await self.search_index.search(query, candidates, k, explain=explain)

    def _policy_allows(self, tool: Tool) -> bool:
        try:
            self.check_permissions(tool.name, tool)
        except PermissionDenied:
            return False
        return True

    def stats(self) -> dict[str, ToolStats]:
        return dict(sorted(self._stats.items()))

    # -- invocation -----------------------------------------------------------------------

    def check_permissions(self, name: str, tool: Tool) -> None:
        """Raise `PermissionDenied` if this registry's policy refuses `tool`'s declared
        permissions. The one decider of the policy: `invoke` calls it before every execution,
        and the agent loop calls it for a whole turn before any call starts, so a denial ends
        the run before anything ran."""
        policy = self.policy
        if policy is not None:
            policy.check(name, tool.permissions)

    async def invoke(
        self,
        name: str,
        args: dict[str, Any] | str | bytes | None,
        ctx: ToolContext | None = None,
        *,
        call_id: str | None = None,
        timeout: float | None = None,
    ) -> ToolInvocation:
        """Run one tool. Errors come back in the invocation; only cancellation propagates.

        The one place where an exception a tool raises becomes its outcome: a `ToolError` as
        it is; another library error (`MCPError`, `KnowledgeBaseError`, `SkillError`, ...) as
        `ExecutionFailed` with its message, its recoverability and itself as the cause; anything
        else as `ExecutionFailed` naming the exception.

        Order: lookup, permission policy, argument parsing (repairing broken JSON), then the
        tool (which validates) under the tighter of `timeout` and the tool's own timeout.
        """
        if ctx is None:
            ctx = ToolContext(call_id=call_id)
        start = perf_counter()
        error: ToolError | None = None
        parsed: dict[str, Any] | str | bytes | None = args
        entry = self._entries.get(name)
        if entry is None and self._parent is not None:
            entry = self._parent._entry(name)
        try:
            if entry is None:
                raise ToolNotFound(self._not_found_message(name), tool=name)
            tool = entry.tool
            self.check_permissions(name, tool)
            parsed = parse_arguments(args, name)
            if ctx.cancellation.is_set():
                raise ToolCancelled(
                    f"Tool '{name}' was not run: the call was cancelled.", tool=name
                )
            limit = entry.timeout
            if timeout is not None and (limit is None or timeout < limit):
                limit = timeout
            if limit is None:
                result = await tool.execute(parsed, ctx)
            else:
                result = await self._execute_with_timeout(tool, parsed, ctx, limit)
            if type(result) is not ToolResult:
                result = to_tool_result(result)  # a hand-written tool returned a plain value
        except ToolError as exc:
            error = exc
        except ToolweaveError as exc:  # a capability's family (MCP, kb, skills, governance)
            error = ExecutionFailed(
                str(exc), tool=name, recoverable=getattr(exc, "recoverable", True)
            )
            error.__cause__ = exc
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is None or task.cancelling():
                ctx.cancel()  # tools still running (threads, subtasks) see it
                raise
            error = ToolCancelled(f"Tool '{name}' was cancelled before it finished.", tool=name)
        except (Exception, SystemExit) as exc:
            error = ExecutionFailed(
                f"Tool '{name}' failed: {type(exc).__name__}: {exc}. Check the arguments or "
                "try a different approach.",
                tool=name,
            )
            error.__cause__ = exc
        if error is not None:
            result = ToolResult.error(error.message)
        duration = perf_counter() - start
        if entry is not None:  # names a model made up are not tools; do not grow stats for them
            stats = self._stats.get(name)
            if stats is None:
                stats = self._stats[name] = ToolStats()
            stats.calls += 1
            stats.total_duration += duration
            if error is not None or result.is_error:
                stats.errors += 1
        return ToolInvocation(name, call_id or ctx.call_id, parsed, result, error, duration)

    async def run_call(self, call: ToolCall) -> ToolInvocation:
        """The terminal of the call chain (`toolweave.tools.calls`): `invoke` the call with its
        arguments, context and time budget, and keep the record on the call."""
        inv = await self.invoke(
            call.name, call.args, call.ctx, call_id=call.call_id, timeout=call.timeout
        )
        call.invocation = inv
        return inv

    async def _execute_with_timeout(
        self, tool: Tool, args: dict[str, Any], ctx: ToolContext, limit: float
    ) -> ToolResult:
        # The call gets its own child signal: a timeout stops this call, not the caller's run.
        call_ctx = ctx.for_call(ctx.call_id)
        try:
            async with asyncio.timeout(limit) as scope:
                call_ctx.call_timer = RequestClock()  # stopped while a person is asked
                call_ctx.call_timer.attach(TimeoutTimer(scope))
                return await tool.execute(args, call_ctx)
        except TimeoutError:
            if not scope.expired():
                raise  # the tool's own TimeoutError, not ours
            call_ctx.cancel()  # cooperative tools (and threads polling ctx) stop now
            raise ToolTimeout(
                f"Tool '{tool.name}' timed out after {limit:g}s and was cancelled. Try a "
                "smaller request, narrower arguments, or a different tool.",
                tool=tool.name,
                timeout=limit,
            ) from None
        except asyncio.CancelledError:
            call_ctx.cancel()  # before the release below detaches it from the caller's signal
            raise
        finally:
            ctx.cancellation.release(call_ctx.cancellation)

    async def invoke_all(
        self,
        calls: Sequence[
            tuple[str, dict[str, Any] | str | bytes | None] | tuple[str, Any, str | None]
        ],
        ctx: ToolContext | None = None,
        timeout: float | None = DEFAULT_BATCH_TIMEOUT,
    ) -> list[ToolInvocation]:
        """Run calls concurrently, each with its own timeout; results in input order.

        A call is `(name, args)` or `(name, args, call_id)`. Each call gets a child of `ctx`
        (shared state and deps, its own id and cancellation). Cancelling the awaiting task
        cancels every call's context; cancelling `ctx` reaches every running call. The caller's
        `ctx` itself is never cancelled here, so the run can go on after a stopped batch.
        """
        parent = ctx if ctx is not None else ToolContext()

        async def one(call: tuple[Any, ...]) -> ToolInvocation:
            call_id = call[2] if len(call) > 2 else None
            child = parent.for_call(call_id)
            try:
                return await self.invoke(call[0], call[1], child, call_id=call_id, timeout=timeout)
            finally:
                parent.cancellation.release(child.cancellation)

        if len(calls) == 1:
            return [await one(calls[0])]  # no task needed for a single call
        return list(await asyncio.gather(*(one(c) for c in calls)))

    def _not_found_message(self, name: str) -> str:
        names = self.names()
        if not names:
            return f"Unknown tool '{name}': no tools are available here. Answer without one."
        from difflib import get_close_matches  # only on this error path

        close = get_close_matches(name, names, n=3)
        hint = f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        available = ", ".join(names[:MAX_LISTED_TOOLS])
        if len(names) > MAX_LISTED_TOOLS:
            available += f" (and {len(names) - MAX_LISTED_TOOLS} more)"
        return (
            f"Unknown tool '{name}'.{hint} Available tools: {available}. Call one of these instead."
        )
