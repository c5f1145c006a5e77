"""`toolweave skills list|show|validate|install|remove`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from tests.skills.factory import write_skill
from toolweave.cli import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"
runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["skills", *args], env={"COLUMNS": "200"})
    return result.exit_code, result.stdout, result.stderr


def test_list_and_show() -> None:
    code, out, _ = run("list", "--root", str(EXAMPLES), "--json")
    assert code == 0
    rows = json.loads(out)
    assert [r["name"] for r in rows] == ["code-review", "release-notes", "web-research"]
    assert rows[2]["allowed_tools"] == ["tavily_search", "skill_resource", "skill_data"]
    code, out, _ = run("list", "-r", str(EXAMPLES))
    assert code == 0 and "3 skills" in out and "release-notes" in out
    code, out, _ = run("show", "web-research", "-r", str(EXAMPLES))
    assert code == 0
    assert "file: data/source_policy.json" in out and "# Web Research Skill" in out
    code, _, err = run("show", "nope", "-r", str(EXAMPLES))
    assert code == 2 and "no skill named 'nope'; available skills: code-review" in err


def test_validate_reports_and_exits_nonzero(tmp_path: Path) -> None:
    code, out, _ = run("validate", str(EXAMPLES))
    assert code == 0 and out.strip().endswith("3 skill(s) checked, 0 error(s)")
    write_skill(tmp_path, "Bad", "name: Bad\ndescription: d\nversion: 2")
    code, out, _ = run("validate", str(tmp_path))
    assert code == 1
    assert "Bad/SKILL.md: error: name: 'Bad' must be lowercase" in out
    assert "warning: version: not a spec field" in out
    code, out, _ = run("validate", "-r", str(EXAMPLES))  # every loaded skill
    assert code == 0 and "3 skill(s) checked" in out
    code, _, err = run("validate", str(tmp_path / "missing"))
    assert code == 2 and "neither a skill folder" in err


def test_install_and_remove(tmp_path: Path) -> None:
    root = tmp_path / "root"
    code, out, _ = run("install", str(EXAMPLES / "release-notes"), "-r", str(root))
    assert code == 0, out
    assert f"installed release-notes into {root / 'release-notes'}" in out
    assert "bundled script (runs only through skill_run): scripts/collect.sh" in out
    code, _, err = run("install", str(EXAMPLES / "release-notes"), "-r", str(root))
    assert code == 2 and "already installed" in err
    other = tmp_path / "other"
    code, _, _ = run(
        "install", str(EXAMPLES / "code-review"), "-r", str(root), "--into", str(other)
    )
    assert code == 0 and (other / "code-review" / "SKILL.md").is_file()
    result = runner.invoke(app, ["skills", "remove", "release-notes", "-r", str(root)], input="n\n")
    assert result.exit_code == 1 and (root / "release-notes").is_dir()  # declined
    code, out, _ = run("remove", "release-notes", "-r", str(root), "--yes")
    assert code == 0 and not (root / "release-notes").exists()
    shutil.rmtree(other)


def test_list_with_no_skills_names_the_folders_it_searched(tmp_path: Path) -> None:
    empty, missing = tmp_path / "空", tmp_path / "missing"
    empty.mkdir()
    code, out, _ = run("list", "-r", str(empty), "-r", str(missing))
    assert code == 0
    assert out.splitlines() == [
        "no skills found; searched:",
        f"  {empty}",
        f"  {missing} (does not exist)",
        "a skill is a folder with a SKILL.md; add one there or pass --root",
    ]
    code, out, _ = run("list", "-r", str(empty), "--json")
    assert code == 0 and json.loads(out) == []


def test_list_shows_bracketed_text_as_written(tmp_path: Path) -> None:
    write_skill(tmp_path, "notes", "name: notes\ndescription: Keep [bold]notes[/bold] [beta]")
    code, out, _ = run("list", "-r", str(tmp_path))
    assert code == 0 and "Keep [bold]notes[/bold] [beta]" in out


def test_validate_of_a_folder_without_skills_says_so_and_fails(tmp_path: Path) -> None:
    empty = tmp_path / "没有技能"
    (empty / "notes").mkdir(parents=True)
    code, out, err = run("validate", str(empty))
    assert code == 2 and "0 skill(s) checked" not in out
    assert f"{empty} holds no skill" in err and len(err.strip().splitlines()) == 1
    code, _, err = run("validate", "-r", str(empty))
    assert code == 2 and "no skills found to validate" in err
