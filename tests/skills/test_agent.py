"""`Agent(..., skills=lib)` end to end with ScriptedModel: the seed's three example skills.

The catalog reaches the system prompt, `skill_read` activates a skill, its `allowed-tools`
pre-approve the tools they list for the rest of that run (hiding and refusing nothing, never
above a deny rule), `/name args` runs a skill as a command, and the selector picks a skill for
small models (by the model, or BM25 when its answer is useless).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from toolweave.agent import Agent
from toolweave.agent.session import Session
from toolweave.errors import ConfigError
from toolweave.governance import ApprovalRequest, Governance
from toolweave.llm import Message, ModelRequest, ScriptedModel, ToolCallPart
from toolweave.skills import SkillLibrary, SkillSettings
from toolweave.tools import tool

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


def call(tool_name: str, cid: str, /, **args: Any) -> Message:
    return Message.assistant(tool_calls=[ToolCallPart(cid, tool_name, args)])


@tool(read_only=True)
def tavily_search(query: str) -> list[dict[str, str]]:
    """Search the web (an offline stand-in for the seed's Tavily tool)."""
    return [{"title": "LangGraph docs", "url": "https://langchain-ai.github.io/langgraph/"}]


@tool(read_only=True)
def list_pr_files(pr_number: int) -> list[str]:
    """The files a pull request changes."""
    return ["app/db.py", "tests/test_db.py"]


@tool
def delete_branch(name: str) -> str:
    """Delete a git branch."""
    return f"deleted {name}"


@tool(destructive=True)
def create_pr_comment(pr_number: int, body: str) -> str:
    """Comment on a pull request (destructive here, so it asks unless pre-approved)."""
    return f"commented on #{pr_number}"


@tool(destructive=True)
def merge_pr(pr_number: int) -> str:
    """Merge a pull request."""
    return f"merged #{pr_number}"


@pytest.fixture
def library(tmp_path: Path) -> SkillLibrary:
    shutil.copytree(EXAMPLES, tmp_path / "skills")
    return SkillLibrary([tmp_path / "skills"])


def tool_names(request: ModelRequest) -> list[str]:
    return [d.name for d in request.tools]


async def test_web_research_with_progressive_disclosure(library: SkillLibrary) -> None:
    model = ScriptedModel(
        [
            call("skill_read", "1", name="web-research"),
            call("skill_resource", "2", name="web-research", path="advanced.md"),
            call(
                "skill_data",
                "3",
                name="web-research",
                path="data/source_policy.json",
                query="github",
            ),
            call("tavily_search", "4", query="LangGraph use cases"),
            call("delete_branch", "5", name="main"),
            Message.assistant("结论：LangGraph 适合构建有状态的 agent（来源：官方文档）。"),
        ]
    )
    agent = Agent(model, [tavily_search, delete_branch], instructions="Be brief.", skills=library)
    result = await agent.run("请查一下 LangGraph 现在主要适合用来做什么？")
    first, after_read, last = model.requests[0], model.requests[1], model.requests[-1]
    system = first.messages[0].text
    assert system.startswith("Be brief.\n\nAvailable skills")
    assert "- web-research: 用于回答需要联网检索" in system and "- code-review:" in system
    assert tool_names(first) == [
        "delete_branch",
        "read_result",
        "skill_data",
        "skill_read",
        "skill_reload",
        "skill_resource",
        "skill_run",
        "tavily_search",
    ]
    # Active: allowed-tools hide nothing (Claude Code pre-approves, it does not restrict) ...
    assert tool_names(after_read) == tool_names(first)
    outputs = [inv.result.content[0].text for inv in result.invocations]  # type: ignore[union-attr]
    assert outputs[0].startswith("# Skill: web-research")
    assert "来源优先级" in outputs[1] and '"trust_level": "high"' in outputs[2]
    assert "LangGraph docs" in outputs[3]
    assert "Pre-approved for this run (no approval asked): tavily_search" in outputs[0]
    # ... and a call outside the list is decided by the rules as usual: here it just runs.
    assert not last.messages[-1].parts[0].is_error  # type: ignore[union-attr]
    assert [inv.name for inv in result.invocations] == [
        "skill_read",
        "skill_resource",
        "skill_data",
        "tavily_search",
        "delete_branch",
    ]
    assert result.output.startswith("结论")


async def test_code_review_grant_lasts_one_run(library: SkillLibrary) -> None:
    session = Session()
    asked: list[str] = []

    async def approver(request: ApprovalRequest) -> bool:
        asked.append(request.tool_name)
        return True

    model = ScriptedModel(
        [
            call("skill_read", "1", name="code-review"),
            call("create_pr_comment", "2", pr_number=7, body="参数化查询"),
            call("merge_pr", "3", pr_number=7),
            Message.assistant("Reviewed: parameterise the query in app/db.py."),
            call("create_pr_comment", "4", pr_number=7, body="again"),
            Message.assistant("Commented again."),
        ]
    )
    tools = [list_pr_files, create_pr_comment, merge_pr]
    agent = Agent(model, tools, governance=Governance(approver=approver), skills=library)
    first = await agent.run("Review PR 7 please", session)
    # create_pr_comment is listed: no question; merge_pr is not: asked, as without the skill.
    assert asked == ["merge_pr"]
    assert [inv.name for inv in first.invocations] == [
        "skill_read",
        "create_pr_comment",
        "merge_pr",
    ]
    await agent.run("comment once more", session)
    assert asked == ["merge_pr", "create_pr_comment"]  # the grant ended with the first run


async def test_release_notes_as_a_slash_command(library: SkillLibrary, host_dir: Path) -> None:
    import subprocess

    repo = host_dir / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@e"]
    for command in (
        ["init", "-q"],
        ["commit", "-q", "--allow-empty", "-m", "chore: start"],
        ["tag", "v1.0"],
        ["commit", "-q", "--allow-empty", "-m", "feat: 导出 CSV"],
        ["commit", "-q", "--allow-empty", "-m", "fix: 空输入崩溃"],
    ):
        subprocess.run([*git, *command], check=True)  # noqa: ASYNC221  (setup, before the loop)
    model = ScriptedModel(
        [
            call(
                "skill_run",
                "1",
                name="release-notes",
                script="collect.sh",
                args=["v1.0", str(repo)],
            ),
            call("skill_resource", "2", name="release-notes", path="templates/release.md"),
            Message.assistant(
                "# v1.1 发版说明\n## ✨ 新功能\n- 导出 CSV\n## 🐛 修复\n- 空输入崩溃"
            ),
        ]
    )
    asked: list[str] = []

    async def approver(request: ApprovalRequest) -> bool:
        asked.append(request.tool_name)
        return True

    agent = Agent(model, [delete_branch], governance=Governance(approver=approver), skills=library)
    result = await agent.run("/release-notes v1.0")
    assert asked == []  # the skill lists skill_run in allowed-tools: its script runs unasked
    prompt = model.requests[0].messages[1].text
    assert prompt.startswith("# 发版说明生成") and prompt.endswith("上个版本：v1.0")
    assert "delete_branch" in tool_names(model.requests[0])  # nothing is hidden
    collected = result.invocations[0].result.content[0].text  # type: ignore[union-attr]
    assert collected.splitlines() == ["feat: 导出 CSV", "fix: 空输入崩溃"]
    assert "{features}" in result.invocations[1].result.content[0].text  # type: ignore[union-attr]


async def test_selector_model_and_bm25_fallback(library: SkillLibrary) -> None:
    selector = ScriptedModel([Message.assistant('{"skill": "code-review"}')])
    model = ScriptedModel([Message.assistant("done")])
    agent = Agent(model, skills=SkillSettings(library, selector=selector))
    await agent.run("look at my pull request")
    assert "- code-review:" in selector.requests[0].messages[0].text
    user = model.requests[0].messages[1].text
    assert user.startswith('<skill name="code-review">\n# 代码审查工作流')
    assert user.endswith("look at my pull request")
    confused = ScriptedModel([Message.assistant("I think maybe the second one?")])
    model = ScriptedModel([Message.assistant("done")])
    agent = Agent(model, skills=SkillSettings(library, selector=confused))
    await agent.run("帮我整理一下这次发布的 changelog，写发版说明")
    assert model.requests[0].messages[1].text.startswith('<skill name="release-notes">')
    nothing = ScriptedModel([Message.assistant("done")])
    await Agent(
        nothing, skills=SkillSettings(library, selector=ScriptedModel([ValueError("down")]))
    ).run("zzz qqq")
    assert nothing.requests[0].messages[1].text == "zzz qqq"  # no match: the prompt as typed


async def test_reload_updates_catalog_and_enum(library: SkillLibrary) -> None:
    model = ScriptedModel([Message.assistant("one"), Message.assistant("two")])
    agent = Agent(model, skills=library)
    await agent.run("first")
    (library.roots[0] / "fresh").mkdir()
    (library.roots[0] / "fresh" / "SKILL.md").write_text(
        "---\nname: fresh\ndescription: 新的\n---\nB"
    )
    library.reload()
    await agent.run("second")
    read = next(d for d in model.requests[1].tools if d.name == "skill_read")
    assert "fresh" in read.parameters["properties"]["name"]["enum"]
    assert "- fresh: 新的" in model.requests[1].messages[0].text
    with pytest.raises(ConfigError, match="already has a tool of that name"):
        Agent(model, [tool(lambda: "x", name="skill_read")], skills=library)
    with pytest.raises(TypeError, match=r"Agent\(skills=\.\.\.\) must be a SkillSettings"):
        Agent(model, skills="skills/")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"must be a toolweave\.skills\.SkillLibrary"):
        SkillSettings("skills/")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"SkillSettings\(catalog_budget_chars=\.\.\.\)"):
        SkillSettings(library, catalog_budget_chars=0)


