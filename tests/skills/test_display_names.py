"""A skill whose frontmatter name is a display name (48 of 111 real skills: "Writing Hookify
Rules", "Customer.io Automation", "capsule_crm-automation") is keyed by a valid name derived
from its folder, shows its display name, and answers to both where a person types it."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolweave.skills import SkillLibrary
from toolweave.skills.spec import folder_skill_name, is_spec_name

REAL_NAMES = {
    "writing-rules": "Writing Hookify Rules",
    "agent-development": "Agent Development",
    "customerio-automation": "Customer.io Automation",
    "capsule_crm-automation": "capsule_crm-automation",
}


def _library(root: Path) -> SkillLibrary:
    for folder, name in REAL_NAMES.items():
        (root / folder).mkdir(parents=True)
        (root / folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Use when {name} is needed.\n---\nBody of {name}.\n",
            encoding="utf-8",
        )
    return SkillLibrary([root])


def test_display_names_are_kept_and_skills_keyed_by_their_folder(tmp_path: Path) -> None:
    library = _library(tmp_path)
    assert sorted(library.skills) == [
        "agent-development",
        "capsule-crm-automation",
        "customerio-automation",
        "writing-rules",
    ]
    assert all(is_spec_name(name) for name in library.skills)
    rules = library.get("writing-rules")
    assert rules.title == "Writing Hookify Rules" and rules.body().strip().startswith("Body of")
    assert library.get("writing hookify  RULES") is rules  # the display name, as typed
    assert library.get("Customer.io Automation").name == "customerio-automation"
    assert any("is a display name; called 'writing-rules'" in w for w in library.warnings)
    with pytest.raises(Exception, match="no skill named 'Writing'"):
        library.get("Writing")


def test_folder_names_become_spec_names() -> None:
    assert folder_skill_name(Path("capsule_crm-automation")) == "capsule-crm-automation"
    assert folder_skill_name(Path("Data Analysis (v2)")) == "data-analysis-v2"
    assert folder_skill_name(Path("数据 分析")) == "数据-分析"
    assert folder_skill_name(Path("___")) == ""
