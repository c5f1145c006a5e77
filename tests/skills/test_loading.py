"""Loading: roots and precedence, lenient frontmatter, warnings, reload, catalog and commands."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.skills.factory import write_skill
from toolweave.skills import (
    SkillError,
    SkillLibrary,
    default_roots,
    expand_arguments,
    parse_command,
)


def test_lenient_frontmatter_shapes(tmp_path: Path) -> None:
    (tmp_path / "crlf").mkdir()
    (tmp_path / "crlf" / "SKILL.md").write_bytes(
        "\ufeff---\r\nname: crlf\r\ndescription: Windows line endings 和 BOM\r\n"
        "---\r\nBody\r\n".encode()
    )
    write_skill(tmp_path, "block", "name: block\ndescription: |-\n  First line.\n  第二行。")
    write_skill(tmp_path, "folded", "name: folded\ndescription: >\n  Folded\n  text.")
    write_skill(tmp_path, "colon", "name: colon\ndescription: Use when: the user asks: things")
    write_skill(
        tmp_path,
        "tools-str",
        "name: tools-str\ndescription: d\nallowed-tools: Bash(git add:*), Read Grep",
    )
    write_skill(tmp_path, "tools-list", "name: tools-list\ndescription: d\nallowed-tools: [a, b]")
    write_skill(
        tmp_path,
        "extra",
        "name: extra\ndescription: d\nversion: 1.2\neffort: high\nmetadata: not-a-map\n"
        "license: MIT\ndisable-model-invocation: true\nuser-invocable: false\n"
        "argument-hint: '[file]'",
    )
    lib = SkillLibrary([tmp_path])
    skills = lib.skills
    assert list(skills) == sorted(skills)
    assert skills["crlf"].description == "Windows line endings 和 BOM"
    assert skills["crlf"].body() == "Body"
    assert skills["block"].description == "First line.\n第二行。"
    assert skills["folded"].description == "Folded text."
    assert skills["colon"].description == "Use when: the user asks: things"
    assert skills["tools-str"].allowed_tools == ["Bash(git add:*)", "Read", "Grep"]
    assert skills["tools-list"].allowed_tools == ["a", "b"]
    extra = skills["extra"]
    assert extra.metadata == {"metadata": "not-a-map", "version": 1.2, "effort": "high"}
    assert extra.license == "MIT" and extra.argument_hint == "[file]"
    assert extra.disable_model_invocation and not extra.user_invocable
    assert lib.warnings == []


def test_skips_and_warnings(tmp_path: Path) -> None:
    write_skill(tmp_path, "plain", None, body="# no frontmatter")
    write_skill(tmp_path, "empty", "name: empty\ndescription: ''")
    write_skill(tmp_path, "renamed", "name: other-name\ndescription: 名字和目录不同")
    write_skill(tmp_path, "unclosed", "name: x")
    (tmp_path / "unclosed" / "SKILL.md").write_text("---\nname: x\ndescription: y\n")
    write_skill(tmp_path, "badyaml", "name: [unclosed\ndescription: y")
    write_skill(tmp_path, "endless", "name: endless")
    (tmp_path / "endless" / "SKILL.md").write_text("---\n" + "key: value\n" * 7000)
    (tmp_path / "not-a-skill").mkdir()
    os.symlink(tmp_path / "missing", tmp_path / "dangling")
    lib = SkillLibrary([tmp_path])
    assert list(lib.skills) == ["other-name"]
    text = "\n".join(lib.warnings)
    assert "plain/SKILL.md: skipped: no YAML frontmatter" in text
    assert "empty/SKILL.md: skipped: the description is empty" in text
    assert "name 'other-name' differs from its folder 'renamed'" in text
    assert "unclosed/SKILL.md: skipped: the frontmatter is never closed" in text
    assert "badyaml/SKILL.md: skipped: invalid YAML" in text
    assert "endless/SKILL.md: skipped: no closing '---' within 64000 characters" in text
    assert "dangling: dangling symlink, skipped" in text


def test_precedence_allow_symlinks_and_root_as_skill(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    write_skill(first, "shared", "name: shared\ndescription: from first")
    write_skill(second, "shared", "name: shared\ndescription: from second")
    write_skill(second, "only", "name: only\ndescription: second only")
    os.symlink(second / "only", second / "alias")  # the same folder twice: loads once
    lone = write_skill(tmp_path, "lone", "name: lone\ndescription: a root that is a skill")
    lib = SkillLibrary([first, second, lone])
    assert lib.skills["shared"].description == "from first"
    assert sorted(lib.skills) == ["lone", "only", "shared"]
    assert sum("shadowed" in w for w in lib.warnings) == 1
    assert not any("alias" in w for w in lib.warnings)
    allowed = SkillLibrary([first, second], allow=["only", "ghost"])
    assert list(allowed.skills) == ["only"]
    assert any("'ghost'" in w for w in allowed.warnings)
    assert SkillLibrary([tmp_path / "nope"]).warnings == [
        f"{tmp_path / 'nope'}: skill root does not exist or is not a folder"
    ]


def test_default_roots_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    roots = default_roots()
    assert roots == [
        tmp_path / ".agents/skills",
        tmp_path / ".claude/skills",
        tmp_path / "home/.agents/skills",
        tmp_path / "home/.claude/skills",
    ]
    write_skill(tmp_path / ".claude/skills", "proj", "name: proj\ndescription: project skill")
    write_skill(tmp_path / "home/.agents/skills", "proj", "name: proj\ndescription: user skill")
    lib = SkillLibrary()
    assert lib.skills["proj"].description == "project skill"
    assert lib.warnings and "shadowed" in lib.warnings[0]


def test_reload_is_atomic_and_keeps_the_old_set_on_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(tmp_path, "a", "name: a\ndescription: first")
    lib = SkillLibrary([tmp_path])
    calls: list[int] = []
    unsubscribe = lib.subscribe(lambda: calls.append(len(lib)))
    before = lib.skills
    write_skill(tmp_path, "b", "name: b\ndescription: second")
    lib.reload()
    assert sorted(lib.skills) == ["a", "b"] and calls == [2]
    assert sorted(before) == ["a"]  # a view taken before the swap still sees the old set
    lib.reload()
    assert calls == [2]  # nothing changed: no notification
    unsubscribe()
    write_skill(tmp_path, "c", "name: c\ndescription: third")

    def broken(path: object) -> None:  # an unreadable root (EIO, EACCES) mid-reload
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr("toolweave.skills._loader.os.scandir", broken)
    with pytest.raises(SkillError, match="keeping the previous skills"):
        lib.reload()
    assert sorted(lib.skills) == ["a", "b"]


def test_catalog_budget_relevance_and_stability(tmp_path: Path) -> None:
    for i in range(30):
        write_skill(tmp_path, f"filler-{i:02d}", f"name: filler-{i:02d}\ndescription: " + "x" * 200)
    write_skill(tmp_path, "zz-pdf", "name: zz-pdf\ndescription: Extract tables from PDF files")
    write_skill(tmp_path, "zz-翻译", "name: zz-翻译\ndescription: 把中文文档翻译成英文")
    write_skill(tmp_path, "hidden", "name: hidden\ndescription: d\ndisable-model-invocation: true")
    lib = SkillLibrary([tmp_path])
    full = lib.catalog()
    assert "hidden" not in full and full == lib.catalog()  # stable bytes
    lines = full.splitlines()[1:]
    assert lines == sorted(lines) and len(lines) == 32
    small = lib.catalog(budget_chars=600, query="PDF tables")
    assert len(small) <= 600 and "- zz-pdf: Extract tables" in small
    assert "skills left out" in small and "most relevant" in small
    chinese = lib.catalog(budget_chars=600, query="翻译中文文档")
    assert "- zz-翻译: 把中文文档翻译成英文" in chinese
    alphabetical = lib.catalog(budget_chars=600)
    assert alphabetical.splitlines()[1].startswith("- filler-00:")  # no query: in name order
    with pytest.raises(ValueError, match="budget_chars"):
        lib.catalog(budget_chars=0)


def test_arguments_expansion_and_commands(tmp_path: Path) -> None:
    assert expand_arguments("Fix $ARGUMENTS now", "issue 12") == "Fix issue 12 now"
    assert expand_arguments("seed style: $args", "a b") == "seed style: a b"
    assert expand_arguments("$0 then $1 then $2", '"two words" x') == (
        'two words then x then $2\n\nARGUMENTS: "two words" x'  # $2 unfilled: all of it arrives
    )
    assert expand_arguments("$ARGUMENTS[1]", "a b") == "b"
    assert expand_arguments("no placeholder", "v1.0") == "no placeholder\n\nARGUMENTS: v1.0"
    assert expand_arguments("no placeholder", "") == "no placeholder"
    assert expand_arguments("翻译：$ARGUMENTS", "你好 世界") == "翻译：你好 世界"
    assert parse_command("/release-notes v1.2.0") == ("release-notes", "v1.2.0")
    assert parse_command("/review") == ("review", "")
    assert parse_command("not a command") is None
    write_skill(tmp_path, "review", "name: review\ndescription: d", body="Review $ARGUMENTS")
    write_skill(tmp_path, "private", "name: private\ndescription: d\nuser-invocable: false")
    lib = SkillLibrary([tmp_path])
    assert lib.expand_command("/review PR #7") == "Review PR #7"
    assert lib.expand_command("/private x") is None
    assert lib.expand_command("/unknown x") is None


def test_catalog_without_query_keeps_spec_names_and_recent_ones(tmp_path: Path) -> None:
    for i in range(40):  # display names sort before every lowercase name by character code
        write_skill(
            tmp_path, f"display-{i:02d}", f"name: Display Skill {i:02d}\ndescription: " + "y" * 150
        )
    for name in ("pdf", "docx", "xlsx"):
        write_skill(
            tmp_path, name, f"name: {name}\ndescription: Work with {name} files. " + "z" * 100
        )
    lib = SkillLibrary([tmp_path])
    # Everything fits once descriptions are shortened: nothing is left out.
    shortened = lib.catalog(budget_chars=4_000)
    assert "left out" not in shortened and len(shortened.splitlines()) == 44
    assert len(shortened) <= 4_000 and "…" in shortened
    # A tight budget leaves skills out, but never the spec-named ones; it says how many.
    tight = lib.catalog(budget_chars=1_200)
    assert len(tight) <= 1_200
    for name in ("pdf", "docx", "xlsx"):
        assert f"- {name}: Work with {name}" in tight
    left = re.search(r"\((\d+) of 43 skills left out", tight)
    assert left is not None and int(left.group(1)) == 43 - (len(tight.splitlines()) - 2)
    # A skill used lately is kept ahead of the rest.
    lib.mark_used("display-39")  # a display-named skill is called by its folder's name
    assert "- display-39:" in lib.catalog(budget_chars=1_200)
    # Listed in case-insensitive name order.
    names = [line.split(":")[0][2:] for line in lib.catalog().splitlines()[1:]]
    assert names == sorted(names, key=str.casefold)
