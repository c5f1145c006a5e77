"""What the web console's query and usage pages show: rows of the host's query log.

Every call `toolweave serve` runs is a row of the query log (`QueryLog`, written
by host/accounting.py when `[serve].query_log` is on; agent runs logged with
`RunLimits(query_log=...)` land there too). The console reads any source with
`async recent(n) -> rows` whose rows have `QueryRecord`'s fields; `usage_summary` turns them
into what the usage page draws: calls and errors per tool, latency percentiles per tool,
tokens per day.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

ROW_FIELDS = (
    "id",
    "input",
    "session_id",
    "status",
    "started",
    "tool_calls",
    "tools",
    "tokens",
    "duration",
    "error",
    "kind",
    "client",
    "tool",
    "outcome",
)
"""The fields of a query-log row (`toolweave.agent.QueryRecord`) the console sends."""
PERCENTILES = (50, 90, 99)


class QuerySource(Protocol):
    """Where the console reads rows from: the host's `QueryLog`, or any look-alike."""

    async def recent(self, n: int = 20) -> Sequence[Any]: ...


def row_json(row: Any) -> dict[str, Any]:
    """A row (a `QueryRecord`, or any object with its fields) as JSON."""
    is_instance = dataclasses.is_dataclass(row) and not isinstance(row, type)
    data = dataclasses.asdict(row) if is_instance else {}
    data = {name: data.get(name, getattr(row, name, None)) for name in ROW_FIELDS}
    data["tools"] = list(data.get("tools") or [])
    return data


def percentile(values: Sequence[float], p: float) -> float:
    """The nearest-rank percentile of `values` (0 for none)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def usage_summary(rows: Sequence[Any]) -> dict[str, Any]:
    """What the usage page charts, from query rows.

    `tools`: per tool name (sorted), calls, errors and latency percentiles in milliseconds
    (from `kind="tool"` rows, where a row's duration is the call's; a row that is not
    "success" counts as an error); `tokens_per_day`: tokens summed by UTC day of `started`,
    oldest first.
    """
    calls: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    tokens: dict[str, int] = {}
    for row in rows:
        day = datetime.fromtimestamp(row.started, UTC).strftime("%Y-%m-%d")
        tokens[day] = tokens.get(day, 0) + int(row.tokens)
        if row.kind != "tool":
            continue
        for name in row.tools:
            calls.setdefault(name, []).append(float(row.duration) * 1000)
            if row.status != "success":
                errors[name] = errors.get(name, 0) + 1
    return {
        "tools": [
            {
                "tool": name,
                "calls": len(durations),
                "errors": errors.get(name, 0),
                **{f"p{p}_ms": round(percentile(durations, p), 3) for p in PERCENTILES},
            }
            for name, durations in sorted(calls.items())
        ],
        "tokens_per_day": [{"day": d, "tokens": tokens[d]} for d in sorted(tokens)],
        "generated": time.time(),
    }
