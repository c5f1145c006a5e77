"""What limits a run: `RunLimits`, the settings for the quota, the query log, the circuit
breaker and todo reminders.

Each is off unless set, except the circuit breaker (on, with `DEFAULT_CIRCUIT_FAILURES`). The
run applies them as one run stage (`agent/_run/orchestrate.py`): the quota is reserved before
each model call and settled after, the query log gets a row per run and per tool call, todo
reminders are appended to a request, and each tool call's outcome is counted by the circuit
breaker, which governance runs as a gate. A subagent or team member keeps its parent's limits
(one breaker, one quota, its calls logged under the parent's row); only reminders stay with
the parent.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolweave.accounting.query_log import QueryLog
from toolweave.accounting.quota import Quota
from toolweave.agent.orchestration.circuit import (
    DEFAULT_CIRCUIT_FAILURES,
    DEFAULT_CIRCUIT_RECOVERY,
    CircuitBreaker,
)
from toolweave.agent.orchestration.todo_reminder import TodoReminders, TodoSource


@dataclass(frozen=True, init=False)
class RunLimits:
    """What limits one agent's runs (`Agent(orchestration=RunLimits(...))`); every setting is
    checked here, naming the field.

    The circuit breaker refuses a tool after `circuit_failures` failures in a row in one session
    (None: off) for `circuit_recovery` seconds. `todos` (a `TodoStore`) reminds the model of
    unfinished todos; `quota` meters tokens and calls; `query_log` records each run and each of
    its tool calls, a subagent's included. The agents one `RunLimits` is given to share its
    circuit breaker and reminders.
    """

    circuit: CircuitBreaker | None
    todos: TodoReminders | None
    quota: Quota | None
    query_log: QueryLog | None

    def __init__(
        self,
        *,
        circuit_failures: int | None = DEFAULT_CIRCUIT_FAILURES,
        circuit_recovery: float = DEFAULT_CIRCUIT_RECOVERY,
        todos: TodoSource | None = None,
        quota: Quota | None = None,
        query_log: QueryLog | None = None,
    ) -> None:
        if quota is not None and not isinstance(quota, Quota):
            raise TypeError(
                f"RunLimits(quota=...) must be a toolweave.accounting.Quota, got {quota!r}"
            )
        if query_log is not None and not isinstance(query_log, QueryLog):
            raise TypeError(f"RunLimits(query_log=...) must be a QueryLog, got {query_log!r}")
        circuit = None
        if circuit_failures is not None:
            circuit = CircuitBreaker(circuit_failures, circuit_recovery)
        object.__setattr__(self, "circuit", circuit)
        object.__setattr__(self, "todos", TodoReminders(todos) if todos is not None else None)
        object.__setattr__(self, "quota", quota)
        object.__setattr__(self, "query_log", query_log)

    def child(self) -> RunLimits:
        """A subagent's limits: the same circuit breaker (one for the whole tree), quota and
        query log (its tool calls are rows under the parent run's); no reminders."""
        child = RunLimits(circuit_failures=None, quota=self.quota, query_log=self.query_log)
        object.__setattr__(child, "circuit", self.circuit)
        return child
