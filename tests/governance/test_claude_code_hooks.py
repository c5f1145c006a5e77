"""A Claude Code settings file with hooks, pasted unchanged: what toolweave runs, what it skips
with a warning, and the payload and environment its hooks see.

`fixtures/claude_hooks_settings.json` holds the shapes real files use: events toolweave does not
run (`Setup`, `UserPromptExpansion`), an `if` condition, `statusMessage`, a `prompt` hook, an
`async` hook with `shell`, a `Notification` matcher, and a validator in the shape of Anthropic's
`bash_command_validator_example.py`.
"""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path
from typing import Any

import pytest

from toolweave import Agent
from toolweave.agent.orchestration import Children
from toolweave.builtins import filesystem_tools, shell_tool
from toolweave.governance import CallBlocked, GateContext, Governance, Hooks, Rules
from toolweave.governance.errors import HookConfigError
from toolweave.llm import Message, ScriptedModel, ToolCallPart
from toolweave.tools import ToolContext

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "工程"
    (root / ".claude" / "hooks").mkdir(parents=True)
    shutil.copy(FIXTURES / "claude_hooks_settings.json", root / ".claude" / "settings.json")
    shutil.copy(FIXTURES / "bash_command_validator.py", root / ".claude" / "hooks")
    return root


def load(project: Path) -> Hooks:
    return Hooks.from_settings(project / ".claude" / "settings.json", cwd=str(project))


def real(folder: Path, name: str) -> str:
    return str(folder.resolve() / name)


def jsonl(path: str) -> list[Any]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def payload(tool_name: str, **tool_input: Any) -> dict[str, Any]:
    return {"session_id": "s1", "tool_name": tool_name, "tool_input": tool_input}


def test_events_and_types_toolweave_does_not_run_are_skipped_with_one_warning(
    project: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="toolweave.hooks"):
        hooks = load(project)
        load(project)  # a second load of the same file warns no more
    text = caplog.text
    for named in ("'Setup'", "'UserPromptExpansion'", "'prompt'", "'statusMessage'"):
        assert text.count(named) == 1, named
    assert hooks.has("PreToolUse") and hooks.has("Notification") and not hooks.has("Setup")


async def test_if_runs_the_hook_only_for_the_calls_its_rule_matches(project: Path) -> None:
    hooks = load(project)
    assert not (await hooks.run("PreToolUse", payload("Bash", command="ls"))).blocked
    commit = await hooks.run("PreToolUse", payload("Bash", command="git commit -m 'x'"))
    assert commit.blocked and commit.reason == "run the tests before committing"
    chained = await hooks.run("PreToolUse", payload("Bash", command="ls && git commit -m x"))
    assert chained.blocked  # any simple command of the line


async def test_the_validator_sees_tool_name_bash(project: Path) -> None:
    bash = shell_tool(project)
    gov = Governance(rules=Rules(allow=["Bash(grep *)", "Bash(rg *)"]), hooks=load(project))
    gate = GateContext(session_id="s1")
    with pytest.raises(CallBlocked) as blocked:
        await gov.clear("bash", "c1", {"command": "grep -r TODO ."}, bash, gate)
    assert blocked.value.stage == "hook" and "Use 'rg' (ripgrep)" in blocked.value.message
    await gov.clear("bash", "c2", {"command": "rg TODO"}, bash, gate)  # passes


async def test_matchers_are_case_sensitive_and_see_claude_code_names(project: Path) -> None:
    seen: list[str] = []
    hooks = Hooks({})

    @hooks.on("PreToolUse", matcher="Read|Write")
    async def record(data: dict[str, Any]) -> None:
        seen.append(data["tool_name"])

    @hooks.on("PreToolUse", matcher="READ")
    async def never(data: dict[str, Any]) -> None:
        seen.append("READ matched")

    tools = {t.name: t for t in filesystem_tools(str(project))}
    gov = Governance(rules=Rules(default="allow"), hooks=hooks)
    gate = GateContext(session_id="s1")
    await gov.clear("read_file", "c1", {"path": "a.txt"}, tools["read_file"], gate)
    args = {"path": "n.md", "content": "x"}
    await gov.clear("write_file", "c2", args, tools["write_file"], gate)
    assert seen == ["Read", "Write"]


async def test_async_hooks_run_in_the_background_and_cannot_block(project: Path) -> None:
    hooks = load(project)
    outcome = await hooks.run("PreToolUse", payload("Write", file_path="a", content="b"))
    assert not outcome.blocked
    await hooks.settle()


async def test_notification_fires_when_an_approval_is_waiting(project: Path) -> None:
    async def approver(request: object) -> bool:
        return True

    gov = Governance(hooks=load(project), approver=approver)
    bash = shell_tool(project)
    await gov.clear("bash", "c1", {"command": "make"}, bash, GateContext(session_id="s1"))
    sent = json.loads((project / "notified.json").read_text())
    assert sent["hook_event_name"] == "Notification"
    assert sent["notification_type"] == "permission_prompt" and "Bash" in sent["message"]


