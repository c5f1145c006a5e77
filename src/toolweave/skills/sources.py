"""Skills from where people find them: a zip URL, a GitHub repository path, a SKILL.md URL, or
SKILL.md text, all through the one safe installer (`skills.install`).

`install_from(source, root, download=...)` reads `source` as:

- an existing folder or .zip file: installed as it is;
- SKILL.md text (it starts with `---`): a one-file skill;
- a GitHub path, `github.com/OWNER/REPO/tree/REF/PATH` (or `blob/REF/PATH/SKILL.md`, or just
  `github.com/OWNER/REPO` for the repository's root at its default branch): the repository
  archive `{github_base}/OWNER/REPO/archive/REF.zip` is downloaded and only PATH is installed;
  `github_base` (default `https://github.com`, which redirects to `codeload.github.com`) points
  it at a mirror or a test server;
- a URL ending in `SKILL.md`: a one-file skill named after the URL's folder;
- any other http(s) URL: a zip archive.

Downloads go through `download`, an `async (url) -> (final URL, body)` that applies the
`fetch` tool's rules (`toolweave.builtins.fetch.downloader`: public addresses only unless
allowed, the domain allow-list, every redirect hop checked, a byte cap); the archive then meets
the installer's checks (no `..`, absolute paths or links, file-count and size limits) before
anything is written. `skills.lock` records the source as given (the URL or GitHub path;
"inline" for text).
"""

from __future__ import annotations

import asyncio
import re
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import quote, urlsplit

from toolweave.skills.errors import SkillError
from toolweave.skills.install import InstallReport, install_skill
from toolweave.skills.skill import SKILL_FILE
from toolweave.skills.spec import slug_name
from toolweave.storage.files import split_frontmatter

Download = Callable[[str], Awaitable[tuple[str, bytes]]]
"""`async (url) -> (final URL, body)`; raises when the URL may not be read."""
DEFAULT_GITHUB_BASE = "https://github.com"
DEFAULT_DOWNLOAD_TIMEOUT = 60.0
"""Seconds a skill download may take (`toolweave skills install --timeout`)."""
INLINE_SOURCE = "inline"
_GITHUB = re.compile(
    r"^(?:https?://)?(?:www\.)?github\.com/(?P<owner>[\w.-]+)/(?P<repo>[\w.-]+?)(?:\.git)?"
    r"(?:/(?:tree|blob)/(?P<ref>[^/]+)(?:/(?P<path>.*?))?)?/?$"
)


@dataclass(frozen=True, slots=True)
class GitHubPath:
    """A folder of a GitHub repository at a ref (None: the default branch)."""

    owner: str
    repo: str
    ref: str | None
    path: PurePosixPath

    def archive_url(self, base: str = DEFAULT_GITHUB_BASE) -> str:
        ref = quote(self.ref or "HEAD", safe="")
        return f"{base.rstrip('/')}/{self.owner}/{self.repo}/archive/{ref}.zip"


def github_path(source: str) -> GitHubPath | None:
    """`source` as a GitHub repository path, or None when it is not one."""
    match = _GITHUB.match(source.strip())
    if match is None:
        return None
    path = PurePosixPath(match["path"] or ".")
    if path.name == SKILL_FILE:
        path = path.parent
    if any(part == ".." for part in path.parts):
        raise SkillError(f"{source}: a repository path may not hold '..'")
    return GitHubPath(match["owner"], match["repo"], match["ref"], path)


async def install_from(
    source: str,
    root: Path,
    *,
    download: Download | None = None,
    github_base: str = DEFAULT_GITHUB_BASE,
) -> InstallReport:
    """Install the skill `source` names (see the module docstring) under `root`."""
    text = source.strip()
    if text.startswith("---"):
        return await asyncio.to_thread(_install_text, source, root, INLINE_SOURCE, None)
    local = await asyncio.to_thread(_existing, text)
    if local is not None:
        return await asyncio.to_thread(install_skill, local, root)
    github = github_path(text)
    scheme = urlsplit(text).scheme
    if github is None and scheme not in ("http", "https"):
        raise SkillError(
            f"skill source {text!r} is not a folder, a .zip file, a URL, a GitHub path "
            "(github.com/OWNER/REPO/tree/REF/PATH) or SKILL.md text starting with '---'"
        )
    if download is None:
        raise SkillError(f"installing {text} needs a download function (download=...)")
    if github is not None:
        _, body = await download(github.archive_url(github_base))
        inside = None if github.path == PurePosixPath(".") else github.path
        hint = github.path.name or github.repo
        return await asyncio.to_thread(_install_archive, body, root, text, inside, hint)
    final, body = await download(text)
    folder = PurePosixPath(urlsplit(final).path)
    if folder.name.lower() == SKILL_FILE.lower():
        skill_text = body.decode("utf-8", errors="replace")
        return await asyncio.to_thread(_install_text, skill_text, root, text, folder.parent.name)
    return await asyncio.to_thread(_install_archive, body, root, text, None, folder.stem)


def _existing(text: str) -> Path | None:
    path = Path(text).expanduser()
    return path if path.exists() else None


def _install_archive(
    body: bytes, root: Path, label: str, inside: PurePosixPath | None, hint: str
) -> InstallReport:
    with tempfile.TemporaryDirectory(prefix="toolweave-skill-") as scratch:
        archive = Path(scratch) / "skill.zip"
        archive.write_bytes(body)
        return install_skill(archive, root, label=label, inside=inside, name_hint=hint or None)


def _install_text(text: str, root: Path, label: str, hint: str | None) -> InstallReport:
    if not text.lstrip().startswith("---"):
        raise SkillError(f"{label}: a SKILL.md starts with '---' frontmatter; this does not")
    meta, _ = split_frontmatter(text.lstrip(), label)
    name = meta.get("name") if isinstance(meta, dict) else None
    folder = slug_name(hint or (name if isinstance(name, str) else "") or "") or "skill"
    with tempfile.TemporaryDirectory(prefix="toolweave-skill-") as scratch:
        staged = Path(scratch) / folder
        staged.mkdir()
        (staged / SKILL_FILE).write_text(text.lstrip(), encoding="utf-8")
        return install_skill(staged, root, label=label)
