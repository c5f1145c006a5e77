"""The web console of `toolweave serve --http`: a small page on the same Starlette app.

`/console` shows the published tools and the downstream MCP servers with their status, the live
MCP sessions, the query log (`/console/api/queries?tool=&client=&since=&outcome=`), the approval
decisions with who decided (`/console/api/audit`), the pending approvals (an admin approves or
denies them in the browser) and a usage page with charts drawn by Chart.js, which ships inside
the package (no CDN). The page itself holds no data; its JSON API under `/console/api/` has the
Host and Origin checks of `/mcp` and its own credential: the console is the person's, not the
clients', so it needs the console token (`[serve].console_token`, or a fresh one made at start
and printed once), always, loopback included, and an MCP client's token never opens it (so a
client cannot approve its own admin-only call). The browser sends the console token from the
page's `#token=...` fragment, which never reaches the server. A request body over
`max_body_bytes` is refused (413) before it is parsed.

`ConsoleApprovals` is an approver, `async (request) -> bool | "always"`: give it to whatever
asks for approvals (`Governance(approver=console.approvals)`, the host's gates) and each request
waits in the console's queue until an admin answers, `timeout` passes (denied) or the queue is
full (denied at once: fail closed). With a `queue` (`PostgresApprovalQueue`, what
`[serve].store_dsn` gives `toolweave serve`) the requests of every replica are listed, capped
and answered together, and every decision is kept as the audit (`approval_queue.py`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import hmac
import itertools
import json
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias

from toolweave._bounded import read_bounded
from toolweave.errors import ConfigError
from toolweave.host.config import DEFAULT_MAX_PENDING_PER_CLIENT
from toolweave.host.console.log import QuerySource, row_json, usage_summary
from toolweave.host.governed import unwrapped

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

    from toolweave.accounting.calls import CallAccounting
    from toolweave.host.config import HostConfig
    from toolweave.host.console.approval_queue import PostgresApprovalQueue
    from toolweave.host.providers.base import CapabilityProvider
    from toolweave.mcp.server import MCPServer

CONSOLE_PATH = "/console"
DEFAULT_APPROVAL_TIMEOUT = 300.0
"""Seconds a request waits in the console for an admin before it is denied."""
DEFAULT_MAX_PENDING = 100
"""Requests the console queues at once; more are denied immediately."""
DEFAULT_QUERY_ROWS = 200
"""Rows the query page and the usage charts read."""
MAX_QUERY_ROWS = 5000
"""The most rows one API call may ask for (`?limit=`)."""
QUERY_FILTERS = ("tool", "client", "since", "until", "outcome")
"""What `/console/api/queries` filters by (`QueryLog.search`)."""
AUDIT_FILTERS = ("tool", "requester", "decided_by", "since", "until")
"""What `/console/api/audit`, the approval decisions, filters by (`QueryLog.approvals`)."""

Decision = Literal["approve", "deny", "always"]
_Handler: TypeAlias = "Callable[[Request], Awaitable[Response]]"
_ANSWERS: dict[str, bool | Literal["always"]] = {"approve": True, "deny": False, "always": "always"}
_STATIC = {
    "": ("index.html", "text/html; charset=utf-8"),
    "console.js": ("console.js", "text/javascript; charset=utf-8"),
    "console.css": ("console.css", "text/css; charset=utf-8"),
    "chart.umd.min.js": ("chart.umd.min.js", "text/javascript; charset=utf-8"),
}


@dataclass(slots=True)
class PendingApproval:
    """One request waiting for an admin; `request` is the governance `ApprovalRequest`."""

    id: str
    request: Any
    created: float
    answer: asyncio.Future[bool | Literal["always"]] = field(repr=False)

    def as_json(self) -> dict[str, Any]:
        request = self.request
        return {
            "id": self.id,
            "tool_name": getattr(request, "tool_name", "?"),
            "args": getattr(request, "args", {}),
            "reason": getattr(request, "reason", ""),
            "session_id": getattr(request, "session_id", None),
            "requester": getattr(request, "requester", None),
            "kind": getattr(request, "kind", "user"),
            "call_id": getattr(request, "call_id", None),
            "created": self.created,
        }


class ConsoleApprovals:
    """An approver whose answers come from the console's approval page."""

    def __init__(
        self, *, timeout: float = DEFAULT_APPROVAL_TIMEOUT, max_pending: int = DEFAULT_MAX_PENDING,
        max_pending_per_client: int = DEFAULT_MAX_PENDING_PER_CLIENT,
        queue: PostgresApprovalQueue | None = None,
    ) -> None:  # fmt: skip
        if timeout <= 0 or max_pending <= 0 or max_pending_per_client <= 0:
            raise ConfigError(
                "ConsoleApprovals(timeout=..., max_pending=..., max_pending_per_client=...) "
                "must be positive"
            )
        self.timeout = timeout
        self.max_pending = max_pending
        self.max_pending_per_client = max_pending_per_client
        self._pending: dict[str, PendingApproval] = {}
        self._ids = itertools.count(1)
        self._changed = asyncio.Event()
        self.queue = queue
        if queue is not None:
            queue.attach(self.answer)  # an answer given on any replica's console

    async def __call__(self, request: Any) -> bool | Literal["always"]:
        client = _client_of(request)
        queue = self.queue
        if queue is not None:
            if await queue.full(client, self.max_pending, self.max_pending_per_client):
                return False
        else:
            mine = sum(1 for item in self._pending.values() if _client_of(item.request) == client)
            if len(self._pending) >= self.max_pending or mine >= self.max_pending_per_client:
                return False
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bool | Literal["always"]] = loop.create_future()
        approval_id = str(next(self._ids)) if queue is None else secrets.token_hex(8)
        item = PendingApproval(approval_id, request, time.time(), future)
        self._pending[item.id] = item
        if queue is not None:
            await queue.add(item.id, client, item.as_json())
        self._notify()
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.timeout)
        except TimeoutError:
            late = await queue.expire(item.id) if queue is not None else None
            return _ANSWERS.get(late or "", False)  # an answer given as the time ran out
        finally:
            self._pending.pop(item.id, None)
            self._notify()

    def pending(self) -> list[PendingApproval]:
        return list(self._pending.values())

    def answer(self, approval_id: str, decision: str) -> bool:
        """Resolve a request pending in this process; False when it is no longer pending."""
        item = self._pending.get(approval_id)
        if item is None or item.answer.done() or decision not in _ANSWERS:
            return False
        item.answer.set_result(_ANSWERS[decision])
        return True

    async def listing(self) -> list[dict[str, Any]]:
        """What the console lists: the pending requests (of every replica, with a queue)."""
        if self.queue is not None:
            return await self.queue.pending()
        return [item.as_json() for item in self.pending()]

    async def history(self, limit: int) -> list[dict[str, Any]]:
        """The audit, newest first: decided requests with who decided, from where and when
        (kept by the queue; an in-process console keeps none)."""
        return await self.queue.history(limit) if self.queue is not None else []

    async def decide(self, approval_id: str, decision: Decision, by: str) -> bool:
        """An admin's answer, from the console (`by`: who, from where; kept by the queue's
        audit); False when the request is no longer pending."""
        if self.queue is not None:
            return await self.queue.decide(approval_id, decision, by)
        return self.answer(approval_id, decision)

    async def wait_pending(self, count: int = 1) -> list[PendingApproval]:
        """Wait until at least `count` requests are pending (for tests and scripts)."""
        while len(self._pending) < count:
            await self._changed.wait()
        return self.pending()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()


