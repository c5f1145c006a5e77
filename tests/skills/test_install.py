"""Install and remove: folders and zips, hostile archives refused before anything is written."""

from __future__ import annotations

import json
import os
import shutil
import stat
import zipfile
from pathlib import Path

import pytest

from tests.skills.factory import write_skill
from toolweave.skills import SkillError, SkillLibrary

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


def make_zip(path: Path, members: dict[str, str], links: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return path


@pytest.fixture
def library(tmp_path: Path) -> SkillLibrary:
    return SkillLibrary([tmp_path / "first", tmp_path / "second"])


def test_install_folder_records_lock_and_reloads(library: SkillLibrary, tmp_path: Path) -> None:
    report = library.install(EXAMPLES / "release-notes")
    root = tmp_path / "first"
    assert report.name == "release-notes" and report.path == root / "release-notes"
    assert report.files == ["SKILL.md", "scripts/collect.sh", "templates/release.md"]
    assert report.scripts == ["scripts/collect.sh"] and report.issues == []
    assert "release-notes" in library.skills  # hot reload
    assert os.access(root / "release-notes/scripts/collect.sh", os.X_OK)  # modes kept
    lock = json.loads((root / "skills.lock").read_text())
    entry = lock["skills"]["release-notes"]
    assert entry["source"] == str(EXAMPLES / "release-notes") and entry["sha256"] == report.sha256
    with pytest.raises(SkillError, match="already installed"):
        library.install(EXAMPLES / "release-notes")
    other = library.install(EXAMPLES / "code-review", into=tmp_path / "second")
    assert other.path == tmp_path / "second" / "code-review"
    assert library.remove("release-notes") == root / "release-notes"
    assert not (root / "release-notes").exists() and "release-notes" not in library.skills
    assert json.loads((root / "skills.lock").read_text())["skills"] == {}


def test_install_zip_wrapped_in_one_folder(library: SkillLibrary, tmp_path: Path) -> None:
    archive = make_zip(
        tmp_path / "repo.zip",
        {
            "repo-main/SKILL.md": "---\nname: zipped\ndescription: 压缩包里的技能\n---\nBody",
            "repo-main/refs/a.md": "a",
        },
    )
    report = library.install(archive)
    assert report.files == ["SKILL.md", "refs/a.md"] and report.scripts == []
    assert library.get("zipped").read_resource("refs/a.md") == "a"


@pytest.mark.parametrize(
    ("members", "links", "message"),
    [
        ({"../evil/SKILL.md": "x"}, None, "refused member '../evil/SKILL.md'"),
        ({"/abs/SKILL.md": "x"}, None, "refused member '/abs/SKILL.md'"),
        ({"C:/win/SKILL.md": "x"}, None, "refused member 'C:/win/SKILL.md'"),
        ({"a\\..\\..\\SKILL.md": "x"}, None, "refused member"),
        ({"SKILL.md": "---\nname: l\ndescription: d\n---\n"}, {"link": "/etc/passwd"}, "a link"),
        ({"README.md": "no skill"}, None, "no SKILL.md found"),
        ({"a/SKILL.md": "x", "b/SKILL.md": "y"}, None, "holds several skills"),
        ({"SKILL.md": "no frontmatter"}, None, "not a loadable skill"),
    ],
)
def test_hostile_or_broken_zips_write_nothing(
    library: SkillLibrary,
    tmp_path: Path,
    members: dict[str, str],
    links: dict[str, str] | None,
    message: str,
) -> None:
    archive = make_zip(tmp_path / "bad.zip", members, links)
    with pytest.raises(SkillError, match=message.replace("\\", "\\\\")):
        library.install(archive)
    root = tmp_path / "first"
    assert not root.exists() or sorted(p.name for p in root.iterdir()) == []
    assert not (tmp_path / "evil").exists() and len(library) == 0


def test_limits_and_links_in_folders(
    library: SkillLibrary, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = write_skill(tmp_path / "src", "big", "name: big\ndescription: d", files={"a": "1234"})
    monkeypatch.setattr("toolweave.skills.install.MAX_INSTALL_FILES", 1)
    with pytest.raises(SkillError, match="2 files, over the limit of 1"):
        library.install(source)
    monkeypatch.setattr("toolweave.skills.install.MAX_INSTALL_FILES", 100)
    monkeypatch.setattr("toolweave.skills.install.MAX_INSTALL_BYTES", 10)
    with pytest.raises(SkillError, match="bytes, over the limit of 10"):
        library.install(source)
    monkeypatch.setattr("toolweave.skills.install.MAX_INSTALL_BYTES", 10_000)
    os.symlink("/etc/passwd", source / "passwd")
    with pytest.raises(SkillError, match="refused passwd \\(a link\\)"):
        library.install(source)
    os.unlink(source / "passwd")
    archive = make_zip(tmp_path / "many.zip", {"SKILL.md": "x", "b": "y"})
    monkeypatch.setattr("toolweave.skills.install.MAX_INSTALL_FILES", 1)
    with pytest.raises(SkillError, match="over the limit of 1"):
        library.install(archive)
    with pytest.raises(SkillError, match="neither a skill folder nor a zip"):
        library.install(tmp_path / "missing")
    assert not (tmp_path / "first").exists() or list((tmp_path / "first").iterdir()) == []


def test_remove_a_symlinked_skill_keeps_its_target(library: SkillLibrary, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "linked"
    shutil.copytree(EXAMPLES / "code-review", target)
    (tmp_path / "first").mkdir()
    os.symlink(target, tmp_path / "first" / "code-review")
    library.reload()
    library.remove("code-review")
    assert target.is_dir() and not (tmp_path / "first" / "code-review").exists()
    with pytest.raises(SkillError, match="no skill named 'code-review'"):
        library.remove("code-review")
    with pytest.raises(SkillError, match="no roots to install into; pass into="):
        SkillLibrary([]).install(EXAMPLES / "code-review")


def test_display_names_install_under_a_derived_folder(
    library: SkillLibrary, tmp_path: Path
) -> None:
    root = tmp_path / "first"
    spaced = write_skill(
        tmp_path / "src", "agent-development", "name: Agent Development\ndescription: d"
    )
    report = library.install(spaced)
    assert report.name == "agent-development" and report.path == root / "agent-development"
    assert library.get("Agent Development").dir == root / "agent-development"
    assert library.get("agent-development").title == "Agent Development"
    # Underscores, a source folder that is itself no spec name: a slug of the name.
    odd = write_skill(
        tmp_path / "src", "Google Admin", "name: google_admin-automation\ndescription: d"
    )
    assert library.install(odd).path == root / "google-admin-automation"
    # A CJK display name keeps its letters (the spec allows Unicode lowercase).
    cjk = write_skill(tmp_path / "src", "数据 分析", "name: 数据 分析\ndescription: 中文技能")
    assert library.install(cjk).path == root / "数据-分析"
    assert sorted(json.loads((root / "skills.lock").read_text())["skills"]) == [
        "agent-development",
        "google-admin-automation",
        "数据-分析",
    ]
    assert [p.name for p in root.iterdir() if p.name.startswith(".install-")] == []


def test_a_skill_without_a_name_takes_its_source_folder_name(
    library: SkillLibrary, tmp_path: Path
) -> None:
    nameless = write_skill(tmp_path / "src", "pdf-tools", "description: Work with PDFs")
    report = library.install(nameless)
    assert report.name == "pdf-tools" and report.path == tmp_path / "first" / "pdf-tools"
    with pytest.raises(SkillError, match="'pdf-tools' is already installed"):
        library.install(nameless)
    archive = make_zip(tmp_path / "docx.zip", {"SKILL.md": "---\ndescription: Word files\n---\nx"})
    assert library.install(archive).name == "docx"  # a zip with no folder: the zip's name
    hopeless = make_zip(
        tmp_path / "___.zip", {"SKILL.md": "---\nname: '!!'\ndescription: d\n---\n"}
    )
    with pytest.raises(SkillError, match="cannot derive a valid name from its name '!!'"):
        library.install(hopeless)


@pytest.mark.parametrize(
    "name", ["../../folder-escape", "../folder-up", "nested/folder", "..", "a\\\\folder"]
)
def test_a_name_that_is_not_one_folder_never_installs_outside(
    name: str, library: SkillLibrary, tmp_path: Path
) -> None:
    source = write_skill(tmp_path / "src", "escape", f'name: "{name}"\ndescription: Escapes.')
    root = tmp_path / "first"
    # The frontmatter's name is never a folder: the skill lands under its source folder's name.
    assert library.install(source).path == root / "escape"
    assert not (tmp_path / "folder-escape").exists() and not (tmp_path / "folder-up").exists()
    assert not (root / "nested").exists()
    assert sorted(p.name for p in root.iterdir()) == ["escape", "skills.lock"]  # no staging left


def test_an_absolute_name_never_installs_there(library: SkillLibrary, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "folder-abs"
    source = write_skill(tmp_path / "src", "abs", f'name: "{target}"\ndescription: Escapes.')
    assert library.install(source).path == tmp_path / "first" / "abs"
    assert not target.exists() and not target.parent.exists()


def test_install_folder_accepts_one_component_cjk_included(tmp_path: Path) -> None:
    from toolweave.skills.install import install_folder

    assert install_folder(tmp_path, "release-notes") == tmp_path / "release-notes"
    assert install_folder(tmp_path, "发布说明") == tmp_path / "发布说明"
    for bad in ("", ".", "..", "a/b", "/etc", "C:evil", "x\0y", "a\\b"):
        with pytest.raises(SkillError, match="not a single folder name"):
            install_folder(tmp_path, bad)
