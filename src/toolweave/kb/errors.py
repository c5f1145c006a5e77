"""The knowledge base's errors: every one names the bad input and the fix.

They derive from `ToolError` (recoverable) so that a tool raising them hands the model a message
it can act on.
"""

from __future__ import annotations

from toolweave.tools.errors import ToolError


class KnowledgeBaseError(ToolError):
    """Base of the knowledge base's and notes' errors."""

    recoverable = True


class DocumentError(KnowledgeBaseError):
    """A document could not be read or converted to Markdown."""


class NoteNotFound(KnowledgeBaseError):
    """No note has that id; the message says how to list them."""
