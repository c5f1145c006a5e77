"""`Agent`'s parameters: the loop's own knobs plus one settings object per capability, each of
which checks itself; the one-line shortcuts; the public methods the scheduler and the
orchestration tools use instead of private attributes."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from tests.agent.script import call, calls, tool_messages
from toolweave.agent import Agent, Output, Session
from toolweave.agent.orchestration import Children, Orchestration, RunLimits, RunScope
from toolweave.errors import ConfigError
from toolweave.governance import Governance, Rules
from toolweave.llm import Message, ModelSettings, ScriptedModel
from toolweave.tools import Permission, PermissionPolicy, tool


@tool(permissions=[Permission.SHELL], primary_arg="command")
def bash(command: str) -> str:
    """Run a shell command (this one only pretends)."""
    return f"ran {command}"


def test_the_agent_takes_at_most_eighteen_parameters() -> None:
    parameters = inspect.signature(Agent.__init__).parameters
    assert len(parameters) <= 18
    capabilities = ["governance", "orchestration", "memory", "skills", "tracing", "tool_search"]
    capabilities.append("context")
    assert all(name in parameters for name in capabilities)
    keyword_only = [p.name for p in parameters.values() if p.kind is p.KEYWORD_ONLY]
    assert keyword_only[0] == "instructions" and "model" not in keyword_only


async def test_rules_from_a_claude_code_settings_file_are_one_line(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    settings = tmp_path / ".claude" / "settings.json"
    settings.write_text(
        '{"permissions": {"allow": ["Bash(git *)"], "deny": ["Bash(git push *)"]}}', "utf-8"
    )
    model = ScriptedModel(
        [
            calls(call("bash", "1", command="git status")),
            calls(call("bash", "2", command="git push origin 主分支")),
            Message.assistant("done"),
        ]
    )
    agent = Agent(model, [bash], governance=Rules.from_settings(settings))
    assert isinstance(agent.governance, Governance) and agent.governance.rules is not None
    result = await agent.run("check, then push")
    assert [i.args["command"] for i in result.invocations] == ["git status"]
    (refused,) = tool_messages(model.requests[2].messages)[1:]
    assert refused.is_error and "git push" in refused.text


async def test_a_bare_policy_is_the_governance_policy() -> None:
    model = ScriptedModel([calls(call("bash", "1", command="ls")), Message.assistant("done")])
    agent = Agent(model, [bash], governance=PermissionPolicy(denied=["shell"]))
    assert agent.governance.policy is not None
    with pytest.raises(Exception, match="shell"):
        await agent.run("list")
    assert Governance.of(None) == Governance()


async def test_governance_mode_is_where_a_new_session_starts() -> None:
    model = ScriptedModel(
        [calls(call("bash", "1", command="make")), Message.assistant("planned")] * 3
    )
    agent = Agent(model, [bash], governance=Governance(mode="plan", rules=Rules(default="allow")))
    fresh = Session()
    result = await agent.run("build", fresh)
    assert fresh.permission_mode == "plan" and result.invocations == []
    fresh.permission_mode = "default"  # the session's own choice now holds
    chosen = Session(permission_mode="default")
    await agent.run("build", chosen)
    assert chosen.permission_mode == "default"
    assert [i.args["command"] for i in (await agent.run("build", fresh)).invocations] == ["make"]


async def test_output_and_model_settings_check_themselves_and_reach_the_model() -> None:
    with pytest.raises(ConfigError, match=r"Output\(mode='json'\)"):
        Output(mode="json")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"Output\(retries=\.\.\.\)"):
        Output(retries=-1)
    with pytest.raises(ConfigError, match=r"ModelSettings\(temperature=\.\.\.\)"):
        ModelSettings(temperature=-0.5)
    with pytest.raises(ConfigError, match=r"ModelSettings\(max_tokens=\.\.\.\)"):
        ModelSettings(max_tokens=0)
    with pytest.raises(TypeError, match=r"Agent\(model_settings=\.\.\.\)"):
        Agent(ScriptedModel([]), model_settings={"temperature": 0})  # type: ignore[arg-type]
    model = ScriptedModel([Message.assistant("你好")])
    agent = Agent(model, model_settings=ModelSettings(temperature=0.2, max_tokens=64))
    assert (await agent.run("hi")).output == "你好"
    assert (model.requests[0].temperature, model.requests[0].max_tokens) == (0.2, 64)


def test_orchestration_checks_itself() -> None:
    with pytest.raises(ConfigError, match=r"Children\(subagent_tools='all'\)"):
        Children(subagent_tools="all")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"Children\(subagent_timeout=\.\.\.\)"):
        Children(subagent_timeout=0)
    with pytest.raises(TypeError, match=r"RunLimits\(quota=\.\.\.\)"):
        RunLimits(quota="bot.db")  # type: ignore[arg-type]
    for recovery in (float("inf"), float("nan")):  # each refusal raised OverflowError/ValueError
        with pytest.raises(ConfigError, match="circuit_recovery must be a positive number"):
            RunLimits(circuit_recovery=recovery)
    with pytest.raises(ConfigError, match="circuit_failures must be an integer"):
        RunLimits(circuit_failures=2.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Orchestration\(children=\.\.\.\) must be a Children"):
        Orchestration(children=RunLimits())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Agent\(orchestration=\.\.\.\)"):
        Agent(ScriptedModel([]), orchestration={"subagents": True})  # type: ignore[arg-type]
    teams = Orchestration(children=Children(teams=True), commands={"tr": "翻译：$ARGUMENTS"})
    assert teams.children.subagents and teams.children.teams is not None
    assert teams.commands is not None and teams.limits.circuit is not None
    child = teams.child()
    assert child.limits.circuit is teams.limits.circuit and not child.children.subagents
    assert child.commands is None


def test_a_bare_children_or_run_limits_is_the_orchestration_with_defaults() -> None:
    children = Children(subagents=True)
    limits = RunLimits(circuit_failures=None)
    agent = Agent(ScriptedModel([]), orchestration=children)
    assert agent.orchestration.children is children and "subagent_run" in agent.registry
    assert agent.orchestration.limits.circuit is not None  # RunLimits() is the default
    limited = Agent(ScriptedModel([]), orchestration=limits)
    assert limited.orchestration.limits is limits and not limited.orchestration.children.subagents
    assert "subagent_run" not in limited.registry


async def test_replace_and_run_scoped_are_what_a_scheduled_run_uses() -> None:
    model = ScriptedModel([calls(call("bash", "1", command="ls")), Message.assistant("done")])
    agent = Agent(model, [bash], instructions="Be brief.", max_turns=3)
    allowed = agent.governance.child(agent_id="job-1", agent_type="scheduled")
    allowed = Governance(rules=Rules(allow=["bash(ls)"]), identity=allowed.identity)
    scheduled = agent.replace(governance=allowed)
    assert scheduled.governance is allowed and agent.governance is not allowed
    assert scheduled.registry is agent.registry and scheduled.instructions == "Be brief."
    session = Session()
    scope = RunScope(scheduled, session, "quota-key", agent_type="scheduled", turns_left=3)
    result = await scheduled.run_scoped("list the files", scope)
    assert result.output == "done" and [i.args for i in result.invocations] == [{"command": "ls"}]
    assert scope.model_calls == 2 and session.messages[-1].text == "done"
