"""What `toolweave serve` records and limits around every served tool call: the host's
`[serve]` settings as the call chain's accounting stage (`toolweave.accounting.calls`).

`[serve].query_log` keeps a row per call (`toolweave log` prints the recent ones);
`[serve].daily_calls_per_client` and `[serve].daily_calls` cap one client and all clients
together; both stores sit in `data_dir` unless `[serve].store_dsn` names a shared Postgres.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave.accounting.calls import (
    QUERY_LOG_FILE,
    AccountingSettings,
    CallAccounting,
    open_query_log,
)
from toolweave.host.config import HostConfig

if TYPE_CHECKING:
    from toolweave.accounting.query_log import QueryLog

__all__ = ["QUERY_LOG_FILE", "accounting_for", "accounting_settings", "query_log_for"]


def accounting_settings(config: HostConfig) -> AccountingSettings:
    """The accounting settings `config` holds, refusals naming toolweave.toml."""
    return AccountingSettings(
        data_dir=config.data_dir,
        query_log=config.query_log,
        daily_calls_per_client=config.daily_calls_per_client,
        daily_calls=config.daily_calls,
        store_dsn=config.store_dsn,
        quota_fix="raise [serve].{setting} in toolweave.toml",
    )


def accounting_for(config: HostConfig) -> CallAccounting:
    """The host's accounting stage."""
    return CallAccounting(accounting_settings(config))


def query_log_for(config: HostConfig) -> QueryLog:
    """The host's query log (the same one `toolweave log` reads)."""
    return open_query_log(accounting_settings(config))
