"""The gate seam: checks every tool call must pass before `ToolRegistry.invoke` runs it.

A `ToolGate` is one of the governance's own checks (`Governance(gates=...)`; the agent adds its
circuit breaker), run by the pipeline after plan mode and the permission policy and before
rules, hooks and approvals. Gates fail closed: a gate that crashes blocks the call as if it had
denied it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from toolweave.governance.context import GovernedSession
from toolweave.llm import ToolCallPart
from toolweave.tools import PermissionDenied, Tool, ToolError, ToolRegistry


@dataclass(frozen=True, slots=True)
class GateRequest:
    """One call awaiting clearance. `tool` is None for an unknown name (the registry answers it
    with the list of available tools)."""

    call: ToolCallPart
    tool: Tool | None
    registry: ToolRegistry
    session: GovernedSession


@runtime_checkable
class ToolGate(Protocol):
    """Return to let the call through; raise a `ToolError` to block it.

    A `PermissionDenied` (or any non-recoverable error) ends the run; a recoverable error goes
    back to the model as the call's result, so it can change course.
    """

    async def check(self, request: GateRequest) -> None: ...


async def clear_call(gates: Sequence[ToolGate], request: GateRequest) -> ToolError | None:
    """Run the gates in order; the first refusal wins. None means the call may run."""
    for gate in gates:
        try:
            await gate.check(request)
        except ToolError as exc:
            return exc
        except Exception as exc:
            name = request.call.name
            return PermissionDenied(
                f"gate {type(gate).__name__} failed while checking tool {name!r} "
                f"({type(exc).__name__}: {exc}); the call was blocked because gates fail closed",
                tool=name,
            )
    return None
