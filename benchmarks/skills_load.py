"""Skill catalog loading: `SkillLibrary` vs the seed's loader, on the real-world corpus.

The seed's `SkillLoader` reads each whole SKILL.md, splits on `---` and parses the frontmatter
with PyYAML's pure-Python `safe_load` (and keeps the body in memory). `SkillLibrary` streams
only the frontmatter and parses it with libyaml when PyYAML has it. Both load the same 232
files in the same run, alternating which goes first; the ratio is the median of the rounds.

Run: .venv/bin/python benchmarks/skills_load.py
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

import yaml

from toolweave.skills import SkillLibrary

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "skills"
if not CORPUS.is_dir():
    CORPUS = Path("/work/shared/corpus/skills")
ROUNDS = 7


def seed_loader(files: list[Path]) -> dict[str, dict[str, Any]]:
    """The seed's approach (skills harness, `_load_skill_metadata_and_body`), minus its raises."""
    skills = {}
    for path in files:
        text = path.read_text(encoding="utf-8")
        try:
            _, frontmatter, body = text.split("---", 2)
            meta = yaml.safe_load(frontmatter) or {}
        except (ValueError, yaml.YAMLError):
            continue
        if isinstance(meta, dict) and "name" in meta:
            skills[str(meta["name"])] = {"meta": meta, "body": body.strip()}
    return skills


def main() -> None:
    files = sorted(CORPUS.rglob("SKILL.md"))
    roots = sorted({f.parent.parent for f in files})
    ratios, ours, theirs = [], [], []
    for round_ in range(ROUNDS):
        order = [0, 1] if round_ % 2 == 0 else [1, 0]
        times = [0.0, 0.0]
        for side in order:
            start = time.perf_counter()
            if side == 0:
                loaded = len(SkillLibrary(roots))
            else:
                seed = len(seed_loader(files))
            times[side] = time.perf_counter() - start
        ours.append(times[0])
        theirs.append(times[1])
        ratios.append(times[1] / times[0])
    print(f"corpus: {len(files)} SKILL.md files; SkillLibrary loads {loaded} names, seed {seed}")
    print(f"SkillLibrary: {statistics.median(ours) * 1000:.1f} ms (median of {ROUNDS})")
    print(f"seed loader:  {statistics.median(theirs) * 1000:.1f} ms")
    print(f"ratio (seed / toolweave): {statistics.median(ratios):.1f}x faster")


if __name__ == "__main__":
    main()
