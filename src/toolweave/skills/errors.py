"""The errors the skills package raises.

A `SkillError` is the skills package's own family under `ToolweaveError` (not `ToolError`: a
failed call is the registry's outcome). It is recoverable: raised by a tool, it goes back to the
model as text naming what was wrong (an unknown skill, a path outside the skill folder, a
refused archive member) and how to fix it.
"""

from __future__ import annotations

from toolweave.errors import ToolweaveError


class SkillError(ToolweaveError):
    """A skill could not be found, read, installed or run; the message says why and what to do."""

    recoverable = True

    def __init__(self, message: str, *, tool: str | None = None) -> None:
        super().__init__(message)
        self.message, self.tool = message, tool
