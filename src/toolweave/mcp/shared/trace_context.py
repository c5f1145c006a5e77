"""W3C trace context in a request's `_meta` (SEP-414): `traceparent` / `tracestate` of the
OpenTelemetry span current when the request is sent, so a server's spans join the caller's trace.

Nothing is imported for it: when the application has not loaded OpenTelemetry (no tracing),
there is no span to link and requests carry no trace keys.
"""

from __future__ import annotations

import sys

__all__ = ["TRACE_KEYS", "trace_meta"]

TRACE_KEYS = ("traceparent", "tracestate")
"""The `_meta` keys SEP-414 reserves for W3C trace context."""


def trace_meta() -> dict[str, str]:
    """`{"traceparent": ..., "tracestate": ...}` for the current span (the W3C propagator's
    output), or {} without OpenTelemetry loaded or a valid current span."""
    if "opentelemetry.trace" not in sys.modules:
        return {}
    from opentelemetry import trace
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    if not trace.get_current_span().get_span_context().is_valid:
        return {}
    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)
    return {key: carrier[key] for key in TRACE_KEYS if key in carrier}
