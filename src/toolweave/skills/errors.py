"""The errors the skills package raises.

A `SkillError` is recoverable: it goes back to the model as text naming what was wrong (an
unknown skill, a path outside the skill folder, a refused archive member) and how to fix it.
"""

from __future__ import annotations

from toolweave.tools.errors import ToolError


class SkillError(ToolError):
    """A skill could not be found, read, installed or run; the message says why and what to do."""

    recoverable = True
