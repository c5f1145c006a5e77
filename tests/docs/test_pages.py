"""The Python blocks of the developer-experience pages run as written, offline; the docs site
builds in strict mode with every page in its nav, titled in plain text; README.zh-CN.md keeps
README.md's shape."""

from __future__ import annotations

import importlib.util
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["tracing.md", "configuration.md", "migration.md", "console.md", "examples.md"]
BLOCKS = [
    (page, i, block)
    for page in PAGES
    for i, block in enumerate(
        re.findall(r"```python\n(.*?)```", (ROOT / "docs" / page).read_text("utf-8"), re.DOTALL)
    )
]


@pytest.mark.parametrize(("page", "index", "block"), BLOCKS, ids=[f"{p}#{i}" for p, i, _ in BLOCKS])
def test_page_example_runs(
    page: str,
    index: int,
    block: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = tmp_path / f"{Path(page).stem}_{index}.py"
    script.write_text(block, encoding="utf-8")
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(script), run_name="docs_example")
    if "print(" in block:
        assert capsys.readouterr().out.strip()


def test_the_site_builds_strict_with_every_page(tmp_path: Path) -> None:
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    assert mkdocs is not None, "the docs extra is part of dev: pip install -e '.[dev]'"
    site = tmp_path / "site"
    built = subprocess.run(
        [mkdocs, "build", "--strict", "--quiet", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent)},
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    docs = ROOT / "docs"
    for page in docs.rglob("*.md"):
        relative = page.relative_to(docs).with_suffix("")
        target = site / ("index.html" if relative.name == "index" else relative / "index.html")
        assert target.is_file(), f"{page} was not published"
    home = (site / "index.html").read_text(encoding="utf-8")
    for page in docs.glob("*.md"):  # the nav (in every page) links every page
        if page.stem != "index":
            assert f'href="{page.stem}/"' in home, f"{page.name} is missing from the nav"
    api = (site / "api" / "agent" / "index.html").read_text(encoding="utf-8")
    assert "Tracing" in api and "redact_arguments" in api  # reference from the docstrings


def _shape(path: Path) -> tuple[list[int], list[str]]:
    """Heading levels in order, and the code blocks verbatim."""
    text = path.read_text(encoding="utf-8")
    code = re.findall(r"```[a-z]*\n.*?```", text, re.DOTALL)
    prose = re.sub(r"```[a-z]*\n.*?```", "", text, flags=re.DOTALL)
    levels = [len(m) for m in re.findall(r"^(#+) ", prose, re.MULTILINE)]
    return levels, code


def test_the_chinese_readme_keeps_step_with_the_english_one() -> None:
    english, chinese = _shape(ROOT / "README.md"), _shape(ROOT / "README.zh-CN.md")
    assert chinese[0] == english[0], "README.zh-CN.md must have README.md's sections, in order"
    assert chinese[1] == english[1], "README.zh-CN.md must carry README.md's code blocks as is"
    assert "README.zh-CN.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def _titles(nav: Any) -> list[str]:
    if isinstance(nav, list):
        return [title for item in nav for title in _titles(item)]
    if isinstance(nav, dict):
        return [t for key, value in nav.items() for t in [str(key), *_titles(value)]]
    return []


def test_the_nav_titles_are_plain_text() -> None:
    """The nav as the hook builds it (mkdocs.yml's, plus the pages it appends titled from
    their headings) has no Markdown markup in any title."""
    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "mkdocs_hooks.py")
    assert spec is not None and spec.loader is not None
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))["nav"]
    config = hooks.on_config({"docs_dir": str(ROOT / "docs"), "nav": nav})
    titles = _titles(config["nav"])
    assert "Memory: toolweave.memory" in titles
    assert "Knowledge base and notes (toolweave.kb)" in titles
    marked = [t for t in titles if re.search(r"[`*<>\[\]]|\]\(", t)]
    assert not marked, marked
    assert hooks.plain("Skills: **`SKILL.md`** and [the spec](https://agentskills.io) 技能") == (
        "Skills: SKILL.md and the spec 技能"
    )
    assert hooks.plain("The `daily_calls_per_client` bound") == "The daily_calls_per_client bound"
