"""The one root of every error toolweave raises, so `except ToolweaveError` catches them all.

This module imports nothing: every layer (tools, llm, mcp, agent, host) derives its own
families from these classes without reaching up or sideways.

    ToolweaveError
    ├── ConfigError (also a ValueError): a bad argument, setting or config file
    │   └── ModelConfigError (toolweave.llm): a model cannot be built
    ├── MissingDependency (also an ImportError): an optional extra is not installed
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


class MissingDependency(ToolweaveError, ImportError):
    """A feature needs a package of an optional extra that is not installed; the message names
    the feature, the missing module and the `pip install 'toolweave[<extra>]'` that fixes it."""

    def __init__(self, feature: str, module: str, extra: str) -> None:
        self.feature, self.module, self.extra = feature, module, extra
        self.install = f"pip install 'toolweave[{extra}]'"
        super().__init__(f"{feature} needs {module!r}, which is not installed: {self.install}")
        self.name = module


__all__ = ["ConfigError", "MissingDependency", "ToolweaveError"]
