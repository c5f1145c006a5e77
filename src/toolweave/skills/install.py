"""Installing and removing skills: from a folder or a zip, refused before anything is written.

Every archive member is checked first (no `..`, absolute paths, drive letters or links; size
and file-count limits), the skill is unpacked into a staging folder next to its destination,
loaded and validated there, and only then renamed into place, so a failed install leaves
nothing behind. The source and a content hash go into `skills.lock` in the root.

The installed folder gets a spec-conforming name: the skill's own name when it is one, else the
source folder's name, else a slug of the name (`Agent Development` -> `agent-development`);
the skill keeps its display name. A skill with no `name:` is named after its source folder
(staging happens in a folder of that name, never under the staging folder's own name).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

from toolweave.skills._loader import load_skill
from toolweave.skills.errors import SkillError
from toolweave.skills.skill import SKILL_FILE, Skill
from toolweave.skills.spec import SkillIssue, is_spec_name, slug_name, validate_skill
from toolweave.storage.files import atomic_write

MAX_INSTALL_BYTES = 20_000_000
"""A skill (unpacked) may hold at most this many bytes."""
MAX_INSTALL_FILES = 1_000
"""A skill may hold at most this many files."""
LOCKFILE = "skills.lock"


@dataclass(frozen=True, slots=True)
class InstallReport:
    """What `install` did: where the skill went, what it bundles, what the spec checks said."""

    name: str
    path: Path
    source: str
    sha256: str
    files: list[str]
    scripts: list[str]
    issues: list[SkillIssue] = field(default_factory=list)


def install_skill(
    source: Path,
    root: Path,
    *,
    label: str | None = None,
    inside: PurePosixPath | None = None,
    name_hint: str | None = None,
) -> InstallReport:
    """Install the skill at `source` (a folder or a .zip) under `root`. `label` is the source
    `skills.lock` records (a URL; default: the path); `inside` picks a folder of an archive
    whose members share one top folder (a GitHub repository archive: `skills/pdf`);
    `name_hint` names the skill's folder when the source's own name says nothing."""
    if source.is_dir():
        members = _folder_members(source)
    elif source.is_file() and zipfile.is_zipfile(source):
        members = _zip_members(source)
    else:
        raise SkillError(f"source {str(source)!r} is neither a skill folder nor a zip file")
    if inside is not None:
        members = [
            m
            for m in members
            if len(m.parts) > 1 and PurePosixPath(*m.parts[1:]).is_relative_to(inside)
        ]
        if not members:
            raise SkillError(f"{label or source}: the archive has nothing under {inside}/")
    prefix = _skill_prefix(members, source)
    source_name = (
        prefix.name or name_hint or (source.stem if source.is_file() else source.resolve().name)
    )
    root.mkdir(parents=True, exist_ok=True)
    holder = Path(tempfile.mkdtemp(prefix=".install-", dir=root))
    staging = holder / source_name
    try:
        staging.mkdir()
        files = _unpack(source, members, prefix, staging)
        warnings: list[str] = []
        skill = load_skill(staging, warnings)
        if skill is None:
            raise SkillError(f"{source} is not a loadable skill: {'; '.join(warnings)}")
        folder = installed_name(skill.title, source_name)
        issues = [
            i for i in validate_skill(staging) if i.field != "name" or "folder" not in i.message
        ]
        final = install_folder(root, folder)
        if final.exists() or final.is_symlink():
            raise SkillError(
                f"a skill {skill.title!r} is already installed at {final}; remove it first"
            )
        digest = content_hash(staging)
        os.replace(staging, final)
    finally:
        shutil.rmtree(holder, ignore_errors=True)
    # The name the library calls it by: a display name's skill is called by its folder.
    name = final.name if skill.display_name else skill.name
    recorded = label or str(source)
    _write_lock(root, name, {"source": recorded, "sha256": digest, "installed": _now()})
    return InstallReport(
        name=name,
        path=final,
        source=recorded,
        sha256=digest,
        files=files,
        scripts=[f for f in files if f.startswith("scripts/")],
        issues=[SkillIssue(final / SKILL_FILE, i.field, i.message, i.severity) for i in issues],
    )


def installed_name(name: str, source_name: str) -> str:
    """The folder a skill named `name`, found in folder `source_name`, is installed as: the
    first of the name, the source folder's name, and slugs of both that conforms to the spec."""
    for candidate in (name, source_name, slug_name(name), slug_name(source_name)):
        if candidate and is_spec_name(candidate):
            return candidate
    raise SkillError(
        f"cannot derive a folder name from skill name {name!r} or folder {source_name!r}; "
        "give the skill a name of lowercase letters, digits and hyphens"
    )


