"""The knowledge base's errors: every one names the bad input and the fix.

They are the knowledge base's own family under `ToolweaveError` (not `ToolError`: a failed call
is the registry's outcome); `recoverable`, so when a tool raises one, `ToolRegistry.invoke`
hands the model its message to act on.
"""

from __future__ import annotations

from toolweave.errors import ToolweaveError


class KnowledgeBaseError(ToolweaveError):
    """Base of the knowledge base's and notes' errors; `tool` names the tool that raised it."""

    recoverable = True

    def __init__(self, message: str, *, tool: str | None = None) -> None:
        super().__init__(message)
        self.message, self.tool = message, tool


class DocumentError(KnowledgeBaseError):
    """A document could not be read or converted to Markdown."""


class NoteNotFound(KnowledgeBaseError):
    """No note has that id; the message says how to list them."""
