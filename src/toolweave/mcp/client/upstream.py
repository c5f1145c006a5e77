"""Questions a downstream server asks during a call, put to the client that made the call.

A gateway (`toolweave serve` with `[mcpServers]`) calls a downstream tool on behalf of an
upstream client's call. When the downstream server asks something in the middle of it
(`elicitation/create`, form or URL mode), only that upstream client can answer. The proxied
tool runs its downstream call inside `asking_caller(ask)`, where `ask(method, params)` puts a
question to the upstream call's client (the server `Context.ask_caller`); an `MCPClient` made
with `forward_questions=True` sends the questions of its calls there:

- a 2026-07-28 downstream server returns its questions as `inputRequests`, answered in the
  calling task itself, so the call's own `ask` is used (exact);
- a 2025-11-25 downstream server sends a request on its session, handled by the client's reader
  task: it goes to the `ask` of the one call in flight on that client; with several in flight the
  question cannot be tied to its call and is refused (-32603, naming why).

When the upstream client cannot be asked (it declared no elicitation, or a 2026 call needs a new
round), `ask` raises: the error goes back to the downstream server, and a pending 2026 round
(`InputRequired`) also ends the downstream call and pauses the upstream one; the retry runs the
downstream call again and its repeated question finds the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from toolweave.mcp.shared.errors import INTERNAL_ERROR, InputRequired, JSONRPCError

__all__ = ["FORWARDED_METHODS", "Asker", "CallerRoutes", "asking_caller"]

Asker = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""Puts one server request (`method`, `params`) to the upstream caller; returns its answer."""

FORWARDED_METHODS = frozenset({"elicitation/create"})
"""What a forwarding client sends on to the caller (the rest is answered by its own callbacks)."""

_CALLER: ContextVar[Asker | None] = ContextVar("toolweave_mcp_caller", default=None)


@contextmanager
def asking_caller(ask: Asker | None) -> Iterator[None]:
    """Run the calls made inside with `ask` as where their server's questions go."""
    token = _CALLER.set(ask)
    try:
        yield
    finally:
        _CALLER.reset(token)


def current_caller() -> Asker | None:
    """The `ask` of the call running in this task, if it is a forwarded one."""
    return _CALLER.get()


@dataclass(eq=False, slots=True)
class _Call:
    ask: Asker
    paused: asyncio.Future[InputRequired] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


class CallerRoutes:
    """One forwarding client's calls in flight, and where their questions go."""

    def __init__(self) -> None:
        self._calls: list[_Call] = []

    async def run(self, request: Awaitable[dict[str, Any]]) -> dict[str, Any]:
        """Send a call (`request`), its questions going to the caller of this task; a question
        that needs a new 2026 round upstream stops the call and raises its `InputRequired`."""
        ask = _CALLER.get()
        if ask is None:
            return await request
        entry = _Call(ask)
        self._calls.append(entry)
        call = asyncio.ensure_future(request)
        waits: set[asyncio.Future[Any]] = {call, entry.paused}
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._calls.remove(entry)
            if not call.done():
                call.cancel()  # paused (or cancelled): the downstream hears notifications/cancelled
                with contextlib.suppress(asyncio.CancelledError):
                    await call
        if entry.paused.done():
            raise entry.paused.result()
        return call.result()

    async def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Put a server's question to the caller of the call it belongs to."""
        ask = _CALLER.get()
        entry: _Call | None = None
        if ask is None:
            if len(self._calls) != 1:
                raise JSONRPCError(
                    INTERNAL_ERROR,
                    f"{method} cannot be forwarded: "
                    + (
                        "no call is in flight"
                        if not self._calls
                        else f"{len(self._calls)} calls are in flight and a 2025-11-25 request "
                        "does not say which one it belongs to"
                    ),
                )
            entry = self._calls[0]
            ask = entry.ask
        try:
            return await ask(method, params)
        except InputRequired as exc:
            if entry is not None and not entry.paused.done():
                entry.paused.set_result(exc)  # the call ends; the upstream round begins
            raise
