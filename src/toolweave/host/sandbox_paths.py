"""What the host's sandboxes must keep read-only, and what they must not see at all.

`toolweave serve` runs sandboxed commands (`bash`, `skill_run`) in folders they may write, and
itself executes or loads files that could lie there: its `toolweave.toml`, the `[serve].hooks`
file and every script its commands name, the `[serve].commands` file and the skill roots.
`host_files` lists them for the sandbox to bind read-only (besides the names every workspace
keeps: `.git`, `.claude`, `.agents`, `.mcp.json`, `mcp.json`, `toolweave.toml`).
`private_paths` lists what holds other users' data and the host's secrets: `data_dir`
(memory, the knowledge base, the query log, quotas) and the config (tokens), hidden inside
the sandbox behind empty read-only ones.
"""

from __future__ import annotations

import os
from pathlib import Path

from toolweave.governance import Hooks
from toolweave.host.config import HostConfig
from toolweave.skills import SkillLibrary


def host_files(config: HostConfig, skill_roots: list[Path] | None) -> tuple[str, ...]:
    """Absolute paths the host executes or loads, for its sandboxes to keep read-only;
    `skill_roots` are the `[skills]` roots (`SkillsSection.root_paths`; None: the usual places).
    """
    found: list[str] = []
    if config.source is not None:
        found.append(str(config.source))
    if config.commands is not None:
        found.append(str(config.commands))
    if config.hooks is not None and config.hooks.is_file():
        root = str(config.workspace)
        found += Hooks.from_file(config.hooks, cwd=root).files()
    found += (str(r) for r in SkillLibrary(skill_roots).roots)
    return tuple(dict.fromkeys(os.path.abspath(p) for p in found))


def private_paths(config: HostConfig) -> tuple[str, ...]:
    """The host's data folder and config: no sandboxed command may read them."""
    found = [config.data_dir] + ([config.source] if config.source is not None else [])
    return tuple(os.path.abspath(p) for p in found)
