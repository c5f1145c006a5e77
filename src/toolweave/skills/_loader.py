"""Discovery: which folders under the roots are skills, and the `Skill` each one loads as.

Lenient like the hosts skills are written for: a name that differs from its folder loads with
a warning, unknown keys are kept in `metadata`, and only a missing frontmatter or an empty
description skips a skill. Every skip and oddity becomes a warning line naming the file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolweave.skills.skill import SKILL_FILE, Skill, split_tools
from toolweave.skills.spec import folder_skill_name, is_spec_name
from toolweave.storage.errors import FrontmatterError
from toolweave.storage.files import read_frontmatter

_OWN_FIELDS = frozenset(
    {
        "name",
        "description",
        "allowed-tools",
        "allowed_tools",
        "metadata",
        "license",
        "compatibility",
        "disable-model-invocation",
        "user-invocable",
        "argument-hint",
    }
)


@dataclass(slots=True)
class Scan:
    """The outcome of one scan: skills by name (first root wins) and the warnings."""

    skills: dict[str, Skill] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def scan(roots: list[Path], allow: frozenset[str] | None, explicit: bool) -> Scan:
    """Load every skill under `roots`, in precedence order."""
    result = Scan()
    seen: set[Path] = set()
    for root in roots:
        if not root.is_dir():
            if explicit:
                result.warnings.append(f"{root}: skill root does not exist or is not a folder")
            continue
        for folder in _candidates(root, result.warnings):
            real = folder.resolve()
            if real in seen:
                continue  # the same folder reached through a symlink: load it once
            seen.add(real)
            skill = load_skill(folder, result.warnings, None if folder == root else root)
            if skill is None:
                continue
            if allow is not None and skill.name not in allow:
                continue
            first = result.skills.get(skill.name)
            if first is not None:
                result.warnings.append(
                    f"{skill.path}: skill {skill.name!r} is shadowed by {first.path} "
                    "(an earlier root wins)"
                )
                continue
            result.skills[skill.name] = skill
    if allow is not None:
        for name in sorted(allow - set(result.skills)):
            result.warnings.append(f"allow lists {name!r} but no root has a skill of that name")
    result.skills = dict(sorted(result.skills.items()))
    return result


def _candidates(root: Path, warnings: list[str]) -> list[Path]:
    if (root / SKILL_FILE).is_file():
        return [root]  # the root is itself a skill folder
    found = []
    with os.scandir(root) as entries:  # real folders first, so a link to one loads it once
        for entry in sorted(entries, key=lambda e: (e.is_symlink(), e.name)):
            if entry.name.startswith("."):
                continue
            path = Path(entry.path)
            if entry.is_symlink() and not path.exists():
                warnings.append(f"{path}: dangling symlink, skipped")
                continue
            if entry.is_dir() and (path / SKILL_FILE).is_file():
                found.append(path)
    return found


def load_skill(folder: Path, warnings: list[str], root: Path | None = None) -> Skill | None:
    """The skill in `folder` (found in library `root`), or None (with the reason appended to
    `warnings`)."""
    path = folder / SKILL_FILE
    try:
        data = read_frontmatter(path)
    except FrontmatterError as exc:
        warnings.append(f"{path}: skipped: {exc.reason}")
        return None
    except OSError as exc:
        warnings.append(f"{path}: skipped: cannot read it ({exc.strerror or exc})")
        return None
    description = _text(data.get("description"))
    if not description:
        warnings.append(f"{path}: skipped: the description is empty (the model could not pick it)")
        return None
    name = _text(data.get("name"))
    display_name = None
    if not name:
        name = folder.name
        warnings.append(f"{path}: no name; using the folder name {name!r}")
    elif not is_spec_name(name):
        # A display name ("Writing Hookify Rules"): key the skill by a valid name from its
        # folder, so it can be called (`/writing-rules`, an MCP prompt name) and still shown.
        display_name, name = name, folder_skill_name(folder)
        if not name:
            warnings.append(
                f"{path}: skipped: cannot derive a valid name from its name {display_name!r} or "
                "its folder; give the skill a name of lowercase letters, digits and hyphens"
            )
            return None
        warnings.append(f"{path}: name {display_name!r} is a display name; called {name!r}")
    elif name not in (folder.name, folder.resolve().name):
        warnings.append(f"{path}: name {name!r} differs from its folder {folder.name!r}")
    raw_metadata = data.get("metadata")
    metadata: dict[str, Any] = dict(raw_metadata) if isinstance(raw_metadata, dict) else {}
    if raw_metadata is not None and not isinstance(raw_metadata, dict):
        metadata["metadata"] = raw_metadata
    metadata.update({k: v for k, v in data.items() if k not in _OWN_FIELDS})
    tools = data.get("allowed-tools", data.get("allowed_tools"))
    return Skill(
        name=name,
        description=description,
        dir=folder,
        allowed_tools=split_tools(tools),
        metadata=metadata,
        license=_text(data.get("license")) or None,
        compatibility=_text(data.get("compatibility")) or None,
        disable_model_invocation=data.get("disable-model-invocation") is True,
        user_invocable=data.get("user-invocable") is not False,
        argument_hint=_text(data.get("argument-hint")) or None,
        library_root=root,
        display_name=display_name,
    )


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(_text(v) for v in value).strip()
    return str(value).strip()
