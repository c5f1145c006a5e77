"""Questions a downstream server asks during a call, put to the client that made the call.

A gateway (`toolweave serve` with `[mcpServers]`) calls a downstream tool on behalf of an
upstream client's call. When the downstream server asks something in the middle of it
(`elicitation/create` in form or URL mode, `sampling/createMessage`, `roots/list`), only that
upstream client can answer. The proxied
tool runs its downstream call inside `asking_caller(caller, rounds)`, where the `Caller` (the
server `Context` of the upstream call) puts a question to its client (`ask_caller(method,
params, key)`) or tells it something (`notify_caller(method, params)`); an `MCPClient` made
with `forward_questions=True` sends the questions of its calls there:

- a 2026-07-28 downstream server returns its questions as `inputRequests`, answered in the
  calling task itself, so the call's own `ask` is used (exact);
- a 2025-11-25 downstream server sends a request on its session, handled by the client's reader
  task: it goes to the `ask` of the one call in flight on that client; with several in flight the
  question cannot be tied to its call and is refused (-32603, naming why). A held call (below)
  still runs downstream and counts as in flight: a question then is never put to another
  caller, and one when it is the only call waits for its caller's retried round.

A URL-mode question's completion (`notifications/elicitation/complete`, which a downstream
server may send once the person finished on the page) goes to the caller the question went to,
on the upstream request of that call (its response stream, in both eras); one that arrives
while the call is held is passed on when the retried round resumes it, and one for a call that
has ended is dropped (the upstream request that could carry it is answered).

When the upstream client can only be asked in a new 2026 round (`ask` raises `InputRequired`),
the downstream call is *held*, not ended: its question waits, the upstream call pauses with an
input-required result, and a nonce naming the held call is sealed in that result's
`requestState` (the call's `CallRounds.memo`). The retried round finds the held call by that
nonce, answers its question and goes on with the same downstream call, so a downstream tool
that changed something before asking does not do it again. At most `max_held_calls` calls are
held, at most `max_held_calls_per_client` of them for one client (keyed by
`toolweave.tools.clients.client_key`: its principal, else its address), so one client cannot
fill the gateway for the others; each is held for at most `held_call_ttl` seconds (then the
downstream call is cancelled). A retry whose call is not held here (expired, or the state
reached another replica) is refused, never run again.
The wait for the caller's answer is not the downstream server's work, so it does not count
against the downstream request's timeout (`MCPClient(timeout=...)`, 30 s by default, restarted by
progress): the request's `RequestClock` is stopped while a question is pending and restarts in
full when it is answered. The wait is bounded by the question's own timeout instead: the
elicitation (or sampling) timeout of a 2025 caller's request, `held_call_ttl` for a held call.
Other refusals (the client did not declare the capability the question needs: -32021 naming
it) go back to the downstream server as its request's error.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolweave.mcp.shared.constants import ELICITATION_COMPLETE
from toolweave.mcp.shared.errors import INTERNAL_ERROR, InputRequired, JSONRPCError
from toolweave.tools.calls import CallRounds
from toolweave.tools.clock import RequestClock

__all__ = [
    "DEFAULT_HELD_CALL_TTL",
    "DEFAULT_MAX_HELD_CALLS",
    "DEFAULT_MAX_HELD_CALLS_PER_CLIENT",
    "FORWARDED_METHODS",
    "HELD_MEMO_KEY",
    "Caller",
    "CallerRoutes",
    "asking_caller",
]


class Caller(Protocol):
    """The upstream side of a proxied call (the server `Context` of that call)."""

    async def ask_caller(
        self, method: str, params: dict[str, Any], key: str | None = None
    ) -> dict[str, Any]:
        """Put one server request to the caller (named `key` in an input-required round)."""
        ...

    async def notify_caller(self, method: str, params: dict[str, Any]) -> None:
        """Send the caller a notification about its call."""
        ...


FORWARDED_METHODS = frozenset({"elicitation/create", "sampling/createMessage", "roots/list"})
"""What a forwarding client sends on to the caller (the rest is answered by its own callbacks)."""

DEFAULT_MAX_HELD_CALLS = 100
"""Most downstream calls one forwarding client holds open for their caller's next round."""
DEFAULT_MAX_HELD_CALLS_PER_CLIENT = 10
"""Most of them held for one upstream client (its `client_key`)."""
DEFAULT_HELD_CALL_TTL = 600.0
"""Seconds a held downstream call waits for its caller's next round before it is cancelled."""
HELD_MEMO_KEY = "gateway.held"
"""The `CallRounds.memo` key of the nonce naming a held downstream call."""
_KEY_PREFIX = "forwarded"


@dataclass(frozen=True, slots=True)
class _Upstream:
    caller: Caller
    rounds: CallRounds | None
    client: str


_CALLER: ContextVar[_Upstream | None] = ContextVar("toolweave_mcp_caller", default=None)