def _client_of(request: Any) -> str:
    """Whose request this is: the requester (the host's client key), else its session."""
    return str(getattr(request, "requester", None) or getattr(request, "session_id", None))


class ConsoleHost(Protocol):
    """What the console reads of a running host (`ToolHost` is one)."""

    @property
    def config(self) -> HostConfig: ...

    @property
    def accounting(self) -> CallAccounting: ...

    @property
    def server(self) -> MCPServer: ...

    @property
    def url(self) -> str: ...

    @property
    def providers(self) -> list[CapabilityProvider]: ...


class Console:
    """The console's data, read from a running `ToolHost` (a `ConsoleHost`)."""

    def __init__(
        self,
        host: ConsoleHost,
        *,
        approvals: ConsoleApprovals | None = None,
        query_log: QuerySource | None = None,
    ) -> None:
        self.host = host
        self.approvals = approvals if approvals is not None else ConsoleApprovals()
        configured = host.config.console_token
        #: The console's credential; `generated` when made here (print it once, at start).
        self.token = configured or secrets.token_urlsafe(24)
        self.generated = configured is None
        self._query_log = query_log
        self._endpoint: Any = None  # the Streamable HTTP endpoint, for its sessions

    async def _rows(self, limit: int) -> list[Any]:
        """The newest `limit` rows: of `query_log`, else the host's own query log (none when
        `[serve].query_log` is off)."""
        source = self._query_log or self.host.accounting.query_log()
        return list(await source.recent(limit)) if source is not None else []

    async def overview(self) -> dict[str, Any]:
        host = self.host
        server = host.server
        await server.load_tool_sources()
        tools = []
        for name in server.tool_names():
            entry = server.tool_entry(name)
            inner = unwrapped(entry.tool()) if entry is not None else None
            annotations = getattr(inner, "annotations", None)
            tools.append(
                {
                    "name": name,
                    "description": getattr(inner, "description", "") or "",
                    "server": getattr(inner, "server", None),
                    "read_only": bool(getattr(annotations, "read_only", False)),
                    "destructive": bool(getattr(annotations, "destructive", False)),
                    "status": "published",
                }
            )
        return {
            "name": host.config.name,
            "url": host.url,
            "providers": [p.name for p in host.providers],
            "tools": tools,
            "servers": self._servers(),
            "sessions": self._sessions(),
        }

    def _servers(self) -> list[dict[str, Any]]:
        out = []
        for provider in self.host.providers:
            manager = getattr(provider, "manager", None)
            for name, state in sorted(getattr(manager, "servers", {}).items()):
                status = "connected" if state.connected else "error" if state.error else "pending"
                tools = len(state.tools)
                out.append({"name": name, "status": status, "error": state.error, "tools": tools})
        return out

    def _sessions(self) -> list[dict[str, Any]]:
        sessions = getattr(self._endpoint, "sessions", {})
        now = time.monotonic()
        return [
            {
                "id": sid,
                "client": s.session.client_info.get("name", ""),
                "protocol": s.session.protocol_version,
                "idle_s": round(now - s.last_seen, 1),
            }
            for sid, s in sorted(sessions.items())
        ]

    async def queries(self, limit: int, filters: dict[str, str] | None = None) -> list[Any]:
        """The newest `limit` rows as JSON; `filters` (tool, client, since, outcome) read the
        host's own query log (`QueryLog.search`)."""
        if not filters:
            return [row_json(r) for r in await self._rows(limit)]
        log = self.host.accounting.query_log()
        return [row_json(r) for r in await log.search(limit=limit, **filters)] if log else []

    async def audit(self, limit: int, filters: dict[str, str]) -> list[dict[str, Any]]:
        """The newest `limit` approval decisions of the host's audit (`QueryLog.approvals`)."""
        log = self.host.accounting.query_log()
        rows = await log.approvals(limit=limit, **filters) if log is not None else []
        return [dataclasses.asdict(row) for row in rows]

    async def usage(self, limit: int) -> dict[str, Any]:
        return usage_summary(await self._rows(limit))

    def routes(self, endpoint: Any) -> list[BaseRoute]:
        """The console's routes: the Origin and Host checks of `endpoint` (the `/mcp` Streamable
        HTTP app) for the page and the API, and the console token (never `endpoint`'s client
        token) for the API."""
        from starlette.responses import JSONResponse, PlainTextResponse, Response
        from starlette.routing import Route

        self._endpoint = endpoint
        mcp_guard = endpoint.guard
        page_guard = mcp_guard.without_token()
        expected = f"Bearer {self.token}".encode()
        max_body = self.host.config.max_body_bytes

        def refused(request: Request) -> Response | None:
            """The page guard's refusal, else a missing or wrong console token's."""
            refusal: Response | None = page_guard.check(request)
            if refusal is not None:
                return refusal
            given = request.headers.get("authorization", "").encode()
            if hmac.compare_digest(given, expected):
                return None
            if mcp_guard.principal_of(request) is not None:
                message = "an MCP client's token does not open the console: use the console token"
                return JSONResponse({"error": message}, status_code=403)
            message = "send the console token (printed at start) as a bearer token"
            return JSONResponse({"error": message}, 401, headers={"WWW-Authenticate": "Bearer"})

        def guarded(handler: _Handler, page: bool = False) -> _Handler:
            async def checked(request: Request) -> Response:
                refusal = page_guard.check(request) if page else refused(request)
                return refusal if refusal is not None else await handler(request)

            return checked

        async def static(request: Request) -> Response:
            found = _STATIC.get(request.path_params.get("name", ""))
            if found is None:
                return PlainTextResponse("not found", status_code=404)
            name, media = found
            body = resources.files("toolweave.host.console").joinpath("static", name).read_bytes()
            return Response(body, media_type=media, headers={"Cache-Control": "no-store"})

        async def overview(request: Request) -> Response:
            return JSONResponse(await self.overview())

        async def queries(request: Request) -> Response:
            filters = _filters(request, QUERY_FILTERS)
            try:
                return JSONResponse(await self.queries(_limit(request), filters))
            except ConfigError as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)

        async def audit(request: Request) -> Response:
            try:
                return JSONResponse(
                    await self.audit(_limit(request), _filters(request, AUDIT_FILTERS))
                )
            except ConfigError as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)

        async def usage(request: Request) -> Response:
            return JSONResponse(await self.usage(_limit(request)))

        async def approvals(request: Request) -> Response:
            return JSONResponse(await self.approvals.listing())

        async def history(request: Request) -> Response:
            return JSONResponse(await self.approvals.history(_limit(request)))

        async def decide(request: Request) -> Response:
            if request.headers.get("content-type", "").split(";")[0] != "application/json":
                return JSONResponse({"error": "send Content-Type: application/json"}, 415)
            raw = await read_bounded(request.stream(), max_body)
            if raw is None:
                message = f"request body larger than max_body_bytes ({max_body} bytes)"
                return JSONResponse({"error": message}, status_code=413)
            try:
                body = json.loads(raw)
            except ValueError:
                return JSONResponse({"error": "the body is not JSON"}, status_code=400)
            decision = body.get("decision") if isinstance(body, dict) else None
            if decision not in _ANSWERS:
                return JSONResponse(
                    {"error": "decision must be 'approve', 'deny' or 'always'"}, status_code=400
                )
            where = request.client.host if request.client is not None else "?"
            by = f"console on {self.host.config.instance or 'local'} from {where}"
            if not await self.approvals.decide(request.path_params["id"], decision, by):
                return JSONResponse({"error": "no such pending approval"}, status_code=404)
            return JSONResponse({"ok": True, "decision": decision})

        base = CONSOLE_PATH
        api = f"{base}/api"
        return [
            Route(base, guarded(static, page=True)),
            Route(f"{base}/static/{{name}}", guarded(static, page=True)),
            Route(f"{api}/overview", guarded(overview)),
            Route(f"{api}/queries", guarded(queries)),
            Route(f"{api}/usage", guarded(usage)),
            Route(f"{api}/audit", guarded(audit)),
            Route(f"{api}/approvals", guarded(approvals)),
            Route(f"{api}/approvals/history", guarded(history)),
            Route(f"{api}/approvals/{{id}}", guarded(decide), methods=["POST"]),
        ]


def _filters(request: Request, names: tuple[str, ...]) -> dict[str, str]:
    return {name: request.query_params[name] for name in names if request.query_params.get(name)}


def _limit(request: Request) -> int:
    raw = request.query_params.get("limit", str(DEFAULT_QUERY_ROWS))
    return max(1, min(int(raw), MAX_QUERY_ROWS)) if raw.isdigit() else DEFAULT_QUERY_ROWS