async def test_scripts_are_refused_without_an_approver(library: SkillLibrary) -> None:
    model = ScriptedModel(
        [
            call("skill_run", "1", name="release-notes", script="collect.sh", args=["v1.0"]),
            Message.assistant("could not run it"),
        ]
    )
    result = await Agent(model, skills=library).run("write the release notes")
    refused = model.requests[1].messages[-1].parts[0]
    assert result.invocations == []  # nothing ran
    assert "blocked (approval)" in str(refused.content)  # type: ignore[union-attr]


@pytest.fixture
def git_work(tmp_path: Path) -> Path:
    import subprocess

    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    (work / "笔记.txt").write_text("内容", encoding="utf-8")
    return work


async def test_allowed_tools_match_as_claude_code_rules(tmp_path: Path, git_work: Path) -> None:
    from tests.skills.factory import write_skill
    from toolweave.builtins.filesystem import filesystem_tools
    from toolweave.builtins.shell import shell_tool
    from toolweave.governance import Rules

    work = git_work
    root = tmp_path / "skills"
    write_skill(
        root,
        "git-review",
        "name: git-review\ndescription: Review the working tree\n"
        "allowed-tools: Bash(git diff:*), Bash(git push:*), Read, Write",
    )
    model = ScriptedModel(
        [
            call("bash", "0", command="git diff"),  # before the skill: not pre-approved
            call("skill_read", "1", name="git-review"),
            call("bash", "2", command="git diff --stat"),
            call("bash", "3", command="git status"),
            call("bash", "4", command="git push origin main"),
            call("read_file", "5", path="笔记.txt"),
            call("write_file", "6", path="out.txt", content="x"),
            call("write_file", "7", path="secret/key.txt", content="x"),
            Message.assistant("done"),
        ]
    )
    asked: list[str] = []

    async def approve(request: ApprovalRequest) -> bool:
        asked.append(request.args.get("command", request.tool_name))
        return False

    tools = [shell_tool(work), *filesystem_tools(work)]
    # Deny rules win over any skill's pre-approval, whichever name they use.
    rules = Rules(deny=["Bash(git push:*)", "Write(secret/**)"], cwd=work)
    governance = Governance(rules=rules, approver=approve)
    agent = Agent(model, tools, governance=governance, skills=SkillLibrary([root]))
    result = await agent.run("review my changes")
    assert tool_names(model.requests[1]) == tool_names(model.requests[0])  # nothing hidden
    ran = [inv.name for inv in result.invocations]
    # git diff and Write listed: ran unasked; git status unlisted: asked (and refused here);
    # git push and secret/ listed but denied: blocked by the rules without a question.
    assert asked == ["git diff", "git status"]
    assert ran == ["skill_read", "bash", "read_file", "write_file"]
    results = {
        m.parts[0].call_id: str(m.parts[0].content)  # type: ignore[union-attr]
        for m in model.requests[-1].messages
        if m.parts and hasattr(m.parts[0], "call_id")
    }
    assert "blocked (rules)" in results["4"] and "'Bash(git push:*)'" in results["4"]
    assert "blocked (rules)" in results["7"] and "Write(secret/**)" in results["7"]
    assert (work / "out.txt").read_text() == "x" and not (work / "secret").exists()
    assert "\n内容\n" in result.invocations[2].result.content[0].text  # type: ignore[union-attr]


async def test_a_refused_skill_read_grants_nothing(tmp_path: Path, git_work: Path) -> None:
    from tests.skills.factory import write_skill
    from toolweave.builtins.shell import shell_tool
    from toolweave.governance import Rules

    root = tmp_path / "skills"
    write_skill(
        root, "git-review", "name: git-review\ndescription: d\nallowed-tools: Bash(git diff:*)"
    )
    model = ScriptedModel(
        [
            call("skill_read", "1", name="git-review"),
            call("bash", "2", command="git diff"),
            Message.assistant("done"),
        ]
    )
    asked: list[str] = []

    async def approve(request: ApprovalRequest) -> bool:
        asked.append(request.tool_name)
        return False

    # A rule refuses reading the skill: it never becomes active, so git diff still asks.
    governance = Governance(rules=Rules(deny=["skill_read(git-review)"]), approver=approve)
    agent = Agent(model, [shell_tool(git_work)], governance=governance, skills=SkillLibrary([root]))
    result = await agent.run("review")
    assert result.invocations == [] and asked == ["bash"]
    assert "blocked (rules)" in str(model.requests[1].messages[-1].parts[0].content)  # type: ignore[union-attr]
