"""Approval decisions as an audit: who decided, when, on which call and arguments.

Every answer a person (or an approver acting for one) gives to an approval request is a row of
`toolweave_approvals`, beside the query log in the same store (`QueryLog.record_approval`,
`QueryLog.approvals`): the tool and its arguments, the session and the requester, whether it was
a user or an admin question, who decided (`decided_by`: "console", "elicitation:<client>",
"chat:<user>", "admin", whatever label the approver was given) and the decision ("approved",
"always", "denied", "no answer"). `toolweave.governance.audited` wraps an approver so its
decisions land here; `toolweave log --approvals` prints them.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeAlias

from toolweave.errors import ConfigError
from toolweave.storage.sql import Program

Since: TypeAlias = "float | int | datetime | str | None"
DECISIONS = ("approved", "always", "denied", "no answer")
MAX_AUDITED_ARGUMENT_CHARS = 4000
"""Characters of a decision's JSON arguments kept (longer ones end in "…")."""

APPROVAL_SCHEMA = """
CREATE TABLE IF NOT EXISTS toolweave_approvals (
    id TEXT PRIMARY KEY, decided DOUBLE PRECISION NOT NULL, tool TEXT NOT NULL,
    args TEXT NOT NULL, session_id TEXT NOT NULL, requester TEXT NOT NULL, kind TEXT NOT NULL,
    call_id TEXT NOT NULL, decided_by TEXT NOT NULL, decision TEXT NOT NULL,
    asked DOUBLE PRECISION NOT NULL, reason TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS toolweave_approvals_decided ON toolweave_approvals (decided)
"""
_COLUMNS = (
    "id, decided, tool, args, session_id, requester, kind, call_id, decided_by, decision, asked, "
    "reason"
)
_SPAN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$")
_SPAN_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


@dataclass(frozen=True, slots=True)
class ApprovalRecord:
    """One approval decision. `args` is the call's arguments as JSON text; `asked` and
    `decided` are epoch seconds; `decision` is one of `DECISIONS`."""

    tool: str
    args: str
    decided_by: str
    decision: str
    session_id: str = ""
    requester: str = ""
    kind: str = "user"
    call_id: str = ""
    reason: str = ""
    asked: float = 0.0
    decided: float = field(default_factory=time.time)
    id: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def approved(self) -> bool:
        return self.decision in ("approved", "always")

    @staticmethod
    def arguments(args: Any) -> str:
        """`args` as the JSON text a record keeps (sorted keys, capped)."""
        text = json.dumps(args, ensure_ascii=False, sort_keys=True, default=str)
        if len(text) > MAX_AUDITED_ARGUMENT_CHARS:
            text = text[:MAX_AUDITED_ARGUMENT_CHARS] + "…"
        return text


def since_timestamp(value: Since, *, field: str = "since") -> float:
    """Epoch seconds from epoch seconds, a datetime, an ISO 8601 time ("2026-12-06",
    "2026-12-06T10:00:00+00:00"; a time without a zone is UTC) or a span back from now ("90s",
    "30m", "2h", "7d", "1w")."""
    if isinstance(value, bool):
        pass
    elif isinstance(value, int | float):
        return float(value)
    elif isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    elif isinstance(value, str):
        span = _SPAN.match(value)
        if span:
            back = float(span.group(1)) * _SPAN_SECONDS[span.group(2)]
            return (datetime.now(UTC) - timedelta(seconds=back)).timestamp()
        try:
            return since_timestamp(datetime.fromisoformat(value.strip()), field=field)
        except ValueError:
            pass
    raise ConfigError(
        f"{field}={value!r} is not a time: give epoch seconds, an ISO 8601 time such as "
        "'2026-12-06' or '2026-12-06T10:00:00+00:00', or a span back from now such as '2h' or '7d'"
    )


def identities(who: str) -> list[str]:
    """The stored identities a person's filter means: "alice" is also "principal:alice",
    "10.0.0.7" also "address:10.0.0.7" (the keys `toolweave.tools.clients.client_key` writes)."""
    return [who, f"principal:{who}", f"address:{who}"]


def insert_approval(record: ApprovalRecord) -> Program[None]:
    if record.decision not in DECISIONS:
        raise ConfigError(
            f"ApprovalRecord(decision={record.decision!r}) must be one of {', '.join(DECISIONS)}"
        )
    yield (
        f"INSERT INTO toolweave_approvals ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            record.id,
            record.decided,
            record.tool,
            record.args,
            record.session_id,
            record.requester,
            record.kind,
            record.call_id,
            record.decided_by,
            record.decision,
            record.asked,
            record.reason,
        ),
    )


def approval_rows(
    limit: int,
    *,
    tool: str | None = None,
    requester: str | None = None,
    decided_by: str | None = None,
    since: Since = None,
    until: Since = None,
    approved: bool | None = None,
) -> Program[list[ApprovalRecord]]:
    if limit < 1:
        raise ConfigError(f"QueryLog.approvals(limit={limit}) must be at least 1")
    clauses: list[str] = []
    params: list[Any] = []
    for column, value in (("tool", tool), ("decided_by", decided_by)):
        if value:
            clauses.append(f"{column} = ?")
            params.append(value)
    if requester:
        clauses.append("requester IN (?, ?, ?)")
        params += identities(requester)
    for name, bound, op in (("since", since, ">="), ("until", until, "<=")):
        if bound is not None:
            clauses.append(f"decided {op} ?")
            params.append(since_timestamp(bound, field=name))
    if approved is not None:
        clauses.append(f"decision {'IN' if approved else 'NOT IN'} ('approved', 'always')")
    where = " WHERE " + " AND ".join(clauses) if clauses else ""
    rows = yield (
        f"SELECT {_COLUMNS} FROM toolweave_approvals{where} ORDER BY decided DESC, id DESC LIMIT ?",
        (*params, limit),
    )
    return [
        ApprovalRecord(
            id=row[0],
            decided=float(row[1]),
            tool=row[2],
            args=row[3],
            session_id=row[4],
            requester=row[5],
            kind=row[6],
            call_id=row[7],
            decided_by=row[8],
            decision=row[9],
            asked=float(row[10]),
            reason=row[11],
        )
        for row in rows
    ]
