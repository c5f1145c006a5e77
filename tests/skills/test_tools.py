"""The skill tools through a real `ToolRegistry`: enum names, activation, scripts, reload."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.skills.factory import write_skill
from toolweave.skills import SkillError, SkillLibrary, SkillScope
from toolweave.tools import ToolContext, ToolRegistry

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


@pytest.fixture
def library(tmp_path: Path) -> SkillLibrary:
    root = tmp_path / "skills"
    shutil.copytree(EXAMPLES, root)
    write_skill(
        root,
        "runner",
        "name: runner\ndescription: runs scripts\nallowed-tools: skill_run",
        files={
            "scripts/echo.py": "import sys, os\nprint('参数', sys.argv[1:], os.getcwd())\n",
            "scripts/fail.py": "import sys\nprint('boom')\nsys.exit(3)\n",
            "scripts/env.py": "import os\nprint(sorted(os.environ))\n",
            "scripts/wait.py": "import sys\nsys.stdin.read()\nimport time\ntime.sleep(60)\n",
            "notes/not-a-script.py": "print('x')\n",
        },
    )
    write_skill(root, "manual", "name: manual\ndescription: d\ndisable-model-invocation: true")
    return SkillLibrary([root])


def registry_for(library: SkillLibrary, **options: object) -> ToolRegistry:
    registry = ToolRegistry()
    registry.register_all(library.tools(**options))  # type: ignore[arg-type]
    return registry


async def test_tool_set_and_schemas(library: SkillLibrary) -> None:
    registry = registry_for(library)
    assert registry.names() == [
        "skill_data",
        "skill_read",
        "skill_reload",
        "skill_resource",
        "skill_run",
    ]
    read = registry.get("skill_read")
    assert read is not None and read.annotations.read_only
    enum = read.parameters["properties"]["name"]["enum"]
    assert enum == ["code-review", "release-notes", "runner", "web-research"]  # not "manual"
    resource = registry.get("skill_resource")
    assert resource is not None  # a /manual command may still need the skill's files
    assert "manual" in resource.parameters["properties"]["name"]["enum"]
    run = registry.get("skill_run")
    assert run is not None and [p.value for p in run.permissions] == ["shell"]
    managed = registry_for(library, self_management=True)
    assert {"skill_install", "skill_list", "skill_remove"} <= set(managed.names())
    install = managed.get("skill_install")
    assert install is not None and install.admin_approval is True  # type: ignore[attr-defined]


async def test_read_lists_resources_and_confines_paths(library: SkillLibrary) -> None:
    registry = registry_for(library)
    ctx = ToolContext()
    done = await registry.invoke("skill_read", {"name": "web-research"}, ctx)
    text = done.result.content[0].text  # type: ignore[union-attr]
    assert done.ok and text.startswith("# Skill: web-research\n\n# Web Research Skill")
    assert "- advanced.md\n- data/source_policy.json" in text
    data = await registry.invoke(
        "skill_data",
        {"name": "web-research", "path": "data/source_policy.json", "query": "low"},
        ctx,
    )
    assert data.result.structured == [
        {
            "source_type": "forum_or_social_media",
            "trust_level": "low",
            "use_for": ["user sentiment", "bug symptoms", "anecdotal evidence"],
            "caution": "不要把个别用户发言当成事实结论。",
        }
    ]
    sibling = await registry.invoke(
        "skill_resource", {"name": "web-research", "path": "../runner/SKILL.md"}, ctx
    )
    assert sibling.ok  # a sibling skill of the same library is readable
    escaped = await registry.invoke(
        "skill_resource", {"name": "web-research", "path": "../../README.md"}, ctx
    )
    assert not escaped.ok and "outside the skill folder" in escaped.result.content[0].text  # type: ignore[union-attr]
    manual = await registry.invoke("skill_read", {"name": "manual"}, ctx)
    assert not manual.ok and "only be run by the user as the /manual command" in str(manual.error)
    unknown = await registry.invoke("skill_read", {"name": "nope"}, ctx)
    assert not unknown.ok and "available skills: code-review" in str(unknown.error)


def test_scope_grants_last_one_run(library: SkillLibrary) -> None:
    scope = SkillScope(library)

    class Key:  # any weak-referenceable object (the agent uses its Session)
        pass

    session, other = Key(), Key()
    assert scope.active(session) is None and scope.grants(session) == []
    scope.activate(session, "code-review")
    scope.activate(session, "manual")  # no allowed-tools: active, grants nothing
    assert scope.active(session).name == "manual"  # type: ignore[union-attr]
    assert [s.name for s in scope.grants(session)] == ["code-review"]
    assert scope.grants(other) == []  # per session
    scope.end_run(session)  # the run ended: the grant with it, the active skill stays
    assert scope.grants(session) == [] and scope.active(session) is not None
    with pytest.raises(SkillError, match="no skill named 'ghost'"):
        scope.activate(session, "ghost")
    scope.activate(session, "code-review")
    scope.deactivate(session)
    assert scope.active(session) is None and scope.grants(session) == []


async def test_skill_run_scripts(library: SkillLibrary) -> None:
    registry = registry_for(library, script_timeout=5)
    ctx = ToolContext()
    ran = await registry.invoke(
        "skill_run", {"name": "runner", "script": "echo.py", "args": ["a b", "中"]}, ctx
    )
    runner_dir = str(library.get("runner").dir.resolve())
    assert ran.ok
    assert ran.result.content[0].text == f"参数 ['a b', '中'] {runner_dir}\n"  # type: ignore[union-attr]
    same = await registry.invoke("skill_run", {"name": "runner", "script": "scripts/echo.py"}, ctx)
    assert same.ok
    failed = await registry.invoke("skill_run", {"name": "runner", "script": "fail.py"}, ctx)
    assert not failed.ok and "exited with status 3:\nboom" in str(failed.error)
    env = await registry.invoke("skill_run", {"name": "runner", "script": "env.py"}, ctx)
    names = env.result.content[0].text  # type: ignore[union-attr]
    assert "OPENAI_API_KEY" not in names and "PATH" in names
    outside = await registry.invoke(
        "skill_run", {"name": "runner", "script": "../notes/not-a-script.py"}, ctx
    )
    assert not outside.ok and "outside the skill folder of 'runner'" in str(outside.error)
    # A script SKILL.md names outside scripts/ (Anthropic's `ooxml/scripts/pack.py`) runs.
    nested = await registry.invoke(
        "skill_run", {"name": "runner", "script": "notes/not-a-script.py"}, ctx
    )
    assert nested.ok and nested.result.content[0].text == "x\n"  # type: ignore[union-attr]
    escape = await registry.invoke("skill_run", {"name": "runner", "script": "../../x.py"}, ctx)
    assert not escape.ok and "outside the skill folder" in str(escape.error)


async def test_skill_run_timeout(library: SkillLibrary) -> None:
    registry = registry_for(library, script_timeout=0.5)
    done = await registry.invoke("skill_run", {"name": "runner", "script": "wait.py"})
    # stdin is /dev/null, so read() returns at once and the script sleeps past the timeout.
    assert not done.ok and "ran past its 0.5s timeout" in str(done.error)


@pytest.fixture
def git_repo(host_dir: Path) -> Path:
    repo = host_dir / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "chore: init"], check=True)
    subprocess.run([*git, "tag", "v1.0"], check=True)
    for message in ("feat: 新增导出", "fix: crash on empty input", "feat!: drop py3.9"):
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", message], check=True)
    return repo


async def test_release_notes_script_end_to_end(library: SkillLibrary, git_repo: Path) -> None:
    repo = git_repo
    registry = registry_for(library)
    done = await registry.invoke(
        "skill_run", {"name": "release-notes", "script": "collect.sh", "args": ["v1.0", str(repo)]}
    )
    assert done.ok, done.error
    assert done.result.content[0].text.split("\n")[:3] == [  # type: ignore[union-attr]
        "feat: 新增导出",
        "fix: crash on empty input",
        "feat!: drop py3.9",
    ]


async def test_reload_tool_and_live_enum(library: SkillLibrary) -> None:
    registry = registry_for(library)
    write_skill(library.roots[0], "fresh", "name: fresh\ndescription: 新技能")
    done = await registry.invoke("skill_reload", {})
    assert done.ok and "fresh" in done.result.structured["skills"]  # type: ignore[index]
    read = registry.get("skill_read")
    assert read is not None and "fresh" in read.parameters["properties"]["name"]["enum"]
