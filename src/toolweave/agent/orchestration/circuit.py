"""The circuit breaker: stop a model from looping on a tool that keeps failing.

After `failures` consecutive failed calls of one tool in one session, calls to it are refused
for `recovery` seconds: the refusal comes back at once as the call's result and says when the
tool is available again. The tool stays in the offered list (removing it would change the tool
definitions and miss the provider's prompt cache). The first success closes the circuit; after
the recovery time one trial call is let through (half-open), and a failure re-opens it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from toolweave.errors import ConfigError
from toolweave.tools import ExecutionFailed

if TYPE_CHECKING:
    from toolweave.governance.gates import GateRequest

DEFAULT_CIRCUIT_FAILURES = 3
DEFAULT_CIRCUIT_RECOVERY = 300.0
MAX_TRACKED_CIRCUITS = 10_000
"""(session, tool) pairs remembered; the oldest are forgotten past this (bounded memory)."""


@dataclass(slots=True)
class _Circuit:
    failures: int = 0
    open_until: float = 0.0


class CircuitBreaker:
    """Per-session, per-tool failure counting; also a `ToolGate` (`check`) for the loop."""

    def __init__(
        self,
        failures: int = DEFAULT_CIRCUIT_FAILURES,
        recovery: float = DEFAULT_CIRCUIT_RECOVERY,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not isinstance(failures, int) or isinstance(failures, bool) or failures < 1:
            raise ConfigError(f"circuit_failures must be an integer, 1 or more, got {failures!r}")
        if (  # inf or nan made every refusal raise (its reopening time cannot be a date)
            not isinstance(recovery, int | float)
            or isinstance(recovery, bool)
            or not math.isfinite(recovery)
            or recovery <= 0
        ):
            raise ConfigError(
                f"circuit_recovery must be a positive number of seconds, got {recovery!r}"
            )
        self.failures = failures
        self.recovery = recovery
        self._now = clock
        self._circuits: dict[tuple[str, str], _Circuit] = {}

    def refusal(self, session_id: str, tool: str) -> ExecutionFailed | None:
        """The error to return instead of calling `tool`, or None when it may run."""
        circuit = self._circuits.get((session_id, tool))
        if circuit is None or circuit.open_until <= self._now():
            return None
        until = datetime.fromtimestamp(circuit.open_until, UTC).isoformat(timespec="seconds")
        return ExecutionFailed(
            f"Tool {tool!r} is paused for this session: it failed {circuit.failures} times in a "
            f"row, so calls are refused until {until} (in {circuit.open_until - self._now():.0f}s)."
            " Do not retry it now; use another approach or continue without it.",
            tool=tool,
        )

    def record(self, session_id: str, tool: str, failed: bool) -> None:
        """Count one finished call."""
        key = (session_id, tool)
        if not failed:
            self._circuits.pop(key, None)
            return
        circuit = self._circuits.pop(key, None) or _Circuit()
        self._circuits[key] = circuit  # re-inserted: dict order is least recently failed first
        circuit.failures += 1
        if circuit.failures >= self.failures:
            circuit.open_until = self._now() + self.recovery
        while len(self._circuits) > MAX_TRACKED_CIRCUITS:
            del self._circuits[next(iter(self._circuits))]

    async def check(self, request: GateRequest) -> None:
        error = self.refusal(request.session.id, request.call.name)
        if error is not None:
            raise error

    def __repr__(self) -> str:
        return f"CircuitBreaker(failures={self.failures}, recovery={self.recovery:g})"
