"""Reading a JSON Lines trace back into span trees, with no dependency beyond the stdlib.

`JSONLSpanExporter` (jsonl.py, the `otel` extra) writes the file; this side only reads
it, so `toolweave trace show FILE` works on a machine without OpenTelemetry installed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolweave.errors import ConfigError


@dataclass(slots=True)
class TraceSpan:
    """One span of a trace file and the spans under it, ordered by start time."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str | None
    start_ns: int
    end_ns: int
    status: str = "UNSET"
    status_description: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    children: list[TraceSpan] = field(default_factory=list)

    @property
    def duration_ms(self) -> float:
        return (self.end_ns - self.start_ns) / 1e6

    def walk(self) -> list[TraceSpan]:
        """This span and every descendant, depth first."""
        out = [self]
        for child in self.children:
            out.extend(child.walk())
        return out


def read_spans(path: str | Path) -> list[TraceSpan]:
    """The root spans in `path` (one per run, in start order), children attached.

    A span whose parent is not in the file (a run inside a larger trace) counts as a root.
    """
    file = Path(path)
    spans: dict[str, TraceSpan] = {}
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"trace file {file} does not exist") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            span = TraceSpan(
                name=record["name"],
                trace_id=record["trace_id"],
                span_id=record["span_id"],
                parent_id=record.get("parent_id"),
                start_ns=int(record["start_ns"]),
                end_ns=int(record["end_ns"]),
                status=record.get("status", "UNSET"),
                status_description=record.get("status_description"),
                attributes=dict(record.get("attributes") or {}),
                events=list(record.get("events") or []),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(
                f"{file}:{number}: not a span line written by JSONLSpanExporter ({exc!r})"
            ) from None
        spans[span.span_id] = span
    roots: list[TraceSpan] = []
    for span in sorted(spans.values(), key=lambda s: s.start_ns):
        parent = spans.get(span.parent_id) if span.parent_id is not None else None
        (parent.children if parent is not None else roots).append(span)
    return roots
