"""The one root of every error toolweave raises, so `except ToolweaveError` catches them all.

This module imports nothing: every layer (tools, llm, mcp, agent, host) derives its own
families from these classes without reaching up or sideways.

    ToolweaveError
    ├── ConfigError (also a ValueError): a bad argument, setting or config file
    │   └── ModelConfigError (toolweave.llm): a model cannot be built
    ├── ToolError (toolweave.tools): a tool call failed
    │   └── MCPError (toolweave.mcp): an MCP request or connection failed
    ├── ModelError (toolweave.llm): a provider refused or failed
    └── AgentError (toolweave.agent): the loop stopped without an answer
"""

from __future__ import annotations


class ToolweaveError(Exception):
    """Base of every error the library raises."""


class ConfigError(ToolweaveError, ValueError):
    """A bad argument, setting or configuration file; the message names the field and the fix.

    It is also a `ValueError`, so code that validated input with `except ValueError` keeps
    working.
    """


__all__ = ["ConfigError", "ToolweaveError"]
