"""The one frontmatter reader and the one atomic write: hostile frontmatter is refused cheaply
with the file named, one bad skill never stops a library from loading, and a write is whole,
keeps the file's mode and never follows a swapped-in link when told not to."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from tests.skills.factory import write_skill
from toolweave.agent.orchestration.slash_commands import parse_markdown_command
from toolweave.kb.errors import KnowledgeBaseError
from toolweave.kb.notes import Note
from toolweave.skills import SkillLibrary
from toolweave.storage import FrontmatterError, atomic_write, read_frontmatter, split_frontmatter
from toolweave.storage.files import MAX_FRONTMATTER_CHARS, MAX_FRONTMATTER_DEPTH, read_body

SELF_REFERENCE = "name: loop\ndescription: &a [*a]\n"


def laughs(levels: int = 8) -> str:
    """A few hundred bytes of aliases that expand to 9**levels strings for whoever walks them."""
    text = 'a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    for level in range(1, levels + 1):
        text += f"a{level}: &a{level} [" + ",".join([f"*a{level - 1}"] * 9) + "]\n"
    return text + f"name: laughs\ndescription: *a{levels}\n"


@pytest.mark.parametrize("yaml_text", [SELF_REFERENCE, laughs(), "name: x\nanchor: &v 1\n"])
def test_anchors_and_aliases_are_refused_naming_the_file(tmp_path: Path, yaml_text: str) -> None:
    path = tmp_path / "SKILL.md"
    path.write_text(f"---\n{yaml_text}---\nbody\n", encoding="utf-8")
    started = time.perf_counter()
    with pytest.raises(FrontmatterError, match="anchors and aliases") as caught:
        read_frontmatter(path)
    assert time.perf_counter() - started < 1.0  # refused from the event stream, nothing built
    assert caught.value.source == str(path) and str(path) in str(caught.value)


def test_deep_nesting_and_long_frontmatter_are_refused(tmp_path: Path) -> None:
    deep = "description: " + "[" * (MAX_FRONTMATTER_DEPTH + 1) + "]" * (MAX_FRONTMATTER_DEPTH + 1)
    with pytest.raises(FrontmatterError, match=f"deeper than {MAX_FRONTMATTER_DEPTH}"):
        split_frontmatter(f"---\n{deep}\n---\n", "deep.md")
    long = "---\n" + "k: v\n" * (MAX_FRONTMATTER_CHARS // 5 + 1) + "---\nbody"
    with pytest.raises(FrontmatterError, match=f"longer than {MAX_FRONTMATTER_CHARS}") as caught:
        split_frontmatter(long, "long.md")
    assert str(caught.value).startswith("long.md: ")


def test_lenient_shapes_and_cjk(tmp_path: Path) -> None:
    text = "\ufeff---\r\nname: 中文\r\ndescription: Use when: 用户问: things\r\n---\r\n正文\r\n"
    meta, body = split_frontmatter(text, "x.md")
    assert meta == {"name": "中文", "description": "Use when: 用户问: things"}
    assert body.strip() == "正文"
    assert split_frontmatter("no header 没有", "y.md") == (None, "no header 没有")
    path = tmp_path / "s.md"
    path.write_bytes(text.encode())
    assert read_frontmatter(path)["name"] == "中文" and read_body(path) == "正文"


def test_one_bad_skill_never_stops_the_library(tmp_path: Path) -> None:
    write_skill(tmp_path, "good", "name: good\ndescription: 好的技能 a good skill")
    write_skill(tmp_path, "loop", SELF_REFERENCE)
    write_skill(tmp_path, "laughs", laughs())
    write_skill(tmp_path, "broken", "name: broken\ndescription: [unclosed")
    library = SkillLibrary([tmp_path])
    assert list(library.skills) == ["good"]
    text = "\n".join(library.warnings)
    for folder in ("loop", "laughs"):
        assert f"{folder}/SKILL.md: skipped: YAML anchors and aliases" in text
    assert "broken/SKILL.md: skipped: invalid YAML" in text


def test_commands_and_notes_read_frontmatter_the_same_way() -> None:
    command = parse_markdown_command(
        "review", "---\ndescription: 审查 review\n---\nReview $ARGUMENTS", "review.md"
    )
    assert (command.description, command.template) == ("审查 review", "Review $ARGUMENTS")
    with pytest.raises(FrontmatterError, match=r"^loop\.md: YAML anchors"):
        parse_markdown_command("loop", f"---\n{SELF_REFERENCE}---\nbody", "loop.md")
    with pytest.raises(KnowledgeBaseError, match=r"note_x\.md: YAML anchors"):
        Note.from_markdown("---\nid: n\ntitle: &t T\n---\nbody", "note_x.md")
    assert Note.from_markdown("---\nid: n\ntitle: 标题\n---\n内容", "n.md").content == "内容"


def test_atomic_write_keeps_the_mode_and_writes_through_links(tmp_path: Path) -> None:
    target = tmp_path / "config.json"
    atomic_write(target, "{}\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # new files are private by default
    target.chmod(0o640)
    atomic_write(target, "新的 new")
    assert target.read_text(encoding="utf-8") == "新的 new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    link = tmp_path / "link.json"
    link.symlink_to(target)
    atomic_write(link, b"through")
    assert link.is_symlink() and target.read_bytes() == b"through"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "link.json"]  # no temp
    with pytest.raises(IsADirectoryError):
        atomic_write(tmp_path, "x")


def test_without_following_links_a_swapped_parent_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    jail = tmp_path / "jail"
    jail.mkdir()
    real = os.path.join(jail / "sub", "f.txt")
    (jail / "sub").symlink_to(outside)  # swapped in after the path was checked
    with pytest.raises(OSError):
        atomic_write(real, "x", follow_links=False)
    assert list(outside.iterdir()) == []


def test_where_there_is_no_dir_fd_the_write_goes_by_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import toolweave.storage.files as files

    monkeypatch.setattr(files, "_AT_DIR", False)  # as on Windows
    target = tmp_path / "笔记.md"
    atomic_write(target, "第一版")
    target.chmod(0o640)
    atomic_write(target, "第二版")
    assert target.read_text(encoding="utf-8") == "第二版"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["笔记.md"]
