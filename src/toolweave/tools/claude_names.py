"""Claude Code's names for toolweave's tools, so pasted rules, hooks and skills find them.

Claude Code's settings, hooks and skills name tools `Bash`, `Read`, `Write`, `Edit`, `Grep`,
`Glob`, `LS`, `WebFetch`, `WebSearch`, `TodoWrite` and MCP tools `mcp__<server>__<tool>`. Every
built-in tool belongs to one of those families; a hook payload's `tool_name` is the family's
name. As Claude Code documents, an `Edit` rule covers every tool that edits files and a `Read`
rule every tool that reads them (Grep, Glob, LS); `rule_names` lists the names a rule may use.
Rules and matchers written with toolweave's own names (`read_file`, `bash`) keep working, and so
do the names HelloAgents-style skill harnesses give the skill tools (`load_skill_resource`,
`query_skill_data`: `SEED_NAMES`), so their skills' `allowed-tools` grant what they mean.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BUILTIN_FAMILIES",
    "EDIT_TOOLS",
    "READ_TOOLS",
    "SEED_NAMES",
    "claude_code_name",
    "rule_names",
    "tool_names",
]

BUILTIN_FAMILIES: dict[str, tuple[str, ...]] = {
    "bash": ("Bash",),
    "read_file": ("Read",),
    "write_file": ("Write",),
    "edit_file": ("Edit",),
    "search_files": ("Grep", "Glob"),
    "list_dir": ("LS",),
    "file_info": ("LS",),
    "fetch": ("WebFetch",),
    "web_search": ("WebSearch",),
    "todo_write": ("TodoWrite",),
}
"""toolweave built-in tool -> its Claude Code names (the first is the one hooks are sent)."""
READ_TOOLS = frozenset({"Read", "Grep", "Glob", "LS"})
"""Claude Code tools a `Read(...)` rule also covers."""
EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit"})
"""Claude Code tools an `Edit(...)` rule also covers."""
SEED_NAMES: dict[str, tuple[str, ...]] = {
    "skill_resource": ("load_skill_resource",),
    "skill_data": ("query_skill_data",),
}
"""toolweave skill tool -> the names a HelloAgents-style harness gives it (rules may use them)."""


def _mcp_name(tool: Any) -> str | None:
    server, remote = getattr(tool, "server", None), getattr(tool, "remote_name", None)
    if isinstance(server, str) and isinstance(remote, str):
        return f"mcp__{server}__{remote}"
    return None


def claude_code_name(tool_name: str, tool: Any = None) -> str:
    """The name Claude Code would give this tool: its family, `mcp__server__tool`, or (for a
    tool Claude Code has no counterpart of) its own name."""
    mcp = _mcp_name(tool)
    if mcp is not None:
        return mcp
    family = BUILTIN_FAMILIES.get(tool_name)
    return family[0] if family else tool_name


def tool_names(tool_name: str, tool: Any = None) -> tuple[str, ...]:
    """Every name a hook matcher may use for this tool: Claude Code's first, then its own."""
    mcp = _mcp_name(tool)
    names = (mcp,) if mcp is not None else BUILTIN_FAMILIES.get(tool_name, ())
    return (*names, tool_name) if tool_name not in names else names


def rule_names(tool_name: str, tool: Any = None) -> tuple[str, ...]:
    """Every tool name a permission rule may use for this tool: `tool_names` plus `Read` for
    the reading family and `Edit` for the editing family."""
    names = tool_names(tool_name, tool)
    extra = []
    if READ_TOOLS.intersection(names) and "Read" not in names:
        extra.append("Read")
    if EDIT_TOOLS.intersection(names) and "Edit" not in names:
        extra.append("Edit")
    return (*names, *extra, *SEED_NAMES.get(tool_name, ()))
