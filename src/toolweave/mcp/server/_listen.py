"""Change notifications for both MCP eras: session broadcasts and `subscriptions/listen` streams.

Why two paths: a 2025-11-25 client opened a session with `initialize`, so list changes are
broadcast on that session. A 2026-07-28 client has no session; it sends a long-lived
`subscriptions/listen` request naming the notifications it wants, and the request's own answer
channel (the stdio pipe, or the SSE response of its POST) carries them, each stamped with the
request's id under `_meta["io.modelcontextprotocol/subscriptionId"]`. The server acknowledges
first (`notifications/subscriptions/acknowledged`, with the subset it honors), never sends a type
the client did not ask for, and ends a stream it tears down (shutdown, stdin EOF) with the
spec's graceful result `{"resultType": "complete", "_meta": {subscriptionId}}`. The client ends
one by cancelling the request (`notifications/cancelled` on stdio, closing the SSE stream on
HTTP), which cancels the handler here.

Publishing never waits for a listener: each stream has its own queue, drained by the listen
request's task, and a change already queued is not queued twice (list changes are level
triggers), so a stalled client costs at most one entry per notification type.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from toolweave.mcp.shared.constants import (
    META_SUBSCRIPTION_ID,
    PROMPTS_CHANGED,
    RESOURCE_UPDATED,
    RESOURCES_CHANGED,
    TASK_STATUS,
    TOOLS_CHANGED,
)
from toolweave.mcp.shared.errors import INVALID_PARAMS, METHOD_NOT_FOUND, JSONRPCError
from toolweave.mcp.shared.jsonrpc import RequestContext

if TYPE_CHECKING:
    from toolweave.mcp.server._session import ServerSession
    from toolweave.mcp.server._tasks import TaskManager

logger = logging.getLogger("toolweave.mcp.server")

ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
#: The filter flag that opts in to each list-changed notification, and the capability behind it.
_LIST_FLAGS = {
    TOOLS_CHANGED: ("toolsListChanged", "tools"),
    PROMPTS_CHANGED: ("promptsListChanged", "prompts"),
    RESOURCES_CHANGED: ("resourcesListChanged", "resources"),
}
#: Seconds of silence after which an HTTP listen stream gets an SSE comment (`:`), so proxies
#: and idle timeouts do not cut a quiet stream (the spec encourages it).
KEEPALIVE_SECONDS = 15.0
#: Most task ids one listen stream may follow (a bound on what a client makes the server track).
MAX_LISTEN_TASK_IDS = 100


class Subscription:
    """One open `subscriptions/listen` request and the notifications it opted in to."""

    __slots__ = ("ctx", "flags", "pending", "queue", "session", "task_ids", "tasks", "uris")

    def __init__(
        self,
        session: ServerSession,
        ctx: RequestContext,
        flags: set[str],
        uris: list[str],
        tasks: TaskManager,
        task_ids: list[str] | None = None,
    ) -> None:
        self.session = session
        self.ctx = ctx
        self.flags = flags
        self.uris = uris
        self.tasks = tasks  # where a followed task's status is read
        self.task_ids = task_ids or []
        self.queue: asyncio.Queue[tuple[str, str | None] | None] = asyncio.Queue()
        self.pending: set[tuple[str, str | None]] = set()

    @property
    def id(self) -> Any:
        return self.ctx.id

    def offer(self, method: str, uri: str | None) -> None:
        """Queue a change this stream asked for (at most once until it is sent)."""
        if method == RESOURCE_UPDATED:
            if uri not in self.uris:
                return
        elif method == TASK_STATUS:
            if uri not in self.task_ids:
                return
        elif _LIST_FLAGS[method][0] not in self.flags:
            return
        key = (method, uri)
        if key not in self.pending:
            self.pending.add(key)
            self.queue.put_nowait(key)

    async def serve(self) -> None:
        """Deliver queued changes until `end()` (or until the client cancels the request)."""
        keepalive: Callable[[], None] | None = getattr(self.ctx.transport, "keepalive", None)
        while True:
            try:
                async with asyncio.timeout(KEEPALIVE_SECONDS if keepalive else None):
                    item = await self.queue.get()
            except TimeoutError:
                if keepalive is not None:  # HTTP: an SSE comment keeps the stream open
                    keepalive()
                continue
            if item is None:
                return
            self.pending.discard(item)
            method, uri = item
            params: dict[str, Any] = {"_meta": {META_SUBSCRIPTION_ID: self.id}}
            if method == TASK_STATUS and uri is not None:  # the task as it is now
                task = await self.tasks.snapshot(uri, self.session.principal or "")
                if task is None:
                    continue
                params.update(task)
            elif uri is not None:
                params["uri"] = uri
            await self.ctx.notify(method, params)

    def end(self) -> None:
        self.queue.put_nowait(None)


class ChangeFeed:
    """The server's open listen streams, plus the legacy-session broadcast."""

    def __init__(self) -> None:
        self.open: list[Subscription] = []
        # Called with each change published here, to pass it to other replicas
        # (`PostgresChangeRelay`); what they pass back arrives through `deliver`.
        self.relays: list[Callable[[str, str | None], None]] = []

    async def listen(
        self,
        session: ServerSession,
        params: dict[str, Any],
        ctx: RequestContext,
        *,
        capabilities: dict[str, Any],
        tasks: TaskManager,
    ) -> dict[str, Any]:
        """The `subscriptions/listen` handler: acknowledge, stream changes, end gracefully.
        `capabilities` are the server's (what it can report on), `tasks` its task runner."""
        if not session.is_modern(ctx.meta):
            raise JSONRPCError(
                METHOD_NOT_FOUND,
                "Method not found: subscriptions/listen is a 2026-07-28 request (send "
                "_meta['io.modelcontextprotocol/protocolVersion']); a 2025-11-25 session "
                "receives list changes without it",
            )
        requested = params.get("notifications")
        flags, uris = _honored(requested, capabilities)
        task_ids = await tasks.owned(_task_ids(requested), session.principal or "")
        subscription = Subscription(session, ctx, flags, uris, tasks, task_ids)
        self.open.append(subscription)  # before the ack: a change made meanwhile is queued
        meta = {META_SUBSCRIPTION_ID: ctx.id}
        try:
            acknowledged: dict[str, Any] = {flag: True for flag in sorted(flags)}
            if uris:
                acknowledged["resourceSubscriptions"] = list(uris)
            if task_ids:
                acknowledged["taskIds"] = list(task_ids)
            await ctx.notify(ACKNOWLEDGED, {"_meta": meta, "notifications": acknowledged})
            await subscription.serve()
        finally:
            self.open.remove(subscription)
        return {"_meta": meta}

    def publish(self, method: str, uri: str | None = None) -> None:
        self.deliver(method, uri)
        for relay in self.relays:
            relay(method, uri)

    def deliver(self, method: str, uri: str | None = None) -> None:
        """Queue a change on this process's listen streams only (one a relay received)."""
        for subscription in self.open:
            subscription.offer(method, uri)

    def end(self, which: Callable[[ServerSession], bool] = lambda session: True) -> None:
        """End the matching streams gracefully: each answers its listen request and closes."""
        for subscription in self.open:
            if which(subscription.session):
                subscription.end()

    async def broadcast(
        self, sessions: Iterable[ServerSession], method: str, params: dict[str, Any] | None
    ) -> None:
        """Notify each 2025-era session; one that went away is skipped, never stopping the rest.

        A session a 2026-07-28 client uses (stdio without `initialize`) gets nothing here: it
        asked for changes on its listen stream, and unrequested notifications are forbidden.
        """
        for session in list(sessions):
            peer = session.peer
            if not session.legacy_client or peer is None or peer.closed:
                continue
            try:
                await peer.notify(method, params)
            except Exception as exc:  # a closed pipe or socket: that client is gone
                logger.debug("could not send %s to session %s: %s", method, session.session_id, exc)