@contextmanager
def asking_caller(
    caller: Caller | None, rounds: CallRounds | None = None, client: str = ""
) -> Iterator[None]:
    """Run the calls made inside with `caller` as where their server's questions go; `rounds`
    (the upstream call's, in the 2026 era) is where a held call's nonce is kept, and `client`
    (the caller's `client_key`) whose share of `max_held_calls_per_client` a held call takes."""
    token = _CALLER.set(_Upstream(caller, rounds, client) if caller is not None else None)
    try:
        yield
    finally:
        _CALLER.reset(token)


@dataclass(eq=False, slots=True)
class _Question:
    method: str
    params: dict[str, Any]
    key: str
    answer: asyncio.Future[dict[str, Any]]


@dataclass(eq=False, slots=True)
class _Call:
    """One downstream call in flight for a caller; it outlives an upstream round when held."""

    caller: Caller
    client: str
    clock: RequestClock = field(default_factory=RequestClock)
    """The downstream request's timeout clock, stopped while a question waits for a person."""
    paused: asyncio.Event = field(default_factory=asyncio.Event)
    pause: InputRequired | None = None
    waiting: list[_Question] = field(default_factory=list)
    asked: int = 0
    url_ids: set[str] = field(default_factory=set)
    """The `elicitationId`s of the URL-mode questions this call asked (for their completion)."""
    notes: list[dict[str, Any]] = field(default_factory=list)
    """Completions that came while the call was held, passed on when it resumes."""


@dataclass(eq=False, slots=True)
class _Held:
    entry: _Call
    call: asyncio.Future[dict[str, Any]]
    expiry: asyncio.TimerHandle


_ENTRY: ContextVar[_Call | None] = ContextVar("toolweave_mcp_call", default=None)