def install_folder(root: Path, name: str) -> Path:
    """`root / name` once `name` is checked to be one plain path component, so no frontmatter
    (`../../x`, `/abs/path`, `a/b`, `..`) can place a skill anywhere but directly in `root`."""
    bad = (
        not name
        or name in (".", "..")
        or any(c in name for c in ("/", "\\", "\0"))
        or PurePosixPath(name).is_absolute()
        or (len(name) > 1 and name[1] == ":")
    )
    final = root / name
    if bad or final.resolve().parent != root.resolve():
        raise SkillError(
            f"skill name {name!r} is not a single folder name: it would install outside "
            f"{root}; use lowercase letters, digits and hyphens"
        )
    return final


def remove_skill(skill: Skill) -> Path:
    """Delete `skill`'s folder (a symlinked folder: only the link) and its lock entry."""
    folder = skill.dir
    if folder.is_symlink():
        folder.unlink()
    else:
        shutil.rmtree(folder)
    _write_lock(folder.parent, skill.name, None)
    return folder


def content_hash(folder: Path) -> str:
    """sha256 over every file's relative path and bytes, in sorted order."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def read_lock(root: Path) -> dict[str, dict[str, str]]:
    """The `skills.lock` entries of `root` (name -> source, sha256, installed)."""
    try:
        data = json.loads((root / LOCKFILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, json.JSONDecodeError) as exc:
        raise SkillError(f"{root / LOCKFILE} is unreadable ({exc}); fix or delete it") from exc
    skills = data.get("skills", {}) if isinstance(data, dict) else {}
    return skills if isinstance(skills, dict) else {}


def _write_lock(root: Path, name: str, entry: dict[str, str] | None) -> None:
    skills = read_lock(root)
    if entry is None:
        if name not in skills:
            return
        del skills[name]
    else:
        skills[name] = entry
    text = json.dumps({"version": 1, "skills": dict(sorted(skills.items()))}, indent=2) + "\n"
    atomic_write(root / LOCKFILE, text, new_mode=0o644)


def _check_member(name: str, where: Path) -> PurePosixPath:
    posix = name.replace("\\", "/")
    path = PurePosixPath(posix)
    if (
        posix.startswith("/")
        or (len(posix) > 1 and posix[1] == ":")
        or any(part == ".." for part in path.parts)
    ):
        raise SkillError(f"{where}: refused member {name!r} (absolute path, drive or '..')")
    return path


def _check_limits(count: int, size: int, where: Path) -> None:
    if count > MAX_INSTALL_FILES:
        raise SkillError(f"{where}: {count} files, over the limit of {MAX_INSTALL_FILES}")
    if size > MAX_INSTALL_BYTES:
        raise SkillError(f"{where}: {size} bytes, over the limit of {MAX_INSTALL_BYTES}")


def _zip_members(source: Path) -> list[PurePosixPath]:
    members, size = [], 0
    with zipfile.ZipFile(source) as archive:
        for info in archive.infolist():
            path = _check_member(info.filename, source)
            if stat.S_ISLNK(info.external_attr >> 16):
                raise SkillError(f"{source}: refused member {info.filename!r} (a link)")
            if info.is_dir():
                continue
            members.append(path)
            size += info.file_size
    _check_limits(len(members), size, source)
    return members


def _folder_members(source: Path) -> list[PurePosixPath]:
    members, size = [], 0
    for current, dirs, files in os.walk(source):
        for name in dirs + files:
            path = Path(current) / name
            if path.is_symlink():
                raise SkillError(f"{source}: refused {path.relative_to(source)} (a link)")
        dirs[:] = [d for d in dirs if d not in (".git", "__pycache__")]
        for name in files:
            path = Path(current) / name
            members.append(PurePosixPath(path.relative_to(source).as_posix()))
            size += path.stat().st_size
        _check_limits(len(members), size, source)
    return members


def _skill_prefix(members: list[PurePosixPath], source: Path) -> PurePosixPath:
    """The folder inside the source that holds SKILL.md (a zip may wrap it in one folder)."""
    found = sorted((m.parent for m in members if m.name == SKILL_FILE), key=lambda p: len(p.parts))
    if not found:
        raise SkillError(f"{source}: no {SKILL_FILE} found; a skill folder must contain one")
    if len(found) > 1 and len(found[1].parts) == len(found[0].parts):
        raise SkillError(f"{source}: holds several skills ({found[0]}, {found[1]}); install one")
    return found[0]


def _unpack(
    source: Path, members: list[PurePosixPath], prefix: PurePosixPath, staging: Path
) -> list[str]:
    inside = [m for m in members if prefix == PurePosixPath(".") or m.is_relative_to(prefix)]
    relative = [m.relative_to(prefix) if prefix != PurePosixPath(".") else m for m in inside]
    if source.is_dir():
        for member, rel in zip(inside, relative, strict=True):
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / member, target)
    else:
        with zipfile.ZipFile(source) as archive:
            for member, rel in zip(inside, relative, strict=True):
                target = staging / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(str(member)) as src, target.open("wb") as dst:
                    shutil.copyfileobj(src, dst)
    return sorted(r.as_posix() for r in relative)


def _now() -> str:
    return datetime.now(UTC).replace(microsecond=0).isoformat()
