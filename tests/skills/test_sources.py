"""Skills installed from where people find them (a zip URL, a GitHub repository path, a
SKILL.md URL, SKILL.md text) through the one installer and the fetch rules, against a loopback
HTTP server; the GitHub path is served on loopback through `github_base`."""

from __future__ import annotations

import asyncio
import io
import json
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.builtins.fake_http import FakeServer, serving_fake
from toolweave.builtins.fetch import downloader
from toolweave.cli import app
from toolweave.skills import SkillError, SkillLibrary
from toolweave.skills.install import read_lock
from toolweave.skills.sources import github_path
from toolweave.tools import ExecutionFailed, PermissionDenied

PDF_SKILL = "---\nname: pdf-tools\ndescription: Read and split PDF files.\n---\nUse pypdf.\n"
NOTE_SKILL = (
    "---\nname: Meeting Minutes 会议纪要\ndescription: 把会议记录整理成纪要。\n---\n"
    "先列决定，再列待办。\n"
)


def _zip(files: dict[str, str | bytes], *, link: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        if link is not None:
            info = zipfile.ZipInfo(link)
            info.external_attr = 0o120777 << 16  # a symbolic link
            archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()


@pytest.fixture
async def server() -> AsyncIterator[FakeServer]:
    async with serving_fake() as fake:
        yield fake


def _library(tmp_path: Path) -> SkillLibrary:
    return SkillLibrary([tmp_path / "skills"])


async def test_a_zip_url_and_a_skill_md_url_install_and_are_locked(
    tmp_path: Path, server: FakeServer
) -> None:
    server.route("/dl/pdf.zip", _zip({"pdf-tools/SKILL.md": PDF_SKILL, "pdf-tools/x.py": "1"}))
    server.route("/skills/minutes/SKILL.md", NOTE_SKILL, content_type="text/markdown")
    server.route("/moved", "", status=302, location="/dl/pdf.zip")
    library = _library(tmp_path)
    get = downloader(allow_private=True)
    report = await library.install_from(f"{server.url}/moved", download=get)
    assert report.name == "pdf-tools" and report.files == ["SKILL.md", "x.py"]
    minutes = await library.install_from(f"{server.url}/skills/minutes/SKILL.md", download=get)
    assert minutes.path.name == "minutes"  # a display name: named after the URL's folder
    assert library.get("minutes").display_name == "Meeting Minutes 会议纪要"
    lock = read_lock(tmp_path / "skills")
    assert lock["pdf-tools"]["source"] == f"{server.url}/moved"
    assert lock["minutes"]["source"] == f"{server.url}/skills/minutes/SKILL.md"


async def test_a_github_path_installs_one_folder_of_the_repository_archive(
    tmp_path: Path, server: FakeServer
) -> None:
    archive = _zip(
        {
            "agent-skills-main/README.md": "# skills",
            "agent-skills-main/skills/pdf/SKILL.md": PDF_SKILL,
            "agent-skills-main/skills/pdf/reference.md": "pages",
            "agent-skills-main/skills/minutes/SKILL.md": NOTE_SKILL,
        }
    )
    server.route("/acme/agent-skills/archive/main.zip", archive)
    source = "https://github.com/acme/agent-skills/tree/main/skills/pdf"
    library = _library(tmp_path)
    report = await library.install_from(
        source, download=downloader(allow_private=True), github_base=server.url
    )
    assert report.name == "pdf-tools" and report.files == ["SKILL.md", "reference.md"]
    assert [r.target for r in server.requests] == ["/acme/agent-skills/archive/main.zip"]
    assert read_lock(tmp_path / "skills")["pdf-tools"]["source"] == source
    with pytest.raises(SkillError, match="nothing under skills/absent/"):
        await library.install_from(
            "github.com/acme/agent-skills/tree/main/skills/absent",
            download=downloader(allow_private=True),
            github_base=server.url,
        )
    blob = github_path("github.com/acme/agent-skills/blob/v2/skills/pdf/SKILL.md")
    assert blob is not None and (blob.ref, str(blob.path)) == ("v2", "skills/pdf")
    assert blob.archive_url() == "https://github.com/acme/agent-skills/archive/v2.zip"
    root = github_path("https://github.com/acme/one-skill")
    assert root is not None and root.archive_url().endswith("/archive/HEAD.zip")


async def test_the_fetch_rules_and_the_installer_checks_hold(
    tmp_path: Path, server: FakeServer
) -> None:
    server.route("/pdf.zip", _zip({"pdf/SKILL.md": PDF_SKILL}))
    server.route("/slip.zip", _zip({"pdf/SKILL.md": PDF_SKILL, "../../evil.sh": "rm -rf ~"}))
    server.route("/link.zip", _zip({"pdf/SKILL.md": PDF_SKILL}, link="pdf/passwd"))
    server.route("/away", "", status=302, location=f"http://localhost:{server.port}/pdf.zip")
    library = _library(tmp_path)
    with pytest.raises(PermissionDenied, match="private, loopback or reserved"):
        await library.install_from(f"{server.url}/pdf.zip", download=downloader())
    allowed = downloader(["127.0.0.1"], allow_private=True)
    with pytest.raises(PermissionDenied, match="'localhost' is not in allow_domains"):
        await library.install_from(f"{server.url}/away", download=allowed)
    with pytest.raises(ExecutionFailed, match="larger than 100 bytes"):
        await library.install_from(
            f"{server.url}/pdf.zip", download=downloader(allow_private=True, max_bytes=100)
        )
    with pytest.raises(SkillError, match=r"refused member '\.\./\.\./evil\.sh'"):
        await library.install_from(f"{server.url}/slip.zip", download=allowed)
    with pytest.raises(SkillError, match="a link"):
        await library.install_from(f"{server.url}/link.zip", download=allowed)
    with pytest.raises(SkillError, match=r"not a folder, a \.zip file, a URL, a GitHub path"):
        await library.install_from("ftp://example.com/x.zip", download=allowed)
    assert not (tmp_path / "skills").exists() or list((tmp_path / "skills").iterdir()) == []
    assert not (tmp_path / "evil.sh").exists()


async def test_the_cli_installs_inline_text_and_urls(tmp_path: Path, server: FakeServer) -> None:
    server.route("/pdf.zip", _zip({"pdf/SKILL.md": PDF_SKILL}))
    root = tmp_path / "skills"
    runner = CliRunner()

    def install(*args: str, stdin: str | None = None) -> tuple[int, str]:
        result = runner.invoke(app, ["skills", "install", *args, "--root", str(root)], input=stdin)
        return result.exit_code, result.output

    code, out = await asyncio.to_thread(install, "-", stdin=NOTE_SKILL)
    assert code == 0 and "installed meeting-minutes" in out, out  # the slug of its name
    code, out = await asyncio.to_thread(install, f"{server.url}/pdf.zip")
    assert code == 2 and "private, loopback or reserved" in out
    code, out = await asyncio.to_thread(install, f"{server.url}/pdf.zip", "--allow-private")
    assert code == 0 and "installed pdf-tools" in out, out
    lock = json.loads((root / "skills.lock").read_text(encoding="utf-8"))["skills"]
    assert sorted(entry["source"] for entry in lock.values()) == sorted(
        ["inline", f"{server.url}/pdf.zip"]
    )
    code, out = await asyncio.to_thread(install, "-", stdin="no frontmatter here")
    assert code == 2 and "not a folder, a .zip file, a URL" in out


async def test_skill_install_downloads_only_where_downloads_are_configured(
    tmp_path: Path, server: FakeServer
) -> None:
    from toolweave.tools import ToolContext

    server.route("/pdf.zip", _zip({"pdf/SKILL.md": PDF_SKILL}))
    library = _library(tmp_path)
    (tmp_path / "skills").mkdir()
    offline = {t.name: t for t in library.tools(self_management=True)}["skill_install"]
    with pytest.raises(SkillError, match=r"downloads are off.*\[skills\]\.install_domains"):
        await offline.execute({"source": f"{server.url}/pdf.zip"}, ToolContext())
    assert server.requests == []
    inline = await offline.execute({"source": NOTE_SKILL}, ToolContext())
    assert not inline.is_error and inline.structured["name"] == "meeting-minutes-会议纪要"
    online = library.tools(self_management=True, download=downloader(allow_private=True))
    tool = {t.name: t for t in online}["skill_install"]
    done = await tool.execute({"source": f"{server.url}/pdf.zip"}, ToolContext())
    assert not done.is_error and done.structured["name"] == "pdf-tools"
    assert read_lock(tmp_path / "skills")["pdf-tools"]["source"] == f"{server.url}/pdf.zip"
