"""Filesystem tools: the jail's attack table and the ordinary read/write/edit/list/search work.

Every attack asserts that nothing outside the jail was read (the secret never appears) or
written (the sentinel and the outside directory are byte-for-byte unchanged).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toolweave.builtins import filesystem_tools
from toolweave.governance import Rules
from toolweave.tools import PermissionDenied, Tool, ToolContext, ToolError

SECRET = "TOP-SECRET-行星"


def tools(root: Path, **options: object) -> dict[str, Tool]:
    return {t.name: t for t in filesystem_tools(root, **options)}  # type: ignore[arg-type]


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Path]:
    """A jail `root`, a sibling `root2` sharing its prefix, and an outside dir with a secret."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "docs").mkdir()
    (root / "docs" / "readme.md").write_text("# 标题 Title\nhello 世界\n", encoding="utf-8")
    sibling = tmp_path / "root2"
    sibling.mkdir()
    (sibling / "secret.txt").write_text(SECRET)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (outside / "sentinel").write_text("unchanged")
    (root / "link_out").symlink_to(outside / "secret.txt")
    (root / "dir_out").symlink_to(outside, target_is_directory=True)
    return {"root": root, "outside": outside, "sibling": sibling, "tmp": tmp_path}


def snapshot(*dirs: Path) -> dict[str, bytes]:
    found = {}
    for directory in dirs:
        for dirpath, _, files in os.walk(directory):
            for name in files:
                path = Path(dirpath) / name
                found[str(path)] = path.read_bytes()
    return found


TRAVERSALS = [
    "../outside/secret.txt",
    "docs/../../outside/secret.txt",
    "{outside}/secret.txt",  # absolute, outside
    "../root2/secret.txt",  # sibling prefix
    "{tmp}/root2/secret.txt",  # absolute sibling prefix
    "link_out",  # symlink pointing out
    "dir_out/secret.txt",  # symlinked parent
    "docs/readme.md\x00.txt",  # null byte
    "~/secret.txt",
    "~root/.bashrc",
]


def expand(path: str, world: dict[str, Path]) -> str:
    return path.format(outside=world["outside"], tmp=world["tmp"])


@pytest.mark.parametrize("path", TRAVERSALS)
async def test_reads_outside_the_jail_are_refused(path: str, world: dict[str, Path]) -> None:
    fs = tools(world["root"])
    for name, args in [
        ("read_file", {"path": expand(path, world)}),
        ("file_info", {"path": expand(path, world)}),
        ("list_dir", {"path": expand(path, world)}),
        ("search_files", {"path": expand(path, world), "contains": "SECRET"}),
    ]:
        with pytest.raises(PermissionDenied, match="refused") as caught:
            await fs[name].execute(args, ToolContext())
        assert SECRET not in caught.value.message and caught.value.recoverable


@pytest.mark.parametrize("path", [*TRAVERSALS, "dir_out/new.txt", "../outside/new.txt"])
async def test_writes_outside_the_jail_are_refused(path: str, world: dict[str, Path]) -> None:
    fs = tools(world["root"])
    before = snapshot(world["outside"], world["sibling"])
    for name, args in [
        ("write_file", {"path": expand(path, world), "content": "pwned"}),
        ("edit_file", {"path": expand(path, world), "old_text": SECRET, "new_text": "pwned"}),
    ]:
        with pytest.raises(PermissionDenied):
            await fs[name].execute(args, ToolContext())
    assert snapshot(world["outside"], world["sibling"]) == before
    assert (world["outside"] / "sentinel").read_text() == "unchanged"


async def test_search_never_follows_links_out(world: dict[str, Path]) -> None:
    fs = tools(world["root"])
    found = await fs["search_files"].execute({"contains": "secret"}, ToolContext())
    everything = await fs["search_files"].execute({}, ToolContext())
    assert SECRET not in found.text and "no matches" in found.text
    assert "docs/readme.md" in everything.text and "secret" not in everything.text


async def test_search_caps_matches_and_names_skipped_files(world: dict[str, Path]) -> None:
    root = world["root"]
    (root / "many.txt").write_text("匹配 match\n" * 20, encoding="utf-8")
    (root / "huge.log").write_bytes(b"match\n" * 200_000)
    fs = tools(root, max_entries=5)
    found = await fs["search_files"].execute({"contains": "match"}, ToolContext())
    assert found.text.count("many.txt:") == 5 and "stopped after 5 matches" in found.text
    logs = await fs["search_files"].execute({"pattern": "*.log", "contains": "x"}, ToolContext())
    assert "1 files larger than" in logs.text


async def test_absolute_path_inside_the_root_is_fine(world: dict[str, Path]) -> None:
    fs = tools(world["root"])
    result = await fs["read_file"].execute(
        {"path": str(world["root"] / "docs" / "readme.md")}, ToolContext()
    )
    assert "hello 世界" in result.text


