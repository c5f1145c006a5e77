"""The `toolweave.skills` surface: lazy and light, exports match, errors share the root."""

from __future__ import annotations

import importlib
import inspect
import subprocess
import sys

from toolweave import ConfigError, ToolweaveError


def test_exports_are_public_lazy_and_match_all() -> None:
    skills = importlib.import_module("toolweave.skills")
    assert sorted(skills.__all__) == sorted(skills._EXPORTS)
    for name in skills.__all__:
        value = getattr(skills, name)
        home = getattr(value, "__module__", "toolweave.skills")
        assert not [p for p in home.split(".") if p.startswith("_")], f"{name} lives in {home}"
        if inspect.isclass(value) and issubclass(value, BaseException):
            assert issubclass(value, ToolweaveError), name


def test_importing_the_package_loads_no_yaml_or_pydantic() -> None:
    code = (
        "import sys, toolweave.skills\n"
        "names = ('yaml', 'pydantic', 'toolweave.skills.library')\n"
        "heavy = [m for m in names if m in sys.modules]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_bad_settings_are_config_errors() -> None:
    import pytest

    from toolweave.skills import SkillLibrary

    with pytest.raises(ConfigError, match="budget_chars must be positive"):
        SkillLibrary([]).catalog(budget_chars=0)
