"""Governance inside the agent loop: each call gated in its own task, blocks as results and
`ToolCallBlocked` events, safe defaults, plan mode, approvals, ApprovalRequired, hooks."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from typing import Any

import pytest

from toolweave import Agent, Permission, PermissionPolicy, ToolContext, tool
from toolweave.agent import Session, ToolCallBlocked
from toolweave.agent.errors import PromptBlocked
from toolweave.governance import ApprovalRequest, Governance, Hooks, Rules
from toolweave.llm import Message, ModelRequest, ScriptedModel, ToolCallPart
from toolweave.tools import ApprovalRequired, PermissionDenied


def calls(*parts: ToolCallPart) -> Message:
    return Message("assistant", list(parts))


def call(name: str, call_id: str, **args: Any) -> ToolCallPart:
    return ToolCallPart(call_id, name, args)


ran: list[str] = []


@tool(permissions=[Permission.SHELL], primary_arg="command")
def bash(command: str) -> str:
    """Pretend shell."""
    ran.append(command)
    return f"ran {command}"


@tool(permissions=[Permission.DELETE])
def wipe(target: str) -> str:
    """Delete something."""
    ran.append(f"wipe {target}")
    return "wiped"


@tool(read_only=True)
def lookup(key: str) -> str:
    """Read-only lookup."""
    ran.append(f"lookup {key}")
    return key.upper()


@tool
def todo_write(items: list[str]) -> int:
    """The plan."""
    return len(items)


@tool
def note(text: str) -> str:
    """Write a note."""
    ran.append(f"note {text}")
    return "ok"


@pytest.fixture(autouse=True)
def _reset() -> None:
    ran.clear()


def _results(result: Any) -> list[str]:
    """Each call's result text, without the data-not-instructions wrapper of tool output."""
    texts = [p.text for m in result.new_messages for p in m.tool_results]
    return [re.sub(r"(?s)^<tool_output[^>]*>\n(.*)\n</tool_output>\n.*$", r"\1", t) for t in texts]


async def test_safe_default_refuses_shell_and_delete_without_an_approver() -> None:
    model = ScriptedModel(
        [
            calls(
                call("bash", "1", command="rm -rf build"),
                call("wipe", "2", target="db"),
                call("note", "3", text="普通"),
            ),
            Message.assistant("ok"),
        ]
    )
    result = await Agent(model, [bash, wipe, note]).run("clean up")
    texts = _results(result)
    assert ran == ["note 普通"]
    assert "approver=" in texts[0] and 'Rules(allow=["bash(git *)"])' in texts[0]
    assert "approver=" in texts[1]
    assert result.output == "ok"  # the loop went on


async def test_opt_outs_run_as_before_given_bare_rules_or_a_policy() -> None:
    # The one-line shortcut: bare Rules mean Governance(rules=...), a bare PermissionPolicy
    # means Governance(policy=...).
    for governance in (Rules(default="allow"), PermissionPolicy.allow_all()):
        model = ScriptedModel([calls(call("wipe", "1", target="tmp")), Message.assistant("done")])
        agent = Agent(model, [wipe], governance=governance)
        # The agent's circuit breaker is one of the governance's own gates.
        assert agent.governance.gates == (agent.orchestration.limits.circuit,)
        assert dataclasses.replace(agent.governance, gates=()) == Governance.of(governance)
        await agent.run("go")
    assert ran == ["wipe tmp", "wipe tmp"]


async def test_a_call_waiting_for_approval_does_not_delay_a_read_only_call() -> None:
    looked_up = asyncio.Event()
    order: list[str] = []

    async def approver(request: ApprovalRequest) -> bool:
        # Answers only once the read-only call of the same turn has run; if gating were still
        # sequential, the lookup could not run while we wait and this would time out (deny).
        await asyncio.wait_for(looked_up.wait(), 0.5)
        order.append("approved")
        return True

    @tool(read_only=True)
    async def fast(key: str) -> str:
        """Read-only and quick."""
        order.append("fast ran")
        looked_up.set()
        return key

    model = ScriptedModel(
        [
            calls(call("bash", "1", command="make"), call("fast", "2", key="k")),
            Message.assistant("ok"),
        ]
    )
    result = await Agent(model, [bash, fast], governance=Governance(approver=approver)).run("go")
    assert order == ["fast ran", "approved"]
    assert ran == ["make"] and _results(result) == ["ran make", "k"]


