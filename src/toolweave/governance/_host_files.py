"""Files the host executes or loads later: permission mode `acceptEdits` never accepts a write
into them.

`acceptEdits` accepts shell redirections into the project so a person is not asked about each
edit (the built-in `write_file` and `edit_file` are declared destructive and ask anyway). But
a write into `.git` (hooks, `core.fsmonitor`),
`.claude/` (settings, hooks and their scripts), `.agents/` (skills), `.mcp.json`, `mcp.json`
or `toolweave.toml` is not an edit like another: the host, or git run by the user, executes
what it names later, outside any sandbox and with the host's whole environment. Such a write
still follows the rules (an allow rule can allow it); with no rule it asks, in every mode but
`bypassPermissions`. The names are the sandbox's `PROTECTED_IN_WORKSPACE`, matched on any
folder level below the project root (a nested repository's `.git` included).
"""

from __future__ import annotations

import os

from toolweave.tools.sandbox import PROTECTED_IN_WORKSPACE


def loaded_by_host(path: str, root: str) -> bool:
    """Whether `path` (resolved) under the project `root` is, or is inside, a name the host
    executes or loads (`PROTECTED_IN_WORKSPACE`)."""
    relative = os.path.relpath(path, os.path.realpath(root))
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return False
    return any(part in PROTECTED_IN_WORKSPACE for part in relative.split(os.sep))
