"""What `toolweave serve` records and limits around every served tool call.

Each call gets a query-log row (`toolweave log` prints the recent ones): the tool, the
arguments, the client, how long it took and how it ended. Daily call quotas cap one client
(`[serve].daily_calls_per_client`) and all clients together (`[serve].daily_calls`); a refused
call returns an error result that says when the quota resets, and runs nothing. A quota is kept
per authenticated identity (the principal the transport checked: a token's fingerprint, an OAuth
subject), or per connection address when nothing was authenticated, never by the client's
self-declared `clientInfo.name` (which a client rotates at will, per call with `_meta`); over
stdio the one process is one client. The query log records the declared name beside the key.
Both stores sit in `data_dir` (SQLite) unless `[serve].store_dsn` names a Postgres database that
several hosts share; they are opened on the first call.
"""

from __future__ import annotations

import ipaddress
import json
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from toolweave.host.config import HostConfig
from toolweave.tools.context import ToolContext
from toolweave.tools.errors import ToolError, ToolTimeout
from toolweave.tools.result import ToolResult

if TYPE_CHECKING:
    from toolweave.accounting.query_log import QueryLog, QueryStatus
    from toolweave.accounting.quota import Quota

QUERY_LOG_FILE = "query_log.db"
QUOTA_FILE = "quota.db"
MAX_LOGGED_ARGUMENT_CHARS = 2000


def query_log_for(config: HostConfig) -> QueryLog:
    """The host's query log (the same one `toolweave log` reads)."""
    from toolweave.accounting.query_log import QueryLog

    if config.store_dsn:
        return QueryLog(dsn=config.store_dsn)
    return QueryLog(config.data_dir / QUERY_LOG_FILE)


def client_key(ctx: ToolContext) -> str:
    """The quota key of a call: its principal (a `[serve.tokens]` client, a shared token's
    fingerprint), else its network address with the whole loopback range one client (any
    `127.x.y.z` and `::1` are the same machine), else "stdio"."""
    principal = getattr(ctx, "principal", None)
    if isinstance(principal, str) and principal:
        return f"principal:{principal}"
    address = getattr(ctx, "remote_address", None)
    if isinstance(address, str) and address:
        return "address:loopback" if _loopback(address) else f"address:{address}"
    return "stdio"


def _loopback(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def client_label(ctx: ToolContext) -> str:
    """What the query log shows for a call: the quota key and the declared client name."""
    info = getattr(ctx, "client_info", None)
    name = info.get("name") if isinstance(info, dict) else None
    return f"{client_key(ctx)} ({name})" if isinstance(name, str) and name else client_key(ctx)


class Accounting:
    """The query log and call quotas of one host; `call` wraps one tool execution."""

    def __init__(self, config: HostConfig) -> None:
        self.config = config
        self._log: QueryLog | None = None
        self._quota: Quota | None = None

    @property
    def active(self) -> bool:
        config = self.config
        return config.query_log or bool(config.daily_calls_per_client or config.daily_calls)

    def query_log(self) -> QueryLog | None:
        """The host's query log (opened on first use), or None with `[serve].query_log` off."""
        return self._stores()[0]

    def _stores(self) -> tuple[QueryLog | None, Quota | None]:
        config = self.config
        if config.query_log and self._log is None:
            self._log = query_log_for(config)
        if (config.daily_calls_per_client or config.daily_calls) and self._quota is None:
            from toolweave.accounting.quota import Quota

            self._quota = Quota(
                None if config.store_dsn else config.data_dir / QUOTA_FILE,
                per_session_daily_calls=config.daily_calls_per_client or None,
                global_daily_calls=config.daily_calls or None,
                dsn=config.store_dsn or None,
            )
        return self._log, self._quota

    async def call(
        self,
        name: str,
        args: dict[str, Any],
        ctx: ToolContext,
        execute: Callable[[], Awaitable[ToolResult]],
    ) -> ToolResult:
        from toolweave.accounting.errors import GLOBAL_SCOPE, QuotaExceeded

        log, quota = self._stores()
        who = client_label(ctx)
        if quota is not None:
            try:
                await quota.reserve(client_key(ctx), calls=1)
            except QuotaExceeded as exc:
                setting = "daily_calls" if exc.scope == GLOBAL_SCOPE else "daily_calls_per_client"
                message = exc.with_fix(f"raise [serve].{setting} in toolweave.toml")
                if log is not None:
                    row = await log.start(_describe(name, args), who, kind="tool")
                    await log.finish(row, "stopped", tools=[name], error=message)
                return ToolResult.error(message)
        if log is None:
            return await execute()
        row = await log.start(_describe(name, args), who, kind="tool")
        started = time.perf_counter()
        status: QueryStatus = "success"
        error = ""
        try:
            result = await execute()
            if result.is_error:
                status, error = "error", result.text[:500]
            return result
        except ToolTimeout as exc:
            status, error = "timeout", str(exc)
            raise
        except ToolError as exc:
            status, error = "error", str(exc)
            raise
        except BaseException as exc:
            status, error = "stopped", f"{type(exc).__name__}: {exc}"
            raise
        finally:
            await log.finish(
                row, status, tools=[name], duration=time.perf_counter() - started, error=error
            )

    async def close(self) -> None:
        for store in (self._log, self._quota):
            if store is not None:
                await store.close()
        self._log = self._quota = None


def _describe(name: str, args: dict[str, Any]) -> str:
    text = json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
    if len(text) > MAX_LOGGED_ARGUMENT_CHARS:
        text = text[:MAX_LOGGED_ARGUMENT_CHARS] + "…"
    return f"{name} {text}"