async def test_blocks_are_events_and_results_and_the_loop_goes_on() -> None:
    model = ScriptedModel(
        [
            calls(
                call("bash", "1", command="git status; rm -rf /"),
                call("bash", "2", command="git log"),
            ),
            Message.assistant("ok"),
        ]
    )
    agent = Agent(
        model,
        [bash],
        governance=Governance(rules=Rules(allow=["bash(git *)"], deny=["bash(rm *)"])),
    )
    events = [e async for e in agent.run_stream("go")]
    blocked = [e for e in events if isinstance(e, ToolCallBlocked)]
    assert len(blocked) == 1 and blocked[0].stage == "rules" and blocked[0].call.id == "1"
    assert "bash(rm *)" in blocked[0].reason and blocked[0].kind == "tool_call_blocked"
    assert ran == ["git log"]


async def test_declared_permission_policy_still_ends_the_run() -> None:
    model = ScriptedModel([calls(call("bash", "1", command="ls")), Message.assistant("never")])
    with pytest.raises(PermissionDenied):
        await Agent(model, [bash], governance=Governance(policy=PermissionPolicy())).run("go")
    assert ran == []


async def test_plan_mode_is_switchable_at_run_time() -> None:
    session = Session(plan_mode=True)
    steps = [
        calls(
            call("note", "1", text="x"),
            call("lookup", "2", key="k"),
            call("todo_write", "3", items=["a"]),
        ),
        Message.assistant("planned"),
    ]
    agent = Agent(
        ScriptedModel([*steps, calls(call("note", "4", text="y")), Message.assistant("done")]),
        [note, lookup, todo_write],
    )
    result = await agent.run("plan it", session=session)
    assert ran == ["lookup k"] and "plan mode" in _results(result)[0]
    session.permission_mode = "default"
    await agent.run("do it", session=session)
    assert ran == ["lookup k", "note y"]
    assert not session.plan_mode


async def test_always_is_remembered_and_approvals_are_asked_one_at_a_time() -> None:
    asked: list[str] = []
    active = 0
    peak = 0

    async def approver(request: ApprovalRequest) -> str:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        asked.append(request.args["command"])
        await asyncio.sleep(0)
        active -= 1
        return "always"

    model = ScriptedModel(
        [
            calls(call("bash", "1", command="a"), call("bash", "2", command="b")),
            calls(call("bash", "3", command="c")),
            Message.assistant("ok"),
        ]
    )
    session = Session()
    await Agent(model, [bash], governance=Governance(approver=approver)).run("go", session=session)
    assert peak == 1 and len(asked) == 1  # the second waited, then found "always"
    assert sorted(ran) == ["a", "b", "c"]


async def test_approval_required_from_a_tool_reruns_with_the_flag() -> None:
    seen: list[bool] = []

    @tool
    async def deploy(target: str, ctx: ToolContext) -> str:
        """Deploy."""
        seen.append(ctx.tool_call_approved)
        if not ctx.tool_call_approved:
            raise ApprovalRequired(f"deploying {target} cannot be undone")
        return "deployed"

    requests: list[ApprovalRequest] = []

    async def approver(request: ApprovalRequest) -> bool:
        requests.append(request)
        return True

    model = ScriptedModel([calls(call("deploy", "1", target="prod")), Message.assistant("ok")])
    result = await Agent(model, [deploy], governance=Governance(approver=approver)).run("ship")
    assert seen == [False, True] and _results(result) == ["deployed"]
    assert "cannot be undone" in requests[0].reason
    seen.clear()
    model = ScriptedModel([calls(call("deploy", "1", target="prod")), Message.assistant("ok")])
    result = await Agent(model, [deploy]).run("ship")
    assert seen == [False] and "cannot be undone" in _results(result)[0]


