"""Built-in tools: a filesystem jail, read-only SQL, a gated shell, fetch, time, todo lists,
configurable HTTP APIs, web search and configuration tools.

Every tool here is an attack surface, so every default is the safe one; docs/builtins.md gives
the threat model. Names load on first use (PEP 562), so `import toolweave.builtins` costs
nothing until a tool is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolweave._lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "time_tool": "current_time",
    "AgentConfig": "configuration",
    "ConfigKey": "configuration",
    "config_tools": "configuration",
    "fetch_tool": "fetch",
    "html_to_markdown": "fetch",
    "filesystem_tools": "filesystem",
    "http_api_tool": "http_api",
    "web_search_tool": "http_api",
    "shell_tool": "shell",
    "SQLReader": "sql",
    "sql_tools": "sql",
    "TodoItem": "todo",
    "TodoSnapshot": "todo",
    "TodoStore": "todo",
    "todo_tool": "todo",
}

if TYPE_CHECKING:
    from toolweave.builtins.configuration import AgentConfig, ConfigKey, config_tools
    from toolweave.builtins.current_time import time_tool
    from toolweave.builtins.fetch import fetch_tool, html_to_markdown
    from toolweave.builtins.filesystem import filesystem_tools
    from toolweave.builtins.http_api import http_api_tool, web_search_tool
    from toolweave.builtins.shell import shell_tool
    from toolweave.builtins.sql import SQLReader, sql_tools
    from toolweave.builtins.todo import TodoItem, TodoSnapshot, TodoStore, todo_tool

__all__ = [
    "AgentConfig",
    "ConfigKey",
    "SQLReader",
    "TodoItem",
    "TodoSnapshot",
    "TodoStore",
    "config_tools",
    "fetch_tool",
    "filesystem_tools",
    "html_to_markdown",
    "http_api_tool",
    "shell_tool",
    "sql_tools",
    "time_tool",
    "todo_tool",
    "web_search_tool",
]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
