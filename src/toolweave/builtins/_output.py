"""One way for every built-in to hand text back: capped and wrapped as data, not instructions.

File contents, web pages, query rows, command output and API answers all come from outside the
agent's control, so they go through the shared helpers of `toolweave.tools.shaping` before a
model (or an MCP client) reads them.
"""

from __future__ import annotations

from toolweave.errors import ConfigError
from toolweave.tools.result import ToolResult
from toolweave.tools.shaping import DEFAULT_MAX_CHARS, shape_result

MAX_ERROR_BODY_CHARS = 500
"""Characters of text a server or database wrote into an error (an HTTP error body, a SQL
refusal) that the error quotes, wrapped as data like a result."""


def untrusted(text: str, tool_name: str, max_chars: int = DEFAULT_MAX_CHARS) -> ToolResult:
    """`text` truncated to `max_chars` and wrapped in the data-not-instructions boundary."""
    return shape_result(ToolResult.text_result(text), tool_name, max_chars)


def check_positive(name: str, value: float) -> None:
    """Fail at construction, naming the setting, when a bound is not positive."""
    if isinstance(value, bool) or not value > 0:
        raise ConfigError(f"{name} must be a positive number, got {value!r}")
