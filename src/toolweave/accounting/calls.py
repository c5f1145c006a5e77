"""Accounting as one stage of the call chain (`toolweave.tools.calls`): quotas and the query log
around every call that passes it.

`CallAccounting` sits outside governance, so refused calls are logged and counted too. Each call
gets a query-log row (the tool, the arguments, who asked, how long it took, how it ended and
its outcome: ran, failed, or refused and by which stage);
daily call quotas cap one client (`AccountingSettings.daily_calls_per_client`) and all clients
together (`daily_calls`); a call over a quota runs nothing and gets an error result that says
when the quota resets and which setting raises it. A quota is kept per authenticated identity
(the principal the transport checked), else per connection address, never by the client's
self-declared name (a client rotates it at will); a call with neither is one local client
("stdio"). The stores are SQLite files in `data_dir` unless `store_dsn` names a Postgres
database that several hosts share; they are opened on the first call.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolweave.mcp.shared.errors import InputRequired
from toolweave.tools import ToolResult, ToolTimeout
from toolweave.tools.calls import CallHandler, ToolCall, ToolInvocation, call_rounds
from toolweave.tools.clients import client_key
from toolweave.tools.context import ToolContext

if TYPE_CHECKING:
    from toolweave.accounting.query_log import QueryLog, QueryStatus
    from toolweave.accounting.quota import Quota

QUERY_LOG_FILE = "query_log.db"
QUOTA_FILE = "quota.db"
MAX_LOGGED_ARGUMENT_CHARS = 2000
LOGGED_ERROR_CHARS = 500
PAUSED_ERROR = "waiting for the client's answers (input required); its retry goes on with this row"
"""The query log's error of a call paused for its client's answers, until its retry ends it."""
_COUNTED_MEMO = "accounting.counted"
_ROW_MEMO = "accounting.row"
_SECONDS_MEMO = "accounting.seconds"


@dataclass(frozen=True, slots=True)
class AccountingSettings:
    """What to record and limit. `daily_calls_per_client` and `daily_calls` of 0 mean no
    limit; `quota_fix` is how the refusal tells the user to raise a limit (`{setting}` is the
    setting's name)."""

    data_dir: Path
    query_log: bool = False
    daily_calls_per_client: int = 0
    daily_calls: int = 0
    store_dsn: str = ""
    quota_fix: str = "raise {setting}"

    @property
    def active(self) -> bool:
        return self.query_log or bool(self.daily_calls_per_client or self.daily_calls)


def open_query_log(settings: AccountingSettings) -> QueryLog:
    """The query log these settings name (the same one `toolweave log` reads)."""
    from toolweave.accounting.query_log import QueryLog

    if settings.store_dsn:
        return QueryLog(dsn=settings.store_dsn)
    return QueryLog(settings.data_dir / QUERY_LOG_FILE)


def client_label(ctx: ToolContext) -> str:
    """What the query log shows for a call: the quota key and the declared client name."""
    info = getattr(ctx, "client_info", None)
    name = info.get("name") if isinstance(info, dict) else None
    return f"{client_key(ctx)} ({name})" if isinstance(name, str) and name else client_key(ctx)


class CallAccounting:
    """The accounting stage (see the module docstring); `close` releases its stores."""

    def __init__(self, settings: AccountingSettings) -> None:
        self.settings = settings
        self._log: QueryLog | None = None
        self._quota: Quota | None = None

    @property
    def active(self) -> bool:
        return self.settings.active

    def query_log(self) -> QueryLog | None:
        """The query log (opened on first use), or None when the settings keep none."""
        return self._stores()[0]

    def _stores(self) -> tuple[QueryLog | None, Quota | None]:
        settings = self.settings
        if settings.query_log and self._log is None:
            self._log = open_query_log(settings)
        if (settings.daily_calls_per_client or settings.daily_calls) and self._quota is None:
            from toolweave.accounting.quota import Quota

            self._quota = Quota(
                None if settings.store_dsn else settings.data_dir / QUOTA_FILE,
                per_session_daily_calls=settings.daily_calls_per_client or None,
                global_daily_calls=settings.daily_calls or None,
                dsn=settings.store_dsn or None,
            )
        return self._log, self._quota

    async def __call__(self, call: ToolCall, next: CallHandler) -> ToolInvocation:
        if not self.settings.active:
            return await next(call)
        from toolweave.accounting.errors import GLOBAL_SCOPE, QuotaExceeded

        log, quota = self._stores()
        ctx, name = call.ctx, call.name
        who, key = client_label(ctx), client_key(ctx)
        # A call that paused for its client's answers goes on in a retry: one call, counted and
        # logged once (its row is finished again when it goes on).
        rounds = call_rounds(ctx)
        memo = rounds.memo if rounds is not None else {}
        if quota is not None and not memo.get(_COUNTED_MEMO):
            try:
                await quota.reserve(key, calls=1)
            except QuotaExceeded as exc:
                setting = "daily_calls" if exc.scope == GLOBAL_SCOPE else "daily_calls_per_client"
                message = exc.with_fix(self.settings.quota_fix.format(setting=setting))
                if log is not None:
                    row = await log.start(
                        describe_call(name, call.args), who, kind="tool", client=key, tool=name
                    )
                    await log.finish(
                        row, "stopped", tools=[name], error=message, outcome="refused:quota"
                    )
                refused = ToolResult.error(message)
                return ToolInvocation(name, call.call_id, call.args, refused, None, 0.0)
            memo[_COUNTED_MEMO] = True
        if log is None:
            return await next(call)
        kept = memo.get(_ROW_MEMO)
        row = (
            kept
            if isinstance(kept, str)
            else await log.start(
                describe_call(name, call.args), who, kind="tool", client=key, tool=name
            )
        )
        memo[_ROW_MEMO] = row
        started = time.perf_counter()
        status: QueryStatus = "success"
        error, outcome = "", "ran"
        try:
            inv = await next(call)
            status, error, outcome = invocation_outcome(inv)
            return inv
        except InputRequired as exc:  # a 2026-07-28 question: the retry carries the answer
            paused = rounds is not None and rounds.paused
            status, error, outcome = "stopped", PAUSED_ERROR if paused else str(exc), "asked"
            raise
        except Exception as exc:  # a refusal (governance) before the tool ran
            status, error, outcome = "error", str(exc), refused_outcome(exc)
            if rounds is not None and rounds.paused:
                status, error, outcome = "stopped", PAUSED_ERROR, "asked"
            raise
        except BaseException as exc:
            status, error, outcome = "stopped", f"{type(exc).__name__}: {exc}", "stopped"
            raise
        finally:
            took = float(memo.get(_SECONDS_MEMO, 0.0)) + time.perf_counter() - started
            if rounds is not None:
                memo[_SECONDS_MEMO] = took
            await log.finish(row, status, tools=[name], duration=took, error=error, outcome=outcome)

    async def record_approval(self, **decision: Any) -> None:
        """Keep an approval decision in the query log's audit (nothing when the log is off):
        the host's approvers report here (`toolweave.governance.audited`)."""
        log = self.query_log()
        if log is not None:
            await log.record_approval(**decision)

    async def close(self) -> None:
        for store in (self._log, self._quota):
            if store is not None:
                await store.close()
        self._log = self._quota = None


def refused_outcome(exc: BaseException, otherwise: str = "failed") -> str:
    """The outcome of a call an error stopped before it ran: "refused:<stage>" for a governance
    refusal (its `stage`: plan, policy, gate, rules, hook, admin, approval), `otherwise` for an
    error that names no stage."""
    stage = getattr(exc, "stage", None)  # governance sits beside accounting: no import
    return f"refused:{stage}" if isinstance(stage, str) and stage else otherwise


def invocation_outcome(inv: ToolInvocation) -> tuple[QueryStatus, str, str]:
    """A finished call's row: its status, error text and outcome ("ran" or "failed")."""
    if isinstance(inv.error, ToolTimeout):
        return "timeout", str(inv.error), "failed"
    if not inv.ok:
        return "error", inv.result.text[:LOGGED_ERROR_CHARS], "failed"
    return "success", "", "ran"


def describe_call(name: str, args: Any) -> str:
    """A call's row input: the tool's name and its arguments as JSON (cut at
    `MAX_LOGGED_ARGUMENT_CHARS`)."""
    text = json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
    if len(text) > MAX_LOGGED_ARGUMENT_CHARS:
        text = text[:MAX_LOGGED_ARGUMENT_CHARS] + "…"
    return f"{name} {text}"
