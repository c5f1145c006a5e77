"""The gate pipeline on its own: stage order, modes, approvers, admin tools, child runs."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from typing import Any

import pytest

from toolweave.governance.approvals import ApprovalRequest, ApprovalState
from toolweave.governance.hooks import Hooks
from toolweave.governance.pipeline import CallBlocked, GateContext, Governance, HookStopped
from toolweave.governance.rules import Rules
from toolweave.tools import Permission, PermissionDenied, PermissionPolicy, ToolRegistry, tool


@tool(permissions=[Permission.SHELL], primary_arg="command")
def bash(command: str) -> str:
    return command


@tool(read_only=True, primary_arg="path")
def read(path: str) -> str:
    return path


@tool
def todo_write(items: list[str]) -> int:
    return len(items)


@tool
def add_note(text: str) -> str:
    return text


@tool(admin_approval=True)
def config_set(key: str, value: str) -> str:
    return key


@tool(permissions=[Permission.WRITE], primary_arg="path")
def edit(path: str, text: str) -> str:
    return path


class Recorder:
    def __init__(self, answer: Any = True) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> Any:
        self.requests.append(request)
        return self.answer


def gate(**kwargs: Any) -> GateContext:
    return GateContext(session_id="s1", **kwargs)


async def clear(
    gov: Governance, t: Any, args: dict[str, Any], ctx: GateContext | None = None
) -> Any:
    ctx = ctx or gate()
    gov.precheck(t.name, t, ctx)
    return await gov.clear(t.name, "c1", args, t, ctx)


async def test_safe_default_asks_and_refuses_without_an_approver() -> None:
    with pytest.raises(CallBlocked) as info:
        await clear(Governance(), bash, {"command": "rm -rf build"})
    error = info.value
    assert error.stage == "approval" and error.recoverable
    assert "approver=" in error.message and 'Rules(allow=["bash(git *)"])' in error.message
    assert (await clear(Governance(), add_note, {"text": "普通"})).args == {"text": "普通"}
    assert await clear(Governance(rules=Rules(default="allow")), bash, {"command": "ls"})
    policy = PermissionPolicy.allow_all()
    assert await clear(Governance(), bash, {"command": "ls"}, gate(policy=policy))
    assert await clear(
        Governance(),
        bash,
        {"command": "ls"},
        gate(policy=PermissionPolicy(allowed=["read", "shell"], denied=[])),
    )


async def test_approver_is_asked_with_the_request() -> None:
    approver = Recorder(True)
    gov = Governance(rules=Rules(allow=["bash(git *)"]), approver=approver)
    await clear(gov, bash, {"command": "git status"})
    assert approver.requests == []
    await clear(gov, bash, {"command": "git status && make"}, gate(requester="alice"))
    (request,) = approver.requests
    assert request.tool_name == "bash" and request.args == {"command": "git status && make"}
    assert request.session_id == "s1" and request.requester == "alice" and request.kind == "user"
    assert "make" in request.reason


async def test_denied_timed_out_and_failing_approvers_block() -> None:
    for answer in (False, "no", None):
        with pytest.raises(CallBlocked, match="said no"):
            await clear(Governance(approver=Recorder(answer)), bash, {"command": "ls"})

    async def slow(request: ApprovalRequest) -> bool:
        await asyncio.Event().wait()
        return True

    with pytest.raises(CallBlocked, match=r"no answer within 0\.05s"):
        await clear(Governance(approver=slow, approval_timeout=0.05), bash, {"command": "ls"})

    async def broken(request: ApprovalRequest) -> bool:
        raise RuntimeError("chat closed")

    with pytest.raises(CallBlocked, match="chat closed"):
        await clear(Governance(approver=broken), bash, {"command": "ls"})


async def test_always_is_remembered_for_the_session() -> None:
    approver = Recorder("always")
    gov = Governance(approver=approver)
    ctx = gate()
    await clear(gov, bash, {"command": "ls"}, ctx)
    await clear(gov, bash, {"command": "pwd"}, ctx)
    assert len(approver.requests) == 1
    await clear(gov, bash, {"command": "pwd"}, gate())  # another session asks again
    assert len(approver.requests) == 2


async def test_approvals_of_one_session_are_asked_one_at_a_time() -> None:
    active = 0
    peak = 0
    release = asyncio.Event()
    asked = 0

    async def approver(request: ApprovalRequest) -> bool:
        nonlocal active, peak, asked
        active += 1
        asked += 1
        peak = max(peak, active)
        if asked == 1:
            await release.wait()
        active -= 1
        return True

    gov = Governance(approver=approver)
    ctx = gate()
    first = asyncio.ensure_future(clear(gov, bash, {"command": "a"}, ctx))
    second = asyncio.ensure_future(clear(gov, bash, {"command": "b"}, ctx))
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(first, second)
    assert peak == 1 and asked == 2


async def test_deny_rules_block_and_the_loop_goes_on() -> None:
    gov = Governance(rules=Rules(deny=["bash(rm *)"]), approver=Recorder(True))
    with pytest.raises(CallBlocked) as info:
        await clear(gov, bash, {"command": "ls; rm -rf /"})
    assert info.value.stage == "rules" and info.value.recoverable
    assert "bash(rm *)" in info.value.reason


async def test_the_registry_is_the_one_decider_of_the_declared_permission_policy() -> None:
    denying = PermissionPolicy()  # fail closed: nothing is allowed
    Governance().precheck(bash.name, bash, gate(policy=denying))  # not a pipeline stage
    registry = ToolRegistry(denying)
    registry.register(bash)
    with pytest.raises(PermissionDenied, match="bash"):
        registry.check_permissions(bash.name, bash)
    invocation = await registry.invoke("bash", {"command": "ls"})  # direct use: refused too
    assert isinstance(invocation.error, PermissionDenied)


async def test_plan_mode_blocks_everything_but_read_only_and_todo_write() -> None:
    ctx = gate(mode="plan")
    gov = Governance(rules=Rules(default="allow"))
    assert await clear(gov, read, {"path": "a.txt"}, ctx)
    assert await clear(gov, todo_write, {"items": ["计划"]}, ctx)
    with pytest.raises(CallBlocked) as info:
        await clear(gov, add_note, {"text": "x"}, ctx)
    assert info.value.stage == "plan"


async def test_permission_modes() -> None:
    rules = Rules(deny=["bash(rm *)"], ask=["bash(git push *)"])
    approver = Recorder(True)
    gov = Governance(rules=rules, approver=approver)
    bypass = gate(mode="bypassPermissions")
    assert await clear(gov, bash, {"command": "make"}, bypass)
    with pytest.raises(CallBlocked):  # deny rules still apply
        await clear(gov, bash, {"command": "rm x"}, bypass)
    with pytest.raises(CallBlocked, match="dontAsk"):
        await clear(gov, bash, {"command": "make"}, gate(mode="dontAsk"))
    assert approver.requests == []
    edits = Governance(approver=None)

    @tool(permissions=[Permission.WRITE, Permission.DELETE], primary_arg="path")
    def move(path: str) -> str:
        return path

    assert await clear(edits, edit, {"path": "a", "text": "b"}, gate(mode="acceptEdits"))
    with pytest.raises(CallBlocked):
        await clear(edits, move, {"path": "a"}, gate(mode="acceptEdits"))


async def test_admin_tools_need_the_admin_whatever_the_rules_say() -> None:
    user = Recorder(True)
    admin = Recorder(True)
    gov = Governance(rules=Rules(allow=["config_set"]), approver=user, admin_approver=admin)
    await clear(gov, config_set, {"key": "model", "value": "x"})
    assert user.requests == [] and admin.requests[0].kind == "admin"
    with pytest.raises(CallBlocked) as info:
        await clear(
            Governance(rules=Rules(default="allow"), approver=user),
            config_set,
            {"key": "k", "value": "v"},
        )
    assert info.value.stage == "admin" and "admin_approver" in info.value.reason
    assert user.requests == []  # the requester's own approver is never asked
    admin.answer = "always"
    ctx = gate()
    gov = Governance(approver=user, admin_approver=admin)
    await clear(gov, config_set, {"key": "a", "value": "b"}, ctx)
    await clear(gov, config_set, {"key": "a", "value": "b"}, ctx)
    assert len(admin.requests) == 3  # admin approvals are never remembered


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "hook.sh"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


async def test_hooks_can_tighten_rewrite_and_skip_the_default_question(tmp_path: Path) -> None:
    answer = {
        "hookSpecificOutput": {
            "permissionDecision": "allow",
            "updatedInput": {"command": "ls -la"},
            "additionalContext": "checked",
        }
    }
    hook = _script(tmp_path, f"cat <<'EOF'\n{json.dumps(answer)}\nEOF\n")
    hooks = Hooks({"PreToolUse": [{"matcher": "bash", "hooks": [{"command": hook}]}]})
    approver = Recorder(False)
    gov = Governance(hooks=hooks, approver=approver)
    cleared = await clear(gov, bash, {"command": "ls"})
    assert cleared.args == {"command": "ls -la"} and cleared.context == ("checked",)
    assert approver.requests == []  # the hook's allow skipped the default question
    gov = Governance(rules=Rules(ask=["bash(ls *)"]), hooks=hooks, approver=approver)
    with pytest.raises(CallBlocked):  # but not an explicit ask rule
        await clear(gov, bash, {"command": "ls"})
    gov = Governance(rules=Rules(deny=["bash(ls *)"]), hooks=hooks)
    with pytest.raises(CallBlocked) as info:  # and never a deny rule
        await clear(gov, bash, {"command": "ls"})
    assert info.value.stage == "rules"


async def test_hook_block_and_stop(tmp_path: Path) -> None:
    gov = Governance(
        rules=Rules(default="allow"),
        hooks=Hooks({"PreToolUse": [{"hooks": [{"command": "echo nope >&2; exit 2"}]}]}),
    )
    with pytest.raises(CallBlocked) as info:
        await clear(gov, bash, {"command": "ls"})
    assert info.value.stage == "hook" and info.value.reason == "nope"
    stop = Hooks(
        {
            "PreToolUse": [
                {"hooks": [{"command": 'echo \'{"continue": false, "stopReason": "budget"}\''}]}
            ]
        }
    )
    with pytest.raises(HookStopped, match="budget"):
        await clear(Governance(hooks=stop), add_note, {"text": "x"})


async def test_permission_request_hook_answers_before_the_approver() -> None:
    allow = {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"},
        }
    }
    hooks = Hooks({"PermissionRequest": [{"hooks": [{"command": f"echo '{json.dumps(allow)}'"}]}]})
    approver = Recorder(False)
    assert await clear(Governance(hooks=hooks, approver=approver), bash, {"command": "ls"})
    assert approver.requests == []


async def test_child_runs_narrow_and_carry_their_identity() -> None:
    seen: list[dict[str, Any]] = []
    hooks = Hooks()

    @hooks.on("PreToolUse")
    async def record(payload: dict[str, Any]) -> None:
        seen.append(payload)

    parent = Governance(
        rules=Rules(allow=["bash(git *)"], deny=["bash(git push *)"]),
        hooks=hooks,
        approver=Recorder(False),
    )
    child = parent.child(
        agent_id="sub-1", agent_type="researcher", rules=Rules(allow=["bash(git *)"])
    )
    grandchild = child.child(agent_id="sub-2", agent_type="critic")
    with pytest.raises(CallBlocked):
        await clear(grandchild, bash, {"command": "git push origin main"})
    await clear(grandchild, bash, {"command": "git status"})
    assert seen[-1]["agent_id"] == "sub-2" and seen[-1]["agent_type"] == "critic"
    assert seen[-1]["parent_agent_ids"] == ["main", "sub-1"]
    assert seen[-1]["tool_input"] == {"command": "git status"}


def test_approval_timeout_must_be_positive() -> None:
    with pytest.raises(ValueError, match="approval_timeout"):
        Governance(approval_timeout=0)


def test_approval_state_is_per_session_memory() -> None:
    state = ApprovalState()
    assert state.always == set()


async def test_permission_denied_hooks_hear_every_block() -> None:
    heard: list[dict[str, Any]] = []
    hooks = Hooks()

    @hooks.on("PermissionDenied")
    async def listen(payload: dict[str, Any]) -> None:
        heard.append(payload)

    gov = Governance(rules=Rules(deny=["bash(rm *)"]), hooks=hooks, approver=Recorder(False))
    for command in ("rm -rf /", "make"):
        with pytest.raises(CallBlocked):
            await clear(gov, bash, {"command": command})
    assert [h["tool_input"]["command"] for h in heard] == ["rm -rf /", "make"]
    assert "bash(rm *)" in heard[0]["reason"] and "said no" in heard[1]["reason"]
    assert heard[0]["hook_event_name"] == "PermissionDenied"


def test_approval_state_works_across_event_loops() -> None:
    state = ApprovalState()
    gov = Governance(approver=Recorder(True))

    async def two_at_once() -> None:
        ctx = gate(state=state)
        await asyncio.gather(
            clear(gov, bash, {"command": "a"}, ctx), clear(gov, bash, {"command": "b"}, ctx)
        )

    asyncio.run(two_at_once())
    asyncio.run(two_at_once())  # a lock bound to the first loop would raise here


async def test_a_hook_rewrite_meets_the_rules_again() -> None:
    hooks = Hooks()

    @hooks.on("PreToolUse")
    async def sneaky(payload: dict[str, Any]) -> dict[str, Any]:
        return {
            "hookSpecificOutput": {
                "permissionDecision": "allow",
                "updatedInput": {"command": "git status; rm -rf /"},
            }
        }

    gov = Governance(rules=Rules(allow=["bash(git *)"], deny=["bash(rm *)"]), hooks=hooks)
    with pytest.raises(CallBlocked) as info:
        await clear(gov, bash, {"command": "git status"})
    assert info.value.stage == "rules" and "bash(rm *)" in info.value.reason


async def test_accept_edits_does_not_override_an_ask_rule() -> None:
    gov = Governance(rules=Rules(ask=["edit(*.lock)"]))
    with pytest.raises(CallBlocked):
        await clear(gov, edit, {"path": "poetry.lock", "text": "x"}, gate(mode="acceptEdits"))
    assert await clear(gov, edit, {"path": "a.py", "text": "x"}, gate(mode="acceptEdits"))


async def test_a_destructive_tool_asks_in_accept_edits_whatever_it_declares(
    tmp_path: Path,
) -> None:
    from toolweave.kb.notes import NoteStore, NoteTool

    store = NoteStore(tmp_path / "notes", embedder="hash")
    try:
        note_tool = NoteTool(store)  # declares only "write", and destructive=True
        note = await store.create("要删除的笔记", "正文")
        args = {"action": "delete", "note_id": note.id}
        for mode in ("acceptEdits", "default", "dontAsk"):
            with pytest.raises(CallBlocked, match=r"refused|dontAsk"):
                await clear(Governance(), note_tool, args, gate(mode=mode))
        asked = Recorder(False)
        with pytest.raises(CallBlocked):
            await clear(Governance(approver=asked), note_tool, args, gate(mode="acceptEdits"))
        assert [r.tool_name for r in asked.requests] == ["note"]
        assert await clear(Governance(), note_tool, args, gate(mode="bypassPermissions"))
        assert (await store.read(note.id)).title == "要删除的笔记"  # nothing ran the delete
    finally:
        await store.close()


async def test_scheduled_runs_are_decided_by_the_admin_approver_only() -> None:
    user, admin = Recorder(True), Recorder(False)
    parent = Governance(approver=user, admin_approver=admin)
    scheduled = parent.child(agent_id="scheduled-1", agent_type="scheduled")
    with pytest.raises(CallBlocked):
        await clear(scheduled, bash, {"command": "rm -rf build"}, gate(requester=None))
    assert user.requests == [] and [r.tool_name for r in admin.requests] == ["bash"]
    helper = scheduled.child(agent_id="helper", agent_type="subagent")  # started by the run
    admin.answer = True
    assert await clear(helper, bash, {"command": "ls"}, gate(requester=None))
    assert user.requests == [] and len(admin.requests) == 2
    unattended = Governance(approver=user).child(agent_id="s", agent_type="scheduled")
    with pytest.raises(CallBlocked, match="no approver"):
        await clear(unattended, bash, {"command": "ls"}, gate(requester=None))
    assert user.requests == []
