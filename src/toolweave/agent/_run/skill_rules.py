"""A skill's `allowed-tools` read as Claude Code permission rules.

Skills written for Claude Code list `Bash(git diff:*)`, `Read`, `Edit`, `WebFetch` or
`mcp__github__*`. Each entry is an allow rule of `toolweave.governance.Rules` (the one rule
engine: its syntax, quoting, wrappers and case handling), so `Bash(git diff:*)` admits the
built-in `bash` running `git diff` and refuses `git push`. An entry the rule syntax cannot read
still matches by tool name or glob, as it always did.

Built-in tools answer to their Claude Code family too, from the one table in
`toolweave.tools.claude_names` (`rule_names`): `read_file` is `Read`, `write_file` is `Write`
(and `Edit`, since an Edit rule covers every editing tool), `search_files` is `Grep`/`Glob` (and
`Read`, which also covers them), MCP tools are `mcp__<server>__<tool>`, and so on.
"""

from __future__ import annotations

import fnmatch
import functools
from collections.abc import Mapping, Sequence
from typing import Any

from toolweave.governance import Rules, RuleSyntaxError
from toolweave.tools.base import Tool
from toolweave.tools.claude_names import rule_names


@functools.lru_cache(maxsize=256)
def _compiled(entries: tuple[str, ...], whole: bool) -> tuple[Rules, tuple[str, ...]]:
    """Allow rules of `entries` (only their tool part unless `whole`) and the entries the rule
    syntax refused, kept as name globs."""
    rules: list[str] = []
    globs: list[str] = []
    for entry in entries:
        text = entry if whole else entry.split("(", 1)[0].strip()
        try:
            Rules(allow=[text], default="deny")
        except RuleSyntaxError:
            globs.append(text.split("(", 1)[0].strip())
            continue
        rules.append(text)
    return Rules(allow=rules, default="deny"), tuple(globs)


def admits(
    tool_name: str,
    allowed_tools: Sequence[str],
    args: Mapping[str, Any] | None,
    tool: Any,
) -> bool:
    """Whether `allowed_tools` admit calling `tool_name` with `args` (None: whether they
    admit the tool at all, so it is offered to the model)."""
    rules, globs = _compiled(tuple(allowed_tools), args is not None)
    known = tool if isinstance(tool, Tool) else None
    for name in (tool_name, *rule_names(tool_name, tool)):
        if any(fnmatch.fnmatchcase(name, glob) for glob in globs):
            return True
        found = rules.explain(name, args or {}, tool=known)
        if found.decision == "allow" and (found.rule is not None or found.parts):
            return True
    return False
