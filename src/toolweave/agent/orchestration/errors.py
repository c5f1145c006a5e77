"""Errors of orchestration: what a subagent delegation refuses, as a tool error the parent's
model reads."""

from __future__ import annotations

from toolweave.tools.errors import ExecutionFailed


class SubagentBudgetExhausted(ExecutionFailed):
    """The parent has too little time left to start a subagent."""


__all__ = ["SubagentBudgetExhausted"]