async def test_read_write_edit_list_info_in_chinese_and_english(world: dict[str, Path]) -> None:
    fs = tools(world["root"])
    ctx = ToolContext()
    made = await fs["write_file"].execute({"path": "notes/新/笔记.md", "content": "x"}, ctx)
    assert "wrote" in made.text and (world["root"] / "notes" / "新" / "笔记.md").read_text() == "x"
    wrote = await fs["write_file"].execute(
        {"path": "docs/笔记.md", "content": "第一行 first\n第二行 second\n"}, ctx
    )
    assert "wrote" in wrote.text
    edited = await fs["edit_file"].execute(
        {"path": "docs/笔记.md", "old_text": "第二行", "new_text": "第2行"}, ctx
    )
    assert "1 occurrence" in edited.text
    read = await fs["read_file"].execute({"path": "docs/笔记.md"}, ctx)
    assert "第2行 second" in read.text and read.text.startswith('<tool_output tool="read_file">')
    listing = await fs["list_dir"].execute({"path": "docs"}, ctx)
    assert listing.text.index("readme.md") < listing.text.index("笔记.md")
    grep = await fs["search_files"].execute({"pattern": "*.md", "contains": "SECOND"}, ctx)
    assert "docs/笔记.md:2: 第2行 second" in grep.text
    info = await fs["file_info"].execute({"path": "docs/笔记.md"}, ctx)
    assert info.structured["type"] == "file" and info.structured["size"] > 0


async def test_edit_requires_a_unique_match(world: dict[str, Path]) -> None:
    fs = tools(world["root"])
    (world["root"] / "a.txt").write_text("x x x")
    with pytest.raises(ToolError, match="occurs 3 times"):
        await fs["edit_file"].execute(
            {"path": "a.txt", "old_text": "x", "new_text": "y"}, ToolContext()
        )
    with pytest.raises(ToolError, match="not found"):
        await fs["edit_file"].execute(
            {"path": "a.txt", "old_text": "z", "new_text": "y"}, ToolContext()
        )
    await fs["edit_file"].execute(
        {"path": "a.txt", "old_text": "x", "new_text": "y", "replace_all": True}, ToolContext()
    )
    assert (world["root"] / "a.txt").read_text() == "y y y"


async def test_write_replaces_a_link_inside_never_writes_through_it(world: dict[str, Path]) -> None:
    """A link inside the jail pointing inside: the write lands on the real target by rename,
    and no temporary file is left behind."""
    root = world["root"]
    (root / "inner_link").symlink_to(root / "docs" / "readme.md")
    fs = tools(root)
    await fs["write_file"].execute({"path": "inner_link", "content": "new"}, ToolContext())
    assert (root / "docs" / "readme.md").read_text() == "new"
    assert not [p for p in (root / "docs").iterdir() if p.name.endswith(".tmp")]


async def test_reads_are_capped_with_a_note_and_resume_by_offset(world: dict[str, Path]) -> None:
    fs = tools(world["root"], max_read_bytes=10)
    (world["root"] / "long.txt").write_text("一二三四五六七八", encoding="utf-8")  # 24 bytes
    first = await fs["read_file"].execute({"path": "long.txt"}, ToolContext())
    assert "一二三" in first.text and "四" not in first.text.split("[...")[0]
    assert "offset=9" in first.text  # the 10th byte is inside 四: left for the next read
    rest = await fs["read_file"].execute({"path": "long.txt", "offset": 9}, ToolContext())
    assert rest.text.count("四五六") == 1


async def test_read_only_mode_has_no_write_tools(world: dict[str, Path]) -> None:
    assert sorted(tools(world["root"], writable=False)) == [
        "file_info",
        "list_dir",
        "read_file",
        "search_files",
    ]
    assert tools(world["root"])["read_file"].primary_arg == "path"
    with pytest.raises(ValueError, match="max_read_bytes"):
        filesystem_tools(world["root"], max_read_bytes=0)
    with pytest.raises(ValueError, match="not an existing directory"):
        filesystem_tools(world["root"] / "missing")


@pytest.mark.parametrize(
    "rule", ["read_file(secret.txt)", "read_file(./secret.txt)", "Read(secret.txt)"]
)
async def test_path_rules_match_the_file_that_is_opened(rule: str, world: dict[str, Path]) -> None:
    """The jail is not the rules' working directory: an absolute path into the jail, a link
    alias and a detour all meet the rule written for `secret.txt`."""
    root = world["root"]
    (root / "secret.txt").write_text(SECRET)
    (root / "alias").symlink_to("secret.txt")
    (root / "docs" / "abs_alias").symlink_to(root / "secret.txt")
    read_file = tools(root)["read_file"]
    rules = Rules(deny=[rule], cwd=world["outside"])
    for path in (
        "secret.txt",
        str(root / "secret.txt"),
        "alias",
        "docs/abs_alias",
        "docs/../secret.txt",
    ):
        assert rules.decide("read_file", {"path": path}, tool=read_file) == "deny", path
    assert rules.decide("read_file", {"path": "docs/readme.md"}, tool=read_file) == "allow"


async def test_write_file_makes_missing_folders_only_inside_the_jail(
    world: dict[str, Path],
) -> None:
    fs = tools(world["root"])
    for path in ("../escaped/x.txt", "dir_out/new/x.txt"):
        with pytest.raises(PermissionDenied):
            await fs["write_file"].execute({"path": path, "content": "x"}, ToolContext())
    assert not (world["root"].parent / "escaped").exists()
    assert not any(p.name == "new" for p in world["root"].parent.rglob("new"))