async def test_admin_tools_need_the_admin_approver() -> None:
    @tool(admin_approval=True)
    def config_set(key: str, value: str) -> str:
        """Change configuration."""
        ran.append(f"set {key}")
        return "set"

    user: list[ApprovalRequest] = []
    admin: list[ApprovalRequest] = []

    async def user_approver(request: ApprovalRequest) -> bool:
        user.append(request)
        return True

    async def admin_approver(request: ApprovalRequest) -> bool:
        admin.append(request)
        return request.args["key"] != "token"

    model = ScriptedModel(
        [
            calls(
                call("config_set", "1", key="model", value="x"),
                call("config_set", "2", key="token", value="y"),
            ),
            Message.assistant("ok"),
        ]
    )
    agent = Agent(
        model,
        [config_set],
        governance=Governance(
            rules=Rules(default="allow"), approver=user_approver, admin_approver=admin_approver
        ),
    )
    events = [e async for e in agent.run_stream("configure", session=Session(requester="alice"))]
    assert ran == ["set model"] and user == [] and len(admin) == 2
    assert admin[0].requester == "alice" and admin[0].kind == "admin"
    assert [e.stage for e in events if isinstance(e, ToolCallBlocked)] == ["admin"]


async def test_hooks_in_the_loop(tmp_path: Any) -> None:
    post: list[dict[str, Any]] = []
    hooks = Hooks(
        {
            "PreToolUse": [
                {
                    "matcher": "bash",
                    "hooks": [
                        {"command": "grep -q push && { echo 'no pushing' >&2; exit 2; } || exit 0"}
                    ],
                }
            ]
        }
    )

    @hooks.on("PostToolUse")
    async def after(payload: dict[str, Any]) -> dict[str, Any]:
        post.append(payload)
        return {"hookSpecificOutput": {"additionalContext": "remember to run the tests"}}

    model = ScriptedModel(
        [
            calls(call("bash", "1", command="git push"), call("bash", "2", command="git status")),
            Message.assistant("ok"),
        ]
    )
    result = await Agent(
        model, [bash], governance=Governance(rules=Rules(allow=["bash(git *)"]), hooks=hooks)
    ).run("go")
    texts = _results(result)
    assert "no pushing" in texts[0] and ran == ["git status"]
    raw = [p.text for m in result.new_messages for p in m.tool_results]
    assert "ran git status" in raw[1] and raw[1].endswith("remember to run the tests")
    assert post[0]["tool_name"] == "Bash" and post[0]["tool_response"] is not None


async def test_user_prompt_submit_can_block_before_the_model_is_called() -> None:
    hooks = Hooks(
        {
            "UserPromptSubmit": [
                {
                    "hooks": [
                        {
                            "command": "grep -q password"
                            " && { echo 'no secrets in prompts' >&2; exit 2; }"
                            " || echo 'context: 今天'"
                        }
                    ]
                }
            ]
        }
    )
    model = ScriptedModel([Message.assistant("ok")])
    with pytest.raises(PromptBlocked, match="no secrets"):
        await Agent(model, [], governance=Governance(hooks=hooks)).run("my password is hunter2")
    assert model.requests == []
    result = await Agent(model, [], governance=Governance(hooks=hooks)).run("hello")
    assert result.output == "ok"
    assert any("今天" in m.text for m in model.requests[0].messages if m.role in ("user", "system"))


async def test_stop_hook_can_keep_the_run_going() -> None:
    hooks = Hooks()
    stops: list[dict[str, Any]] = []

    @hooks.on("Stop")
    async def check(payload: dict[str, Any]) -> dict[str, Any] | None:
        stops.append(payload)
        if not payload["stop_hook_active"]:
            return {"decision": "block", "reason": "you forgot the summary"}
        return None

    def answer(request: ModelRequest) -> Message:
        last = request.messages[-1]
        return Message.assistant("summary" if "forgot" in last.text else "draft")

    result = await Agent(
        ScriptedModel([answer, answer]), [], governance=Governance(hooks=hooks)
    ).run("go")
    assert result.output == "summary" and [s["stop_hook_active"] for s in stops] == [False, True]


