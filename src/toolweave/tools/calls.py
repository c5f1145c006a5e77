"""The one call chain: how every governed tool call runs, whoever asked for it.

A `ToolCall` is the per-call object every stage reads (name, call id, arguments, the tool, its
context, the time budget of running it). A `CallMiddleware` is `async def __call__(call, next)`:
it may refuse the call by raising, rewrite `call.args`, run `next(call)` once or more, and add
`notes` (text the caller shows beside the result) or a `stop` (an error that ends the caller's
run once this call is recorded). `chain(middlewares, terminal)` nests them, the first outermost,
around the terminal, `ToolRegistry.run_call`, which is `ToolRegistry.invoke`: the only place
where an exception raised by a tool becomes a tool outcome (a `ToolInvocation`).

The agent's turns, a slash command's `!` and `@` lines and the tools `toolweave serve` publishes
all build their chain from these pieces (governance, accounting, the agent's events), so a call
is governed, timed and recorded the same way on every path. The timeout rule: `call.timeout`
bounds running the tool (the terminal applies it), never a middleware's wait for a person.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from toolweave.tools.base import Tool
from toolweave.tools.context import ToolContext
from toolweave.tools.errors import ToolError
from toolweave.tools.result import ToolResult

__all__ = [
    "ROUNDS_EXTRA",
    "CallHandler",
    "CallMiddleware",
    "CallRounds",
    "ToolCall",
    "ToolInvocation",
    "call_rounds",
    "chain",
]

ROUNDS_EXTRA = "call_rounds"
"""The `ToolContext.extras` key under which a transport shares the call's `CallRounds`."""


@dataclass(slots=True)
class ToolInvocation:
    """The record of one call: what was asked, what came back, how long it took."""

    name: str
    call_id: str | None
    args: dict[str, Any] | str | bytes | None
    result: ToolResult
    error: ToolError | None
    duration: float

    @property
    def ok(self) -> bool:
        return self.error is None and not self.result.is_error


@dataclass(slots=True)
class ToolCall:
    """One call on its way through the chain.

    `args` are the arguments as asked (a dict, or the model's JSON text; middlewares may replace
    them, e.g. with a hook's rewrite); `tool` is None for a name nothing registered (the
    terminal answers with what exists); `timeout` is the seconds running the tool may take
    (None: the tool's own limit only). `notes`, `stop` and `invocation` are written on the way
    back: text to show beside the result, an error that ends the caller's run, and the last
    record the terminal produced (kept when a middleware refuses after the tool ran).
    """

    name: str
    call_id: str | None
    args: dict[str, Any] | str | bytes | None
    tool: Tool | None
    ctx: ToolContext
    timeout: float | None = None
    notes: list[str] = field(default_factory=list)
    stop: Exception | None = None
    invocation: ToolInvocation | None = None


@dataclass(slots=True)
class CallRounds:
    """One call that may pause for its client's answers and go on in a later request (an MCP
    2026-07-28 input-required round: the client retries the call with the answers).

    `continued` is False in the first round and True in each retry that continues the call;
    `memo` (JSON values only) travels from round to round, sealed in the request state, so a
    stage that did its part in an earlier round (counted the call, ran a PreToolUse hook) does
    not do it again; `paused` is set when this round ends with a question, not an outcome.
    """

    continued: bool = False
    memo: dict[str, Any] = field(default_factory=dict)
    paused: bool = False


def call_rounds(ctx: ToolContext) -> CallRounds | None:
    """The rounds of the call `ctx` belongs to, or None when its transport has no rounds."""
    rounds = ctx.extras.get(ROUNDS_EXTRA)
    return rounds if isinstance(rounds, CallRounds) else None


CallHandler = Callable[[ToolCall], Awaitable[ToolInvocation]]
"""Runs a call to its record: the terminal, or the terminal wrapped by middlewares."""


class CallMiddleware(Protocol):
    """One stage of the chain: do something around `next(call)` (see the module docstring)."""

    async def __call__(self, call: ToolCall, next: CallHandler) -> ToolInvocation: ...


def chain(middlewares: Sequence[CallMiddleware], terminal: CallHandler) -> CallHandler:
    """`terminal` wrapped by `middlewares`, the first outermost (it sees the call first)."""
    handler = terminal
    for middleware in reversed(middlewares):
        handler = partial(middleware, next=handler)
    return handler
