"""Accounting: what runs and tool calls cost, and how much more they may cost.

`Quota` bounds calls and tokens per scope and window; `QueryLog` records every run and served
call for the console and `toolweave log` (who asked, the outcome, filters) and every approval
decision as an audit (`ApprovalRecord`). Both are stores on `toolweave.storage.sql` (SQLite
embedded, Postgres shared), below the agent and the host that use them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Quota": "toolweave.accounting.quota",
    "QuotaUsage": "toolweave.accounting.quota",
    "AccountingError": "toolweave.accounting.errors",
    "QuotaExceeded": "toolweave.accounting.errors",
    "ApprovalRecord": "toolweave.accounting.audit",
    "QueryFilter": "toolweave.accounting.query_log",
    "QueryLog": "toolweave.accounting.query_log",
    "QueryRecord": "toolweave.accounting.query_log",
    "QueryStatus": "toolweave.accounting.query_log",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from toolweave.accounting.audit import ApprovalRecord
    from toolweave.accounting.errors import AccountingError, QuotaExceeded
    from toolweave.accounting.query_log import QueryFilter, QueryLog, QueryRecord, QueryStatus
    from toolweave.accounting.quota import Quota, QuotaUsage

__all__ = [
    "AccountingError",
    "ApprovalRecord",
    "QueryFilter",
    "QueryLog",
    "QueryRecord",
    "QueryStatus",
    "Quota",
    "QuotaExceeded",
    "QuotaUsage",
]