async def test_child_governance_for_subagents() -> None:
    seen: list[dict[str, Any]] = []
    hooks = Hooks()

    @hooks.on("PreToolUse")
    async def record(payload: dict[str, Any]) -> None:
        seen.append(payload)

    parent = Agent(
        ScriptedModel([]),
        [bash],
        governance=Governance(
            rules=Rules(allow=["bash(git *)"], deny=["bash(git push *)"]), hooks=hooks
        ),
    )
    child_governance = parent.governance.child(
        agent_id="sub-1", agent_type="researcher", rules=Rules(allow=["bash(git *)"])
    )
    model = ScriptedModel(
        [
            calls(call("bash", "1", command="git push"), call("bash", "2", command="git log")),
            Message.assistant("ok"),
        ]
    )
    child = Agent(model, [bash], governance=child_governance)
    result = await child.run("research")
    assert ran == ["git log"] and "git push" in _results(result)[0]
    assert {p["agent_id"] for p in seen} == {"sub-1"} and seen[0]["parent_agent_ids"] == ["main"]


def test_governance_checks_itself_and_sessions_check_their_mode() -> None:
    from toolweave.errors import ConfigError

    with pytest.raises(TypeError, match=r"Governance\(rules=\.\.\.\) must be a Rules"):
        Governance(rules=["bash(*)"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Governance\(gates=\.\.\.\) items"):
        Governance(gates=[object()])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match=r"Governance\(mode='yolo'\)"):
        Governance(mode="yolo")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Agent\(governance=\.\.\.\) must be a Governance"):
        Agent(ScriptedModel([]), [], governance="allow")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="permission_mode"):
        Session(permission_mode="yolo")  # type: ignore[arg-type]


def test_json_roundtrip_of_blocked_event() -> None:
    event = ToolCallBlocked(call("bash", "1", command="x"), "rules", "denied", 1)
    assert (
        json.dumps({"kind": event.kind, "stage": event.stage})
        == '{"kind": "tool_call_blocked", "stage": "rules"}'
    )


async def test_session_start_pre_compact_and_session_end_hooks() -> None:
    fired: list[tuple[str, Any]] = []
    hooks = Hooks()

    @hooks.on("SessionStart")
    async def start(payload: dict[str, Any]) -> dict[str, Any]:
        fired.append(("SessionStart", payload["source"]))
        return {"hookSpecificOutput": {"additionalContext": "项目约定: 先写测试"}}

    @hooks.on("PreCompact")
    async def compact(payload: dict[str, Any]) -> None:
        fired.append(("PreCompact", payload["trigger"]))

    @tool(read_only=True)
    def dump(n: int) -> str:
        """Lots of text."""
        return "x" * n

    model = ScriptedModel(
        [
            calls(call("dump", "1", n=4000)),
            calls(call("dump", "2", n=10)),
            Message.assistant("ok"),
            Message.assistant("again"),
        ]
    )
    session = Session(max_history_tokens=200, keep_recent_results=0)
    agent = Agent(model, [dump], governance=Governance(hooks=hooks))
    await agent.run("go", session=session)
    await agent.run("more", session=session)
    assert fired[0] == ("SessionStart", "startup")
    assert ("PreCompact", "auto") in fired
    assert [f for f in fired if f[0] == "SessionStart"] == [("SessionStart", "startup")]
    assert "先写测试" in model.requests[0].messages[0].text
    ended: list[dict[str, Any]] = []

    @hooks.on("SessionEnd")
    async def end(payload: dict[str, Any]) -> None:
        ended.append(payload)

    from toolweave.governance import GateContext

    await agent.governance.fire("SessionEnd", GateContext.of(session), reason="exit")
    assert ended[0]["session_id"] == session.id and ended[0]["reason"] == "exit"
