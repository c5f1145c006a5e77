"""Why accounting refused a run or a call: a quota is used up."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from toolweave.errors import ToolweaveError

Metric = Literal["tokens", "calls"]
GLOBAL_SCOPE = "global"
"""The quota scope that counts all sessions together."""


class AccountingError(ToolweaveError):
    """Base of the accounting package's errors."""


class QuotaExceeded(AccountingError):
    """A daily limit is used up; nothing was sent. `reset_at` is when the day's key rolls over."""

    def __init__(
        self, scope: str, metric: Metric, limit: int, used: int, requested: int, reset_at: datetime
    ) -> None:
        who = "all sessions together" if scope == GLOBAL_SCOPE else f"session {scope!r}"
        self.summary = (
            f"daily {metric} quota exceeded for {who}: {used} of {limit} used, this needs "
            f"{requested} more; it resets at {reset_at.isoformat()}"
        )
        super().__init__(self.with_fix("raise the Quota limit"))
        self.scope = scope
        self.metric = metric
        self.limit = limit
        self.used = used
        self.requested = requested
        self.reset_at = reset_at

    def with_fix(self, fix: str) -> str:
        """The message ending in `fix`, e.g. the setting that holds the limit."""
        return f"{self.summary} ({fix} to allow more)"
