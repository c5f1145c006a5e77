"""Agent Skills spec checks: every deviation, reported while loading stays lenient.

Loading accepts what real hosts accept; `validate_skill` says what a strict reader would
refuse (agentskills.io specification) so authors can fix it. Claude Code's extra fields are
known and checked for type, not reported as unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from toolweave.storage.errors import FrontmatterError
from toolweave.storage.files import read_frontmatter

NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500
SPEC_FIELDS = frozenset(
    {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
)
"""The frontmatter fields of the Agent Skills specification."""
CLAUDE_FIELDS = frozenset(
    {"disable-model-invocation", "user-invocable", "argument-hint", "model", "context", "agent"}
)
"""Claude Code's extra fields, understood (the first three acted on) and not reported."""
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True, slots=True)
class SkillIssue:
    """One deviation from the spec: the field, what is wrong and how to fix it."""

    path: Path
    field: str
    message: str
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        return f"{self.path}: {self.severity}: {self.field}: {self.message}"


def validate_skill(folder: str | Path) -> list[SkillIssue]:
    """Every spec deviation of the skill in `folder` (an empty list when it conforms)."""
    folder = Path(folder)
    path = folder / "SKILL.md"
    if not path.is_file():
        return [SkillIssue(path, "SKILL.md", "missing: a skill folder must contain SKILL.md")]
    try:
        data = read_frontmatter(path)
    except FrontmatterError as exc:
        return [SkillIssue(path, "frontmatter", exc.reason)]
    except OSError as exc:
        return [SkillIssue(path, "SKILL.md", f"unreadable: {exc}")]
    return check_frontmatter(path, data)


def check_frontmatter(path: Path, data: dict[str, Any]) -> list[SkillIssue]:
    issues: list[SkillIssue] = []

    def report(field: str, message: str, severity: Literal["error", "warning"] = "error") -> None:
        issues.append(SkillIssue(path, field, message, severity))

    name = data.get("name")
    folder = path.parent.name
    if not isinstance(name, str) or not name:
        report("name", "required: a lowercase-hyphenated name matching the folder")
    else:
        if len(name) > NAME_MAX:
            report("name", f"{len(name)} characters; at most {NAME_MAX}")
        if not _NAME.match(name):
            report(
                "name",
                f"{name!r}: use lowercase letters, digits and single hyphens, not at either end",
            )
        if name != folder:
            report("name", f"{name!r} differs from its folder {folder!r}; rename one of them")
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        report("description", "required: say what the skill does and when to use it")
    elif len(description) > DESCRIPTION_MAX:
        report("description", f"{len(description)} characters; at most {DESCRIPTION_MAX}")
    compatibility = data.get("compatibility")
    if compatibility is not None and (
        not isinstance(compatibility, str) or len(compatibility) > COMPATIBILITY_MAX
    ):
        report("compatibility", f"must be a string of at most {COMPATIBILITY_MAX} characters")
    if "license" in data and not isinstance(data["license"], str):
        report("license", "must be a string (a license name or a bundled file)")
    metadata = data.get("metadata")
    if metadata is not None and not (
        isinstance(metadata, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items())
    ):
        report("metadata", "must be a map from string keys to string values")
    tools = data.get("allowed-tools")
    if tools is not None and not isinstance(tools, str):
        report("allowed-tools", "must be a space-separated string (a YAML list is an extension)")
    for key in ("disable-model-invocation", "user-invocable"):
        if key in data and not isinstance(data[key], bool):
            report(key, f"must be true or false, not {data[key]!r}")
    for key in sorted(set(data) - SPEC_FIELDS - CLAUDE_FIELDS):
        report(key, "not a spec field; move it under 'metadata'", "warning")
    return issues
