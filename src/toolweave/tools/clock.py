"""A timeout that stops while a person is asked: the rule of the call chain (a tool's timeout
covers running the tool, never the wait for a person) in one mechanism.

Two timers use it: a timed tool call's deadline (`ToolRegistry` sets `ToolContext.call_timer`,
a `RequestClock` over the call's `asyncio.timeout` scope, `TimeoutTimer`; the tool waits inside
`ToolContext.waiting_for_person()`), and an MCP request in flight (`JSONRPCPeer.request(clock=)`).

An MCP request's `timeout` (restarted by progress) and `max_timeout` bound the peer's work. A call a
gateway forwards can also wait for a person: the downstream server asks something (an
elicitation, a sampling or roots request) that only the upstream client's user can answer, and
that wait is not the downstream server's work (the rule of the call chain: a tool's timeout
covers running the tool, never the wait for a person). Whoever sent the request stops its clock
for that wait:

    clock = RequestClock()
    task = asyncio.ensure_future(peer.request("tools/call", params, timeout=30, clock=clock))
    ...
    with clock.stopped():        # the person is being asked
        answer = await ask_the_person()

While at least one `stopped()` block is open neither the timeout nor the `max_timeout`
deadline runs; when the last one closes the timeout starts again in full (as progress restarts
it) and the deadline moves by the time stopped. What bounds the person's wait is the question's
own timeout (the elicitation timeout, or a gateway's `held_call_ttl`), not the request's. A
tool call's deadline, once the last block closes, gives the tool the time it had left.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

__all__ = ["ClockTimer", "RequestClock", "TimeoutTimer"]


class ClockTimer(Protocol):
    """The peer's timer of one request in flight (what a `RequestClock` stops and restarts)."""

    def stop(self) -> None: ...

    def restart(self, stopped_for: float) -> None: ...


class RequestClock:
    """Stops a request's timeout while the sender waits on something that is not the peer's
    work; hand it to `JSONRPCPeer.request(clock=...)` (or `MCPClient.request`). It may be made
    before the request is sent and used for several requests in turn (the rounds of one call)."""

    __slots__ = ("_since", "_stops", "_timer")

    def __init__(self) -> None:
        self._stops = 0
        self._since = 0.0
        self._timer: ClockTimer | None = None

    @property
    def is_stopped(self) -> bool:
        return self._stops > 0

    def attach(self, timer: ClockTimer) -> None:
        """The request was sent (the peer calls this): a clock already stopped keeps it still."""
        self._timer = timer
        if self._stops:
            self._since = asyncio.get_running_loop().time()
            timer.stop()

    def detach(self) -> None:
        """The request ended (the peer calls this)."""
        self._timer = None

    @contextmanager
    def stopped(self) -> Iterator[None]:
        """The request's clock does not run inside this block (blocks may overlap)."""
        loop = asyncio.get_running_loop()
        self._stops += 1
        if self._stops == 1:
            self._since = loop.time()
            if self._timer is not None:
                self._timer.stop()
        try:
            yield
        finally:
            self._stops -= 1
            if self._stops == 0 and self._timer is not None:
                self._timer.restart(loop.time() - self._since)


class TimeoutTimer:
    """A `ClockTimer` over an `asyncio.timeout` scope: stopped, the deadline is lifted and the
    time left kept; restarted, the deadline is that much time from now."""

    __slots__ = ("_left", "_scope")

    def __init__(self, scope: asyncio.Timeout) -> None:
        self._scope = scope
        self._left: float | None = None

    def stop(self) -> None:
        when = self._scope.when()
        self._left = None if when is None else max(when - asyncio.get_running_loop().time(), 0.0)
        with contextlib.suppress(RuntimeError):  # the call has already ended
            self._scope.reschedule(None)

    def restart(self, stopped_for: float) -> None:
        if self._left is not None:
            with contextlib.suppress(RuntimeError):
                self._scope.reschedule(asyncio.get_running_loop().time() + self._left)
