"""`validate_skill`: every deviation from the Agent Skills spec, with the field and the fix."""

from __future__ import annotations

from pathlib import Path

from tests.skills.factory import write_skill
from toolweave.skills import validate_skill


def fields(folder: Path) -> dict[str, str]:
    return {issue.field: issue.message for issue in validate_skill(folder)}


def test_a_conforming_skill_has_no_issues(tmp_path: Path) -> None:
    folder = write_skill(
        tmp_path,
        "pdf-tools",
        "name: pdf-tools\ndescription: Work with PDFs.\nlicense: MIT\ncompatibility: Python 3\n"
        "metadata:\n  author: me\nallowed-tools: Read Bash\ndisable-model-invocation: true\n"
        "user-invocable: true\nargument-hint: '[file]'",
    )
    assert validate_skill(folder) == []


def test_every_deviation_is_reported(tmp_path: Path) -> None:
    long_name = "a" * 65
    folder = write_skill(
        tmp_path,
        "Bad_Folder",
        f"name: {long_name}\ndescription: {'x' * 1025}\nmetadata: [1]\n"
        "allowed-tools: [a, b]\nversion: 1\nuser-invocable: 'yes'\ncompatibility: " + "c" * 501,
    )
    issues = validate_skill(folder)
    found = {i.field for i in issues}
    assert found == {
        "name",
        "description",
        "metadata",
        "allowed-tools",
        "version",
        "user-invocable",
        "compatibility",
    }
    text = "\n".join(str(i) for i in issues)
    assert "65 characters; at most 64" in text
    assert "1025 characters; at most 1024" in text
    assert "differs from its folder 'Bad_Folder'" in text
    assert "version: not a spec field; move it under 'metadata'" in text
    assert [i.severity for i in issues if i.field == "version"] == ["warning"]


def test_name_rules_and_missing_pieces(tmp_path: Path) -> None:
    assert (
        "lowercase letters"
        in fields(write_skill(tmp_path, "-x", "name: -x\ndescription: d"))["name"]
    )
    assert (
        "lowercase letters"
        in fields(write_skill(tmp_path, "a--b", "name: a--b\ndescription: d"))["name"]
    )
    assert (
        "lowercase letters"
        in fields(write_skill(tmp_path, "中文", "name: 中文\ndescription: d"))["name"]
    )
    assert "required" in fields(write_skill(tmp_path, "nodesc", "name: nodesc"))["description"]
    assert "required" in fields(write_skill(tmp_path, "noname", "description: d"))["name"]
    assert "no YAML frontmatter" in fields(write_skill(tmp_path, "plain", None))["frontmatter"]
    (tmp_path / "empty").mkdir()
    assert "missing" in fields(tmp_path / "empty")["SKILL.md"]