def _task_ids(requested: Any) -> list[str]:
    """The tasks a listen request follows (SEP-2663 `taskIds`), checked and bounded (`requested`
    passed `_honored`: it is a dict)."""
    task_ids = requested.get("taskIds", []) if isinstance(requested, dict) else []
    if not isinstance(task_ids, list) or not all(isinstance(t, str) for t in task_ids):
        raise JSONRPCError(
            INVALID_PARAMS, "params.notifications.taskIds must be a list of task id strings"
        )
    if len(task_ids) > MAX_LISTEN_TASK_IDS:
        raise JSONRPCError(
            INVALID_PARAMS,
            f"params.notifications.taskIds lists {len(task_ids)} tasks; follow at most "
            f"{MAX_LISTEN_TASK_IDS} per subscriptions/listen stream (open another for more)",
        )
    return list(dict.fromkeys(task_ids))


def _honored(requested: Any, capabilities: dict[str, Any]) -> tuple[set[str], list[str]]:
    """The requested filter cut down to what this server supports (spec: unsupported types are
    left out of the acknowledgment); a malformed filter is an error naming the field."""
    if not isinstance(requested, dict):
        raise JSONRPCError(
            INVALID_PARAMS,
            "subscriptions/listen needs params.notifications, an object such as "
            '{"toolsListChanged": true, "resourceSubscriptions": ["file:///a.txt"]}',
        )
    flags: set[str] = set()
    for flag, capability in _LIST_FLAGS.values():
        value = requested.get(flag, False)
        if not isinstance(value, bool):
            raise JSONRPCError(
                INVALID_PARAMS,
                f"params.notifications.{flag} must be true or false, not {value!r}",
            )
        if value and isinstance(capabilities.get(capability), dict):
            flags.add(flag)
    uris = requested.get("resourceSubscriptions", [])
    if not isinstance(uris, list) or not all(isinstance(uri, str) for uri in uris):
        raise JSONRPCError(
            INVALID_PARAMS,
            "params.notifications.resourceSubscriptions must be a list of resource URI strings",
        )
    if not isinstance(capabilities.get("resources"), dict):
        uris = []  # a server without resources has nothing to report on
    return flags, list(dict.fromkeys(uris))
