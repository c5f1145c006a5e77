"""Agent Skills spec checks: every deviation, reported while loading stays lenient.

Loading accepts what real hosts accept; `validate_skill` says what a strict reader would
refuse, agreeing with the official validator (agentskills' skills-ref) on every rule the spec
states: a name of Unicode lowercase letters, digits and single hyphens (NFKC-normalised, so
`größe` and `数据-分析` conform), equal to its folder's name; a description of at most 1024
characters; `allowed-tools` a string or a list of strings; `SKILL.md`, or `skill.md` as
skills-ref also accepts it. Where toolweave is deliberately more lenient than skills-ref (which
rejects every field outside the spec), it says so: Claude Code's own fields are known and only
type-checked, other unknown fields are warnings, and a `skill.md` is reported as a warning
because hosts (toolweave among them) load `SKILL.md`.
"""

from __future__ import annotations

import re
import unicodedata
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
_FLOW = re.compile(r"^[ \t]*([A-Za-z_][\w-]*):[ \t]*[\[{]", re.MULTILINE)
LOWERCASE_FILE = "skill.md"
"""The lowercase spelling skills-ref accepts when `SKILL.md` is absent."""


def name_problem(name: str) -> str | None:
    """Why `name` is not a spec-conforming skill name (skills-ref's rules), or None."""
    name = unicodedata.normalize("NFKC", name.strip())
    if not name:
        return "must be a non-empty string"
    if len(name) > NAME_MAX:
        return f"{len(name)} characters; at most {NAME_MAX}"
    if name != name.lower():
        return f"{name!r} must be lowercase"
    if name.startswith("-") or name.endswith("-") or "--" in name:
        return f"{name!r}: hyphens only between letters or digits, one at a time"
    if not all(c.isalnum() or c == "-" for c in name):
        return f"{name!r}: use letters, digits and hyphens only"
    return None


def is_spec_name(name: str) -> bool:
    return name_problem(name) is None


def slug_name(text: str) -> str:
    """`Agent Development` -> `agent-development`: lowercase (NFKC), every run of other
    characters one hyphen, at most `NAME_MAX` characters; empty when nothing is left."""
    text = unicodedata.normalize("NFKC", text).lower()
    return re.sub(r"[\W_]+", "-", text).strip("-")[:NAME_MAX].rstrip("-")


def folder_skill_name(folder: Path) -> str:
    """The name a skill with a display name is called by: its folder's name, or its slug."""
    return folder.name if is_spec_name(folder.name) else slug_name(folder.name)


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
    lowercase: list[SkillIssue] = []
    if not path.is_file() and (folder / LOWERCASE_FILE).is_file():
        path = folder / LOWERCASE_FILE
        message = "accepted by the spec's validator, but hosts load SKILL.md: rename it"
        lowercase.append(SkillIssue(path, "SKILL.md", message, "warning"))
    if not path.is_file():
        return [SkillIssue(path, "SKILL.md", "missing: a skill folder must contain SKILL.md")]
    try:
        data = read_frontmatter(path)
    except FrontmatterError as exc:
        return [SkillIssue(path, "frontmatter", exc.reason)]
    except OSError as exc:
        return [SkillIssue(path, "SKILL.md", f"unreadable: {exc}")]
    return lowercase + _flow_values(path) + check_frontmatter(path, data)


def _flow_values(path: Path) -> list[SkillIssue]:
    """Warnings for `key: [a, b]` / `key: {...}`: YAML that hosts read, and that skills-ref's
    StrictYAML parser refuses (the spec does not say which YAML; toolweave is lenient here)."""
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    head = text.split("\n---", 2)[0] if text.startswith("---") else ""
    return [
        SkillIssue(
            path,
            match.group(1),
            "a [...] or {...} value: skills-ref's StrictYAML refuses it (quote it or use a "
            "block list); toolweave and Claude Code read it",
            "warning",
        )
        for match in _FLOW.finditer(head)
    ]


def check_frontmatter(path: Path, data: dict[str, Any]) -> list[SkillIssue]:
    issues: list[SkillIssue] = []

    def report(field: str, message: str, severity: Literal["error", "warning"] = "error") -> None:
        issues.append(SkillIssue(path, field, message, severity))

    name = data.get("name")
    folder = path.parent.name
    if not isinstance(name, str) or not name.strip():
        report("name", "required: a lowercase-hyphenated name matching the folder")
    else:
        problem = name_problem(name)
        if problem is not None:
            report("name", problem)
        normalized = unicodedata.normalize("NFKC", name.strip())
        if normalized != unicodedata.normalize("NFKC", folder):
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
        # The spec says string values; skills-ref does not check them, so neither refuses.
        report("metadata", "the spec wants a map from string keys to string values", "warning")
    tools = data.get("allowed-tools")
    if tools is not None and not (
        isinstance(tools, str)
        or (isinstance(tools, list) and all(isinstance(t, str) for t in tools))
    ):
        report("allowed-tools", "must be a space-separated string or a list of strings")
    for key in ("disable-model-invocation", "user-invocable"):
        if key in data and not isinstance(data[key], bool):
            report(key, f"must be true or false, not {data[key]!r}")
    for key in sorted(set(data) - SPEC_FIELDS - CLAUDE_FIELDS):
        message = (
            "not a spec field (skills-ref rejects it; toolweave loads it); move it under 'metadata'"
        )
        report(key, message, "warning")
    return issues
