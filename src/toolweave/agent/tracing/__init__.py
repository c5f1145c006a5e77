"""Tracing: OpenTelemetry spans for agent runs, written to a JSONL file or any exporter, and
read back for `toolweave trace`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "RunTrace": "toolweave.agent.tracing.run_trace",
    "Tracing": "toolweave.agent.tracing.run_trace",
    "TraceSpan": "toolweave.agent.tracing.spans",
    "read_spans": "toolweave.agent.tracing.spans",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:
    from toolweave.agent.tracing.run_trace import RunTrace, Tracing
    from toolweave.agent.tracing.spans import TraceSpan, read_spans

__all__ = [
    "RunTrace",
    "TraceSpan",
    "Tracing",
    "read_spans",
]
