"""Levels 2 and 3: bodies, resources and data files, confined to the skill folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.skills.factory import write_skill
from toolweave.skills import SkillError, SkillLibrary

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


@pytest.fixture
def skill_dir(tmp_path: Path) -> Path:
    folder = write_skill(
        tmp_path / "skills",
        "data-skill",
        "name: data-skill\ndescription: 数据查询 data lookups",
        body="# 正文\nRead `ref/guide.md`.",
        files={
            "ref/guide.md": "指南 guide",
            "rows.jsonl": '{"city": "北京", "pop": 21}\n\n{"city": "Shanghai", "pop": 24}\n',
            "table.csv": "name,lang\n张三,zh\nAlice,en\n",
            "map.json": json.dumps({"alpha": 1, "beta": 2}),
            "broken.json": "{not json",
            ".hidden": "x",
        },
    )
    (tmp_path / "secret.txt").write_text("outside")
    os.symlink(tmp_path / "secret.txt", folder / "link-out.txt")
    os.symlink(folder / "ref" / "guide.md", folder / "link-in.md")
    return folder


def test_body_resources_and_reads(skill_dir: Path) -> None:
    skill = SkillLibrary([skill_dir.parent]).get("data-skill")
    assert skill.body() == "# 正文\nRead `ref/guide.md`."
    assert skill.resources() == [
        "broken.json",
        "link-in.md",
        "map.json",
        "ref/guide.md",
        "rows.jsonl",
        "table.csv",
    ]
    assert skill.read_resource("ref/guide.md") == "指南 guide"
    assert skill.read_resource("link-in.md") == "指南 guide"  # a link inside stays readable


@pytest.mark.parametrize(
    ("rel", "message"),
    [
        ("../secret.txt", "outside the skill folder"),
        ("ref/../../secret.txt", "outside the skill folder"),
        ("/etc/passwd", "is absolute"),
        ("C:\\Windows\\win.ini", "is absolute"),
        ("\\\\server\\share", "is absolute"),
        ("link-out.txt", "outside the skill folder"),
        ("missing.md", "has no file 'missing.md'; its files: broken.json"),
        ("", "give a file path"),
    ],
)
def test_reads_outside_the_folder_are_refused(skill_dir: Path, rel: str, message: str) -> None:
    skill = SkillLibrary([skill_dir.parent]).get("data-skill")
    with pytest.raises(SkillError, match=message.replace("(", r"\(")):
        skill.read_resource(rel)
    with pytest.raises(SkillError):
        skill.query_data(rel if rel.endswith(".json") else rel + ".json", "x")


def test_query_data_formats_and_filters(skill_dir: Path) -> None:
    skill = SkillLibrary([skill_dir.parent]).get("data-skill")
    assert skill.query_data("rows.jsonl", "北京") == [{"city": "北京", "pop": 21}]
    assert skill.query_data("rows.jsonl", "", limit=1) == [{"city": "北京", "pop": 21}]
    assert skill.query_data("table.csv", "EN") == [{"name": "Alice", "lang": "en"}]
    assert skill.query_data("map.json", "beta") == [{"key": "beta", "value": 2}]
    assert skill.query_data("rows.jsonl", "shanghai 24") == [{"city": "Shanghai", "pop": 24}]
    assert skill.query_data("rows.jsonl", "shanghai 21") == []
    with pytest.raises(SkillError, match="not valid JSON"):
        skill.query_data("broken.json")
    with pytest.raises(SkillError, match="not a data file"):
        skill.query_data("ref/guide.md")
    with pytest.raises(SkillError, match="limit must be at least 1"):
        skill.query_data("rows.jsonl", limit=0)


def test_resource_size_limit(skill_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("toolweave.skills.skill.MAX_RESOURCE_BYTES", 5)
    skill = SkillLibrary([skill_dir.parent]).get("data-skill")
    with pytest.raises(SkillError, match="over the 5-byte limit"):
        skill.read_resource("ref/guide.md")


def test_seed_examples_conform_to_the_spec() -> None:
    from toolweave.skills import validate_skill

    library = SkillLibrary([EXAMPLES])
    assert sorted(library.skills) == ["code-review", "release-notes", "web-research"]
    assert library.warnings == []
    for skill in library.skills.values():
        assert validate_skill(skill.dir) == [], skill.name
    research = library.get("web-research")
    assert research.resources() == ["advanced.md", "data/source_policy.json"]
    assert research.query_data("data/source_policy.json", "github")[0]["trust_level"] == "high"
    assert "来源优先级" in research.read_resource("advanced.md")


def test_a_sibling_skill_of_the_same_library_is_readable(tmp_path: Path) -> None:
    root = tmp_path / "library"
    write_skill(
        root,
        "subagent-driven-development",
        "name: subagent-driven-development\ndescription: d",
        body="Use `../requesting-code-review/code-reviewer.md`.",
    )
    write_skill(
        root,
        "requesting-code-review",
        "name: requesting-code-review\ndescription: 请求代码评审",
        files={"code-reviewer.md": "评审模板 template"},
    )
    (root / "loose.txt").write_text("not a skill's file")
    (tmp_path / "outside.txt").write_text("outside")
    skill = SkillLibrary([root]).get("subagent-driven-development")
    assert skill.read_resource("../requesting-code-review/code-reviewer.md") == "评审模板 template"
    for rel in ("../loose.txt", "../../outside.txt", "../requesting-code-review/../../outside.txt"):
        with pytest.raises(SkillError, match="outside the skill folder"):
            skill.read_resource(rel)
    # A skill loaded on its own (its root is the skill folder) has no siblings.
    alone = SkillLibrary([root / "subagent-driven-development"]).get("subagent-driven-development")
    with pytest.raises(SkillError, match="outside the skill folder"):
        alone.read_resource("../requesting-code-review/code-reviewer.md")
