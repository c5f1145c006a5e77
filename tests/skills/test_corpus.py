"""The real-world corpus: 232 SKILL.md files from three public skill repositories.

At least 95% must load with a non-empty description, nothing may crash, and the whole catalog
(frontmatter only, bodies untouched) must load in under half a second. The skipped files and
their reasons are printed (`pytest -s`) for the issue note.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from toolweave.skills import SkillLibrary, validate_skill
from toolweave.skills._loader import load_skill

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "skills"
if not CORPUS.is_dir():  # the worktree lives at /work/wt/<name>; main at /work/main
    CORPUS = Path("/work/shared/corpus/skills")
FILES = sorted(CORPUS.rglob("SKILL.md"))
pytestmark = pytest.mark.skipif(not FILES, reason=f"corpus not found at {CORPUS}")


def test_corpus_loads() -> None:
    assert len(FILES) == 232
    loaded, skipped = [], []
    for path in FILES:
        warnings: list[str] = []
        skill = load_skill(path.parent, warnings)
        if skill is None:
            skipped.append(warnings[-1])
        else:
            assert skill.description.strip(), path
            loaded.append(skill)
    print(f"\ncorpus: {len(loaded)}/{len(FILES)} SKILL.md files load")
    for reason in skipped:
        print("skipped:", reason)
    assert len(loaded) >= 0.95 * len(FILES)
    # The corpus's own edge cases load: lists, strings, block scalars, CRLF, odd metadata.
    by_name = {s.name: s for s in loaded}
    assert any(s.allowed_tools and len(s.allowed_tools) > 1 for s in loaded)
    assert any(len(s.description) > 1024 for s in loaded)
    assert any(s.name != s.dir.name for s in loaded)
    assert "template-skill" in by_name


def test_whole_catalog_loads_without_reading_bodies(monkeypatch: pytest.MonkeyPatch) -> None:
    """How fast is benchmarks/skills_load.py's to say (no wall-clock bound in a unit test)."""
    roots = sorted({path.parent.parent for path in FILES})
    opened: list[str] = []
    original = Path.read_text

    def spy(self: Path, *args: object, **kwargs: object) -> str:
        opened.append(str(self))
        return original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "read_text", spy)
    library = SkillLibrary(roots)
    catalog = library.catalog()
    assert opened == []  # frontmatter is streamed line by line; no body is read
    assert len(library) >= 0.95 * len(FILES) - 4  # 4 names appear in two repositories
    assert 0 < len(catalog) <= 15_000


def test_validate_reports_corpus_deviations_without_crashing() -> None:
    issues = [issue for path in FILES for issue in validate_skill(path.parent)]
    fields = {issue.field for issue in issues}
    assert {"description", "name"} <= fields
    assert all(str(issue).startswith(str(CORPUS)) for issue in issues)


def test_every_loadable_corpus_skill_installs(tmp_path: Path) -> None:
    from toolweave.skills.install import install_skill

    installed = 0
    for path in FILES:
        if load_skill(path.parent, []) is None:
            continue
        # One root per source library: the same skill copied into two libraries is no clash.
        root = tmp_path / path.parent.parent.relative_to(CORPUS).as_posix().replace("/", "_")
        report = install_skill(path.parent, root)
        assert report.path.parent == root and (report.path / "SKILL.md").is_file()
        installed += 1
    print(f"\ncorpus install: {installed} skills installed")
    assert installed >= 0.95 * len(FILES)
