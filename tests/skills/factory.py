"""Helpers that write skill folders for the skills tests."""

from __future__ import annotations

from pathlib import Path


def write_skill(
    root: Path,
    folder: str,
    frontmatter: str | None,
    body: str = "Do the thing.",
    files: dict[str, str] | None = None,
) -> Path:
    """`root/folder/SKILL.md` with `frontmatter` (raw YAML; None = no frontmatter) and files."""
    directory = root / folder
    directory.mkdir(parents=True, exist_ok=True)
    text = body if frontmatter is None else f"---\n{frontmatter.strip()}\n---\n{body}\n"
    (directory / "SKILL.md").write_text(text, encoding="utf-8")
    for rel, content in (files or {}).items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return directory