async def test_transcript_path_and_tool_response_as_claude_code_sends_them(
    tmp_path: Path,
) -> None:
    seen: list[dict[str, Any]] = []
    hooks = Hooks({})

    @hooks.on("PostToolUse", matcher="Bash")
    async def record(data: dict[str, Any]) -> None:
        seen.append(data)

    tools = [shell_tool(tmp_path, allow=["echo *"])]
    model = ScriptedModel(
        [
            Message("assistant", [ToolCallPart("c1", "bash", {"command": "echo 你好"})]),
            Message.assistant("done"),
        ]
    )
    await Agent(model, tools, governance=Governance(hooks=hooks)).run("say hello 你好")
    [data] = seen
    assert data["tool_name"] == "Bash" and isinstance(data["tool_response"], dict)
    assert "你好" in data["tool_response"]["stdout"]
    lines = jsonl(data["transcript_path"])
    assert lines[0]["type"] in ("system", "user") and lines[-1]["type"] == "assistant"
    assert any("say hello 你好" in json.dumps(line, ensure_ascii=False) for line in lines)


async def test_plugin_hooks_get_claude_plugin_root(tmp_path: Path) -> None:
    plugin = tmp_path / "my-plugin"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / "hooks").mkdir()
    (plugin / "hooks" / "hooks.json").write_text(
        json.dumps(
            {
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "Bash",
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": 'echo "$CLAUDE_PLUGIN_ROOT|$CLAUDE_PROJECT_DIR"'
                                    ' > "${CLAUDE_PLUGIN_ROOT}/seen.txt"',
                                }
                            ],
                        }
                    ]
                }
            }
        )
    )
    hooks = Hooks.from_file(plugin / "hooks" / "hooks.json", cwd=str(tmp_path))
    await hooks.run("PreToolUse", payload("Bash", command="ls"))
    assert (plugin / "seen.txt").read_text().strip() == f"{plugin}|{tmp_path}"


def test_a_broken_hooks_file_is_named_once(tmp_path: Path) -> None:
    broken = tmp_path / "hooks.json"
    broken.write_text('{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": []}]}}')
    with pytest.raises(HookConfigError) as error:
        Hooks.from_file(broken)
    assert str(error.value).count(str(broken)) == 1
    broken.write_text("{not json")
    with pytest.raises(HookConfigError) as error:
        Hooks.from_file(broken)
    assert str(error.value).count(str(broken)) == 1 and "not valid JSON" in str(error.value)
    missing = tmp_path / "缺少.json"
    with pytest.raises(HookConfigError) as error:
        Hooks.from_file(missing)
    assert str(error.value).count(str(missing)) == 1


async def test_subagent_start_and_stop_fire_around_a_subagent() -> None:
    events: list[tuple[str, str, str]] = []
    hooks = Hooks({})

    @hooks.on("SubagentStart", matcher="subagent")
    async def started(data: dict[str, Any]) -> None:
        events.append((data["hook_event_name"], data["agent_type"], data["agent_id"]))

    @hooks.on("SubagentStop")
    async def stopped(data: dict[str, Any]) -> None:
        events.append((data["hook_event_name"], data["agent_type"], data["last_assistant_message"]))

    child = ScriptedModel([Message.assistant("子任务完成")])
    parent = ScriptedModel(
        [
            Message("assistant", [ToolCallPart("p1", "subagent_run", {"task": "look"})]),
            Message.assistant("ok"),
        ]
    )
    agent = Agent(
        parent,
        [],
        governance=Governance(hooks=hooks),
        orchestration=Children(subagents=True, subagent_model=child),
    )
    await agent.run("go")
    [(start, kind, agent_id), stop] = events
    assert start == "SubagentStart" and kind == "subagent" and agent_id.startswith("subagent-")
    assert stop == ("SubagentStop", "subagent", "子任务完成")


async def test_file_tools_send_file_path_and_take_back_their_own_arguments(
    tmp_path: Path,
) -> None:
    seen: list[dict[str, Any]] = []
    hooks = Hooks({})

    @hooks.on("PreToolUse", matcher="Write")
    async def redirect(data: dict[str, Any]) -> dict[str, Any]:
        seen.append(data["tool_input"])
        moved = {**data["tool_input"], "path": "drafts/笔记.md"}
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": moved}}

    writer = {t.name: t for t in filesystem_tools(str(tmp_path))}["write_file"]
    gov = Governance(rules=Rules(default="allow"), hooks=hooks)
    args = {"path": "笔记.md", "content": "x"}
    cleared = await gov.clear("write_file", "c1", args, writer, GateContext(session_id="s"))
    assert seen[0]["file_path"] == real(tmp_path, "笔记.md")
    assert cleared.args == {"path": "drafts/笔记.md", "content": "x"}  # no file_path left
    await writer.execute(cleared.args, ToolContext())
    assert (tmp_path / "drafts" / "笔记.md").read_text() == "x"


async def test_shell_names_the_program_that_runs_the_command(tmp_path: Path) -> None:
    bash_only = "[[ $(echo 你好) == 你好 ]] && { echo 'bash ran it' >&2; exit 2; }; exit 0"
    config = {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"command": bash_only, "shell": "bash"}]}]
    }
    outcome = await Hooks(config).run("PreToolUse", payload("Bash", command="ls"))
    assert outcome.blocked and outcome.reason == "bash ran it"
    guarded = {"PreToolUse": [{"hooks": [{"command": "exit 2", "if": "Bash(git push:*)"}]}]}
    other = await Hooks(guarded).run("PreToolUse", payload("Write", file_path="/x", content=""))
    assert not other.blocked  # an `if` for Bash never runs the hook for Write
