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
        "allowed-tools: {a: 1}\nversion: 1\nuser-invocable: 'yes'\ncompatibility: " + "c" * 501,
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
    assert "version: not a spec field (skills-ref rejects it; toolweave loads it)" in text
    assert [i.severity for i in issues if i.field == "version"] == ["warning"]


def test_name_rules_and_missing_pieces(tmp_path: Path) -> None:
    assert "hyphens only" in fields(write_skill(tmp_path, "-x", "name: -x\ndescription: d"))["name"]
    assert (
        "hyphens only"
        in fields(write_skill(tmp_path, "a--b", "name: a--b\ndescription: d"))["name"]
    )
    assert (
        "lowercase" in fields(write_skill(tmp_path, "Größe", "name: Größe\ndescription: d"))["name"]
    )
    assert (
        "letters, digits and hyphens only"
        in fields(write_skill(tmp_path, "my_skill", "name: my_skill\ndescription: d"))["name"]
    )
    # Unicode lowercase names conform, as the spec's validator says.
    assert (
        validate_skill(write_skill(tmp_path, "数据-分析", "name: 数据-分析\ndescription: d")) == []
    )
    assert validate_skill(write_skill(tmp_path, "größe", "name: größe\ndescription: d")) == []
    assert "required" in fields(write_skill(tmp_path, "nodesc", "name: nodesc"))["description"]
    assert "required" in fields(write_skill(tmp_path, "noname", "description: d"))["name"]
    assert "no YAML frontmatter" in fields(write_skill(tmp_path, "plain", None))["frontmatter"]
    (tmp_path / "empty").mkdir()
    assert "missing" in fields(tmp_path / "empty")["SKILL.md"]


def _errors(folder: Path) -> bool:
    return any(i.severity == "error" for i in validate_skill(folder))


def _skills_ref_errors(folder: Path) -> list[str]:
    from skills_ref.validator import validate

    # toolweave is deliberately lenient about fields outside the spec (a warning, and Claude
    # Code's own are not reported at all); skills-ref rejects them. Compare everything else.
    # StrictYAML (skills-ref's parser) refuses `key: [a, b]`, which toolweave reads and warns of.
    flow = any("StrictYAML" in i.message for i in validate_skill(folder))
    return [
        e
        for e in validate(folder)
        if not e.startswith("Unexpected fields") and not (flow and e.startswith("Invalid YAML"))
    ]


def test_agrees_with_skills_ref_on_the_spec_rules(tmp_path: Path) -> None:
    cases = {
        "ok-skill": "name: ok-skill\ndescription: d",
        "数据-分析": "name: 数据-分析\ndescription: d",
        "größe": "name: größe\ndescription: d",
        "Upper": "name: Upper\ndescription: d",
        "under_score": "name: under_score\ndescription: d",
        "-lead": "name: -lead\ndescription: d",
        "two--hyphens": "name: two--hyphens\ndescription: d",
        "mismatch": "name: other\ndescription: d",
        "no-description": "name: no-description",
        "long-description": "name: long-description\ndescription: " + "x" * 1025,
        "tools-list": "name: tools-list\ndescription: d\nallowed-tools:\n  - Read\n  - Bash(git:*)",
        "tools-string": "name: tools-string\ndescription: d\nallowed-tools: Read Grep",
        "Agent Development": "name: Agent Development\ndescription: d",
        "compat": "name: compat\ndescription: d\ncompatibility: " + "c" * 501,
    }
    for folder, frontmatter in cases.items():
        path = write_skill(tmp_path, folder, frontmatter)
        assert _errors(path) == bool(_skills_ref_errors(path)), (folder, _skills_ref_errors(path))
    lower = tmp_path / "lower-file"
    lower.mkdir()
    (lower / "skill.md").write_text("---\nname: lower-file\ndescription: d\n---\nx\n")
    assert _skills_ref_errors(lower) == [] and not _errors(lower)
    assert [i.severity for i in validate_skill(lower)] == ["warning"]  # hosts load SKILL.md


CORPUS = Path("/work/shared/corpus/skills")


def test_agrees_with_skills_ref_on_the_corpus() -> None:
    import pytest

    folders = sorted(p.parent for p in CORPUS.rglob("SKILL.md"))
    if not folders:
        pytest.skip(f"corpus not found at {CORPUS}")
    disagree = [
        (
            f.name,
            _skills_ref_errors(f),
            [str(i) for i in validate_skill(f) if i.severity == "error"],
        )
        for f in folders
        if _errors(f) != bool(_skills_ref_errors(f))
    ]
    print(f"\nskills-ref agreement: {len(folders) - len(disagree)}/{len(folders)} skills")
    assert disagree == []
