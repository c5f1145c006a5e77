"""The per-call context a tool receives: identity, shared run state, dependencies, cancellation,
progress reporting and an output channel to the user.

A tool asks for it by annotating a parameter as `ToolContext`; it is injected and never appears
in the schema the model sees.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import inspect
import mimetypes
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal

from typing_extensions import TypeVar

from toolweave.errors import ConfigError
from toolweave.tools.clock import RequestClock

if TYPE_CHECKING:
    from toolweave.tools.registry import ToolRegistry

DepsT = TypeVar("DepsT", default=Any)
"""The type of `ToolContext.deps` (and `Agent`'s deps); `Any` when not given, so a bare
`ToolContext` annotation stays valid under mypy --strict."""

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None] | None]


@dataclass(frozen=True, slots=True)
class UserOutput:
    """Something a tool sends straight to the user while it runs; the model never sees it.

    `text` for kind "text"; `data` (raw bytes) for images and in-memory files; `path` for a
    file on disk (not read here, so large files cost nothing until the receiver wants them).
    """

    kind: Literal["text", "image", "file"]
    text: str | None = None
    data: bytes | None = None
    mime_type: str | None = None
    filename: str | None = None
    path: str | None = None
    call_id: str | None = None


OutputSink = Callable[[UserOutput], Awaitable[None] | None]


REGISTRY_EXTRA = "registry"
"""The `ToolContext.extras` key under which a host shares the session's `ToolRegistry`."""


class CancellationSignal:
    """A cancellation flag a tool can poll (`is_set`) or await (`wait`).

    Signals form a tree: cancelling a parent (the run) cancels every child (each call), while a
    child (one call that timed out) can be cancelled alone. The asyncio.Event is created lazily
    so contexts stay cheap for the many calls that never wait on it. `set` may be called from
    any thread (a sync tool runs in a worker thread): the waiter's loop is woken safely.
    """

    __slots__ = ("_children", "_event", "_loop", "_set")

    def __init__(self) -> None:
        self._set = False
        self._event: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._children: list[CancellationSignal] = []

    def is_set(self) -> bool:
        return self._set

    def set(self) -> None:
        if self._set:
            return
        self._set = True
        event, loop = self._event, self._loop
        if event is not None and loop is not None:
            _wake(event, loop)
        for child in tuple(self._children):  # a copy: another thread may release meanwhile
            child.set()

    async def wait(self) -> None:
        if self._set:
            return
        loop = asyncio.get_running_loop()
        if self._event is None or self._loop is not loop:  # first wait, or a new event loop
            self._loop = loop
            self._event = asyncio.Event()
            if self._set:  # set() ran in another thread before it could see the event
                return
        await self._event.wait()

    def child(self) -> CancellationSignal:
        signal = CancellationSignal()
        if self._set:
            signal._set = True
        else:
            self._children.append(signal)
        return signal

    def release(self, child: CancellationSignal) -> None:
        """Forget a finished child so long runs do not accumulate them."""
        with contextlib.suppress(ValueError):
            self._children.remove(child)


def _wake(event: asyncio.Event, loop: asyncio.AbstractEventLoop) -> None:
    """Set `event`, which belongs to `loop`, from whatever thread we are on."""
    try:
        current: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        current = None
    if current is loop:
        event.set()
    elif not loop.is_closed():
        loop.call_soon_threadsafe(event.set)


class ToolContext(Generic[DepsT]):
    """Everything a running tool may need besides its arguments.

    `state` is a dict shared by every call of one run; `deps` is the caller's dependency object
    (a database handle, an HTTP client), passed through untouched. Annotate a parameter
    `ctx: ToolContext[MyDeps]` and `ctx.deps` is a `MyDeps` to the type checker, as in
    pydantic-ai's `RunContext[Deps]`.
    """

    __slots__ = (
        "call_id",
        "call_timer",
        "cancellation",
        "deps",
        "extras",
        "output_sink",
        "progress_callback",
        "session_id",
        "state",
        "tool_call_approved",
        "tool_call_cleared",
        "trace_id",
    )

    def __init__(
        self,
        session_id: str | None = None,
        trace_id: str | None = None,
        call_id: str | None = None,
        state: dict[str, Any] | None = None,
        deps: DepsT = None,  # type: ignore[assignment]  # None when the caller has no deps
        *,
        cancellation: CancellationSignal | None = None,
        progress_callback: ProgressCallback | None = None,
        extras: dict[str, Any] | None = None,
        output_sink: OutputSink | None = None,
        tool_call_approved: bool = False,
        tool_call_cleared: bool = False,
    ) -> None:
        self.session_id = session_id
        self.trace_id = trace_id
        self.call_id = call_id
        self.state: dict[str, Any] = state if state is not None else {}
        self.deps: DepsT = deps
        self.cancellation = cancellation if cancellation is not None else CancellationSignal()
        self.progress_callback = progress_callback
        # Seams for higher layers (the agent's output channel, the MCP request) without making
        # this layer depend on them.
        self.extras: dict[str, Any] = extras if extras is not None else {}
        self.output_sink = output_sink
        # True when a person approved this very call after the tool raised ApprovalRequired.
        self.tool_call_approved = tool_call_approved
        # True when governance (rules, hooks, approvals) cleared this very call before it ran;
        # a tool that must never run ungoverned (the built-in shell) checks it.
        self.tool_call_cleared = tool_call_cleared
        # The call's deadline, set by the registry while it runs the call under a timeout.
        self.call_timer: RequestClock | None = None

    @property
    def registry(self) -> ToolRegistry | None:
        """The session's tool registry, when the caller shares it (tools that load other
        tools, such as `mcp_load`, add to it); None otherwise."""
        registry: ToolRegistry | None = self.extras.get(REGISTRY_EXTRA)
        return registry

    @property
    def cancelled(self) -> bool:
        """True once the caller cancelled this call (or the run it belongs to)."""
        return self.cancellation.is_set()

    async def wait_cancelled(self) -> None:
        """Return when the call is cancelled; race it against work to stop promptly."""
        await self.cancellation.wait()

    def cancel(self) -> None:
        self.cancellation.set()

    def waiting_for_person(self) -> contextlib.AbstractContextManager[None]:
        """Wrap the wait for a person's answer (an elicitation, an approval asked by the tool):
        the call's timeout does not run inside (`toolweave.tools.clock`); a no-op for an untimed
        call."""
        timer = self.call_timer
        return timer.stopped() if timer is not None else contextlib.nullcontext()

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Tell the caller how far the tool got; a no-op when nobody listens."""
        callback = self.progress_callback
        if callback is None:
            return
        outcome = callback(progress, total, message)
        if inspect.isawaitable(outcome):
            await outcome

    async def _send(self, item: UserOutput) -> None:
        sink = self.output_sink
        if sink is None:
            return
        outcome = sink(item)
        if inspect.isawaitable(outcome):
            await outcome

    async def send_text(self, text: str) -> None:
        """Show `text` to the user now (a status line, a partial finding); a no-op unattended."""
        await self._send(UserOutput("text", text=text, call_id=self.call_id))

    async def send_image(self, data: bytes, mime_type: str = "image/png") -> None:
        """Show an image (raw bytes) to the user now; a no-op when nobody listens."""
        await self._send(UserOutput("image", data=data, mime_type=mime_type, call_id=self.call_id))

    async def send_file(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        data: bytes | None = None,
        filename: str | None = None,
        mime_type: str | None = None,
    ) -> None:
        """Hand the user a file, by `path` on disk or as in-memory `data` with a `filename`."""
        if (path is None) == (data is None):
            raise ConfigError("send_file needs exactly one of `path` or `data`")
        if path is not None:
            path = os.fspath(path)
            filename = filename or os.path.basename(path)
        elif not filename:
            raise ConfigError("send_file(data=...) needs a `filename` so the user can save it")
        if mime_type is None:
            mime_type = mimetypes.guess_type(filename or "")[0] or "application/octet-stream"
        await self._send(
            UserOutput(
                "file",
                data=data,
                mime_type=mime_type,
                filename=filename,
                path=path,
                call_id=self.call_id,
            )
        )

    def for_call(self, call_id: str | None) -> ToolContext[DepsT]:
        """A context for one call of a batch: same run state, own id, own child cancellation
        (and the approval flag, which belongs to the call). A subclass's context (an MCP
        request's) is copied, so the call keeps what the subclass adds."""
        if type(self) is not ToolContext:
            child = copy.copy(self)
            child.call_id = call_id
            child.cancellation = self.cancellation.child()
            return child
        return ToolContext(
            session_id=self.session_id,
            trace_id=self.trace_id,
            call_id=call_id,
            state=self.state,
            deps=self.deps,
            cancellation=self.cancellation.child(),
            progress_callback=self.progress_callback,
            extras=self.extras,
            output_sink=self.output_sink,
            tool_call_approved=self.tool_call_approved,
            tool_call_cleared=self.tool_call_cleared,
        )

    def __repr__(self) -> str:
        return (
            f"ToolContext(session_id={self.session_id!r}, trace_id={self.trace_id!r}, "
            f"call_id={self.call_id!r}, cancelled={self.cancelled})"
        )