class CallerRoutes:
    """One forwarding client's calls in flight, where their questions go, and the calls held
    between two rounds of their caller (at most `max_held_calls`, `max_held_calls_per_client`
    of them for one upstream client, each `held_call_ttl` s)."""

    def __init__(
        self,
        max_held_calls: int = DEFAULT_MAX_HELD_CALLS,
        held_call_ttl: float = DEFAULT_HELD_CALL_TTL,
        max_held_calls_per_client: int = DEFAULT_MAX_HELD_CALLS_PER_CLIENT,
    ):
        if max_held_calls < 0 or not 0 < held_call_ttl < math.inf:  # nan: a NaN timer deadline
            raise ValueError(
                "max_held_calls must be >= 0 and held_call_ttl a finite number of seconds > 0, "
                f"not {max_held_calls!r} and {held_call_ttl!r}"
            )
        if max_held_calls_per_client < 0:
            raise ValueError(
                f"max_held_calls_per_client must be >= 0, not {max_held_calls_per_client!r}"
            )
        self.max_held_calls = max_held_calls
        self.max_held_calls_per_client = max_held_calls_per_client
        self.held_call_ttl = held_call_ttl
        self._calls: list[_Call] = []
        self._held: OrderedDict[str, _Held] = OrderedDict()

    async def run(self, send: Callable[..., Awaitable[dict[str, Any]]]) -> dict[str, Any]:
        """Send a call (`send(clock=...)`), its questions going to the caller of this task; a
        retried round goes on with the call it held instead (see the module docstring). While
        a question waits for the caller, the call's `RequestClock` is stopped."""
        caller = _CALLER.get()
        if caller is None:
            return await send()
        memo = caller.rounds.memo if caller.rounds is not None else {}
        nonce = memo.pop(HELD_MEMO_KEY, None)
        if nonce is not None:
            entry, call = self._resume(str(nonce), caller.caller)
            waiting, entry.waiting = entry.waiting, []
            notes, entry.notes = entry.notes, []
            try:
                for note in notes:  # completions that came while it was held
                    await entry.caller.notify_caller(ELICITATION_COMPLETE, note)
                for question in waiting:  # asked again under their keys: the retry has answers
                    await self._put(entry, question)
            except BaseException:
                _drop(entry, call)
                raise
        else:
            entry = _Call(caller.caller, caller.client)
            token = _ENTRY.set(entry)  # a 2026 downstream's questions are asked in `call`
            try:
                call = asyncio.ensure_future(send(clock=entry.clock))
            finally:
                _ENTRY.reset(token)
        self._calls.append(entry)
        pause = asyncio.ensure_future(entry.paused.wait())
        waits: set[asyncio.Future[Any]] = {call, pause}
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if not call.done():
                await asyncio.sleep(0)  # questions asked alongside join the same round
        except BaseException:
            _drop(entry, call)  # cancelled: the downstream hears notifications/cancelled
            with contextlib.suppress(asyncio.CancelledError):
                await call
            raise
        finally:
            pause.cancel()
            self._calls.remove(entry)
        if call.done():
            return call.result()
        assert entry.pause is not None
        if caller.rounds is None:  # no round record to name a held call in: end it
            _drop(entry, call)
        else:
            memo[HELD_MEMO_KEY] = self._hold(entry, call)
        raise entry.pause

    async def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Put a server's question to the caller of the call it belongs to; one that must wait
        for the caller's next round keeps waiting (the call is held)."""
        entry = _ENTRY.get()
        held = [h.entry for h in self._held.values()]
        if entry is None:
            # A held call still runs downstream and may ask again: it is in flight too.
            in_flight = [*self._calls, *held]
            if len(in_flight) != 1:
                raise JSONRPCError(
                    INTERNAL_ERROR,
                    f"{method} cannot be forwarded: "
                    + (
                        "no call is in flight"
                        if not in_flight
                        else f"{len(in_flight)} calls are in flight ({len(held)} held for their "
                        "caller's next round) and a 2025-11-25 request does not say which one "
                        "it belongs to"
                    ),
                )
            entry = in_flight[0]
        entry.asked += 1
        key = f"{_KEY_PREFIX}-{entry.asked}"
        if params.get("mode") == "url" and isinstance(params.get("elicitationId"), str):
            entry.url_ids.add(params["elicitationId"])
        question = _Question(method, params, key, asyncio.get_running_loop().create_future())
        with entry.clock.stopped():  # the wait for a person is not the downstream's work
            if entry in held:  # its caller is asked when the retried round resumes it
                entry.waiting.append(question)
            else:
                await self._put(entry, question)
            return await question.answer

    async def _put(self, entry: _Call, question: _Question) -> None:
        try:
            answer = await entry.caller.ask_caller(question.method, question.params, question.key)
        except InputRequired as exc:  # the answer comes in the caller's next round
            entry.waiting.append(question)
            entry.pause = exc
            entry.paused.set()
        except asyncio.CancelledError:
            question.answer.cancel()
            raise
        except Exception as exc:
            if not question.answer.done():
                question.answer.set_exception(exc)
        else:
            if not question.answer.done():
                question.answer.set_result(answer)

    def _hold(self, entry: _Call, call: asyncio.Future[dict[str, Any]]) -> str:
        mine = sum(1 for held in self._held.values() if held.entry.client == entry.client)
        if len(self._held) >= self.max_held_calls or mine >= self.max_held_calls_per_client:
            _drop(entry, call)
            raise JSONRPCError(
                INTERNAL_ERROR,
                f"the gateway already holds {len(self._held)} downstream calls waiting for their "
                f"callers' answers (max_held_calls = {self.max_held_calls}), {mine} of them "
                f"yours (max_held_calls_per_client = {self.max_held_calls_per_client}); answer "
                "or abandon those, or try again later",
            )
        nonce = secrets.token_urlsafe(16)
        expiry = asyncio.get_running_loop().call_later(self.held_call_ttl, self._expire, nonce)
        self._held[nonce] = _Held(entry, call, expiry)
        return nonce

    def _expire(self, nonce: str) -> None:
        held = self._held.pop(nonce, None)
        if held is not None:
            _drop(held.entry, held.call)

    def _resume(self, nonce: str, caller: Caller) -> tuple[_Call, asyncio.Future[dict[str, Any]]]:
        held = self._held.pop(nonce, None)
        if held is None:
            raise JSONRPCError(
                INTERNAL_ERROR,
                "the downstream call this requestState continues is not held here: it waited "
                f"longer than held_call_ttl ({self.held_call_ttl:g} s), or the retry reached "
                "another replica than the first round; it is not run again, so call again "
                "without requestState to start over",
            )
        held.expiry.cancel()
        entry = held.entry
        entry.caller, entry.pause = caller, None
        entry.paused.clear()
        return entry, held.call

    async def relay(self, method: str, params: dict[str, Any]) -> None:
        """Pass a URL-mode completion on to the caller whose question it completes."""
        elicitation_id = params.get("elicitationId")
        for entry in self._calls:
            if elicitation_id in entry.url_ids:
                await entry.caller.notify_caller(method, params)
                return
        for held in self._held.values():
            if elicitation_id in held.entry.url_ids:
                held.entry.notes.append(params)
                return

    def close(self) -> None:
        """Cancel every held call (the client is closing)."""
        for held in self._held.values():
            held.expiry.cancel()
            _drop(held.entry, held.call)
        self._held.clear()


def _drop(entry: _Call, call: asyncio.Future[dict[str, Any]]) -> None:
    """End a downstream call: cancel it and fail its questions still waiting for answers."""
    call.cancel()
    for question in entry.waiting:
        if not question.answer.done():
            question.answer.set_exception(
                JSONRPCError(INTERNAL_ERROR, "the call this question belongs to has ended")
            )
    entry.waiting.clear()
