"""A span exporter that appends finished spans to a JSON Lines file: tracing with no collector.

One line per span, written when the span ends (children before their parents), in the shape
`read_spans` reads back and `toolweave trace show FILE` renders as a tree:

```json
{"name": "chat gpt-4o", "trace_id": "…32 hex…", "span_id": "…16 hex…",
 "parent_id": "…16 hex… or null", "start_ns": 1, "end_ns": 2,
 "status": "OK" | "ERROR" | "UNSET", "status_description": null,
 "attributes": {"gen_ai.request.model": "gpt-4o"}, "events": [{"name": "exception", ...}]}
```

This module imports the OpenTelemetry SDK (the `otel` extra); `read_spans` lives in
`trace_file`, which needs nothing, so a trace can be read where OpenTelemetry is not installed.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult


class JSONLSpanExporter(SpanExporter):
    """Append spans to `path` as JSON Lines (the directory is created when missing)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        lines = "".join(json.dumps(span_record(s), ensure_ascii=False) + "\n" for s in spans)
        with self._lock, self.path.open("a", encoding="utf-8") as file:
            file.write(lines)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def span_record(span: ReadableSpan) -> dict[str, Any]:
    """One span as the JSON object written on its line."""
    context = span.get_span_context()
    assert context is not None  # an SDK span always has one
    parent = span.parent
    return {
        "name": span.name,
        "trace_id": format(context.trace_id, "032x"),
        "span_id": format(context.span_id, "016x"),
        "parent_id": format(parent.span_id, "016x") if parent is not None else None,
        "start_ns": span.start_time,
        "end_ns": span.end_time,
        "status": span.status.status_code.name,
        "status_description": span.status.description,
        "attributes": _plain(dict(span.attributes or {})),
        "events": [
            {"name": e.name, "time_ns": e.timestamp, "attributes": _plain(dict(e.attributes or {}))}
            for e in span.events
        ],
    }


def _plain(attributes: dict[str, Any]) -> dict[str, Any]:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in attributes.items()}
