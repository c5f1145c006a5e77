"""The query log as an audit: who asked, each row's outcome, filters, approval decisions, on
SQLite and the real Postgres server, and an old query-log file upgraded in place."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support import store_args
from toolweave.accounting import QueryLog
from toolweave.errors import ConfigError
from toolweave.governance import ApprovalRequest, audited

__all__ = ["store_args"]


async def _row(log: QueryLog, tool: str, client: str, **finish: Any) -> str:
    row = await log.start(f"{tool} {{}}", client, kind="tool", client=client, tool=tool)
    await log.finish(row, finish.pop("status", "success"), tools=[tool], **finish)
    return row


async def test_rows_say_who_asked_and_how_they_ended_and_filter(
    store_args: dict[str, Any],
) -> None:
    log = QueryLog(**store_args)
    try:
        ran = await _row(log, "kb_search", "principal:alice")
        failed = await _row(log, "run_command", "principal:bob", status="error", error="exit 1")
        refused = await _row(
            log, "run_command", "address:loopback", status="error", outcome="refused:approval"
        )
        ruled = await _row(log, "删除", "principal:alice", status="error", outcome="refused:rules")
        run = await log.start("北京天气", "chat-1")  # an agent run that called kb_search
        await log.finish(run, "success", tools=["kb_search", "memory"], tokens=10)

        async def ids(**filters: Any) -> list[str]:
            return [r.id for r in await log.search(limit=50, **filters)]

        assert await ids(tool="run_command") == [refused, failed]
        assert await ids(tool="kb_search") == [run, ran]  # the run called it too
        assert await ids(tool="kb") == []  # a tool name, not a prefix
        assert await ids(tool="删除") == [ruled]
        assert await ids(client="alice") == [ruled, ran]
        assert await ids(client="principal:bob") == [failed]
        assert await ids(client="loopback") == [refused]
        assert await ids(outcome="refused") == [ruled, refused]
        assert await ids(outcome="refused:approval") == [refused]
        assert await ids(outcome="failed") == [failed]
        assert await ids(outcome="ran") == [run, ran]
        assert await ids(outcome="ran", client="alice") == [ran]
        assert len(await ids(since="1h")) == 5 and await ids(until=time.time() - 3600) == []
        assert len(await ids(since="2000-01-01")) == 5 and await ids(since=time.time() + 60) == []
        (row,) = await log.search(outcome="refused:rules")
        assert (row.client, row.tool, row.status, row.kind) == (
            "principal:alice",
            "删除",
            "error",
            "tool",
        )
        with pytest.raises(
            ConfigError, match=r"outcome='skipped'.*ran, failed, stopped, asked, refused"
        ):
            await log.search(outcome="skipped")
        with pytest.raises(ConfigError, match=r"since='yesterday'.*'2h'"):
            await log.search(since="yesterday")
        assert [r.id for r in log.search_sync(limit=1, client="bob")] == [failed]
    finally:
        await log.close()


async def test_an_audited_approver_records_each_decision(store_args: dict[str, Any]) -> None:
    log = QueryLog(**store_args)
    answers: list[Any] = [True, "always", False]

    async def person(request: ApprovalRequest) -> Any:
        return answers.pop(0)

    def broken(request: ApprovalRequest) -> bool:
        raise RuntimeError("the chat window was closed")

    try:
        ask = audited(person, log, lambda r: f"chat:{r.requester}")
        for command in ("make 构建", "make test", "rm -rf build"):
            request = ApprovalRequest(
                "run_command", {"command": command}, "shell asks", "s-1", "alice", call_id="c"
            )
            await ask(request)  # type: ignore[misc]
        admin = audited(broken, log, "admin")
        with pytest.raises(RuntimeError):
            await admin(ApprovalRequest("deploy", {"to": "prod"}, "admin only", None, kind="admin"))  # type: ignore[misc]
        decisions = await log.approvals(limit=10)
        assert [d.decision for d in decisions] == ["no answer", "denied", "always", "approved"]
        failed, *_, approved = decisions
        assert (failed.tool, failed.kind, failed.decided_by) == ("deploy", "admin", "admin")
        assert "the chat window was closed" in failed.reason and not failed.approved
        assert approved.args == '{"command": "make 构建"}' and approved.approved
        assert (approved.requester, approved.session_id, approved.call_id) == ("alice", "s-1", "c")
        assert approved.decided_by == "chat:alice" and approved.asked <= approved.decided
        assert [d.decision for d in await log.approvals(approved=False)] == ["no answer", "denied"]
        assert [d.tool for d in await log.approvals(decided_by="admin")] == ["deploy"]
        assert len(await log.approvals(requester="alice", tool="run_command", since="1h")) == 3
        assert len(log.approvals_sync(limit=2)) == 2
    finally:
        await log.close()


def test_a_query_log_from_before_the_audit_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "query_log.db"
    with sqlite3.connect(path) as db:  # the table as the previous release wrote it
        db.execute(
            "CREATE TABLE toolweave_query_log (id TEXT PRIMARY KEY, started DOUBLE PRECISION "
            "NOT NULL, input TEXT NOT NULL, session_id TEXT NOT NULL, tool_calls INTEGER NOT "
            "NULL, tools TEXT NOT NULL, tokens BIGINT NOT NULL, duration DOUBLE PRECISION NOT "
            "NULL, status TEXT NOT NULL, error TEXT NOT NULL, kind TEXT NOT NULL)"
        )
        db.execute(
            "INSERT INTO toolweave_query_log VALUES ('old', 1.0, 'hi', 's', 0, '[]', 0, 0.5, "
            "'success', '', 'run')"
        )
    db.close()
    log = QueryLog(path)
    try:
        (old,) = log.recent_sync(5)
        assert (old.id, old.client, old.outcome) == ("old", "", "")
    finally:
        log.close_sync()


async def test_an_agent_run_is_logged_with_who_asked(tmp_path: Path) -> None:
    from toolweave.agent import Agent, Session
    from toolweave.agent.orchestration import RunLimits
    from toolweave.llm import Message, ScriptedModel

    log = QueryLog(tmp_path / "q.db")
    agent = Agent(ScriptedModel([Message.assistant("晴")]), orchestration=RunLimits(query_log=log))
    try:
        await agent.run("北京天气", Session("chat-1", requester="alice"))
        (row,) = await log.search(client="alice", outcome="ran")
        assert (row.kind, row.session_id, row.input) == ("run", "chat-1", "北京天气")
    finally:
        await log.close()


async def test_an_agent_runs_tool_calls_are_rows_linked_to_the_run(
    store_args: dict[str, Any],
) -> None:
    from toolweave.agent import Agent, Session
    from toolweave.agent.orchestration import RunLimits
    from toolweave.governance import Governance, Rules
    from toolweave.llm import Message, ScriptedModel, ToolCallPart
    from toolweave.tools import tool

    @tool
    def weather(city: str) -> str:
        """Look the weather up."""
        return f"{city}: 晴"

    @tool
    def broken(city: str) -> str:
        """Always fails."""
        raise RuntimeError(f"no station in {city}")

    @tool
    def delete_all(city: str) -> str:
        """Deletes everything."""
        return "deleted"

    calls = [
        ToolCallPart("1", "weather", {"city": "北京"}),
        ToolCallPart("2", "broken", {"city": "上海"}),
        ToolCallPart("3", "delete_all", {"city": "广州"}),
    ]
    model = ScriptedModel([Message.assistant("", calls), Message.assistant("done")])
    log = QueryLog(**store_args)
    agent = Agent(
        model,
        [weather, broken, delete_all],
        governance=Governance(rules=Rules(default="allow", deny=["delete_all"])),
        orchestration=RunLimits(query_log=log),
    )
    try:
        await agent.run("三个城市", Session("chat-2", requester="alice"))
        (run,) = await log.search(kind="run")
        rows = {row.tool: row for row in await log.search(parent=run.id)}
        assert {name: row.outcome for name, row in rows.items()} == {
            "weather": "ran",
            "broken": "failed",
            "delete_all": "refused:rules",
        }
        for row in rows.values():
            assert (row.kind, row.client, row.session_id) == ("call", "alice", "chat-2")
        assert "no station in 上海" in rows["broken"].error
        assert rows["weather"].input == 'weather {"city": "北京"}'
        (refused,) = await log.search(tool="delete_all", outcome="refused")
        assert refused.id == rows["delete_all"].id
        assert (await log.search(outcome="ran", kind="run"))[0].id == run.id
    finally:
        await log.close()
    if "path" in store_args:  # `toolweave log` reads an agent's file the same way
        from typer.testing import CliRunner

        from toolweave.cli import app

        argv = ["log", "--path", str(store_args["path"]), "--json"]
        out = CliRunner().invoke(app, [*argv, "--tool", "delete_all", "--outcome", "refused"])
        assert out.exit_code == 0, out.output
        (line,) = out.output.splitlines()
        assert '"parent": "' + run.id in line and '"outcome": "refused:rules"' in line


async def test_a_call_a_hook_stops_is_a_refused_row_of_the_run(tmp_path: Path) -> None:
    from toolweave.agent import Agent, Session
    from toolweave.agent.orchestration import RunLimits
    from toolweave.governance import Governance, Hooks, HookStopped
    from toolweave.llm import Message, ScriptedModel, ToolCallPart
    from toolweave.tools import tool

    @tool
    def weather(city: str) -> str:
        """Look the weather up."""
        return f"{city}: 晴"

    stop = '{"continue": false, "stopReason": "预算用完"}'
    hooks = Hooks({"PreToolUse": [{"hooks": [{"command": f"echo '{stop}'"}]}]})
    call = ToolCallPart("1", "weather", {"city": "北京"})
    log = QueryLog(tmp_path / "q.db")
    agent = Agent(
        ScriptedModel([Message.assistant("", [call])]),
        [weather],
        governance=Governance(hooks=hooks),
        orchestration=RunLimits(query_log=log),
    )
    try:
        with pytest.raises(HookStopped, match="预算用完"):
            await agent.run("北京天气", Session("chat-3"))
        (run,) = await log.search(kind="run")
        (row,) = await log.search(tool="weather", outcome="refused:hook")
        assert (row.parent, row.kind, run.status) == (run.id, "call", "error")
    finally:
        await log.close()


async def test_a_call_the_declared_permission_policy_refuses_is_a_row_of_the_run(
    store_args: dict[str, Any],
) -> None:
    from toolweave.agent import Agent, Session
    from toolweave.agent.orchestration import RunLimits
    from toolweave.governance import Governance
    from toolweave.llm import Message, ScriptedModel, ToolCallPart
    from toolweave.tools import PermissionDenied, PermissionPolicy, tool

    ran: list[str] = []

    @tool(permissions=["shell"])
    def shell(command: str) -> str:
        """Runs a command."""
        ran.append(command)
        return "ok"

    call = ToolCallPart("1", "shell", {"command": "rm -rf 数据"})
    log = QueryLog(**store_args)
    agent = Agent(
        ScriptedModel([Message.assistant("", [call])]),
        [shell],
        governance=Governance(policy=PermissionPolicy(denied=["shell"])),
        orchestration=RunLimits(query_log=log),
    )
    try:
        with pytest.raises(PermissionDenied, match="'shell'"):
            await agent.run("清理", Session("chat-4", requester="bob"))
        assert ran == []  # the run ended before anything ran
        (run,) = await log.search(kind="run")
        (row,) = await log.search(parent=run.id)
        assert (row.kind, row.tool, row.client, row.session_id) == (
            "call",
            "shell",
            "bob",
            "chat-4",
        )
        assert row.outcome == "refused:policy" and "denied by the policy" in row.error
        assert row.input == 'shell {"command": "rm -rf 数据"}'
        assert [r.id for r in await log.search(client="bob", outcome="refused:policy")] == [row.id]
        assert run.status == "error" and "PermissionDenied" in run.error
    finally:
        await log.close()


async def test_a_call_a_gate_refuses_for_good_is_a_refused_row_of_the_run(tmp_path: Path) -> None:
    from toolweave.agent import Agent, Session
    from toolweave.agent.orchestration import RunLimits
    from toolweave.governance import GateRequest, Governance
    from toolweave.llm import Message, ScriptedModel, ToolCallPart
    from toolweave.tools import PermissionDenied, tool

    @tool
    def transfer(amount: int) -> str:
        """Moves money."""
        return "moved"

    class Closed:
        async def check(self, request: GateRequest) -> None:
            raise PermissionDenied("转账已关闭 (transfers are closed)", tool=request.call.name)

    log = QueryLog(tmp_path / "q.db")
    agent = Agent(
        ScriptedModel([Message.assistant("", [ToolCallPart("1", "transfer", {"amount": 5})])]),
        [transfer],
        governance=Governance(gates=[Closed()]),
        orchestration=RunLimits(query_log=log),
    )
    try:
        with pytest.raises(PermissionDenied, match="转账已关闭"):
            await agent.run("转五块", Session("chat-5", requester="carol"))
        (run,) = await log.search(kind="run")
        (row,) = await log.search(parent=run.id)
        assert (row.tool, row.client, row.outcome) == ("transfer", "carol", "refused:gate")
        assert "转账已关闭" in row.error
    finally:
        await log.close()


async def test_a_slash_commands_lines_are_rows_of_its_run(tmp_path: Path) -> None:
    from toolweave.agent import Agent, Session
    from toolweave.agent.orchestration import Commands, Orchestration, RunLimits
    from toolweave.builtins.filesystem import filesystem_tools
    from toolweave.builtins.shell import shell_tool
    from toolweave.governance import GateRequest, Governance
    from toolweave.llm import Message, ScriptedModel
    from toolweave.tools import PermissionDenied

    class NoTouch:
        async def check(self, request: GateRequest) -> None:
            if "touch" in str(request.call.arguments.get("command", "")):
                raise PermissionDenied("不许创建文件 (no new files)", tool=request.call.name)

    work, commands = tmp_path / "work", tmp_path / "commands"
    (work / "notes").mkdir(parents=True)
    commands.mkdir()
    (work / "notes" / "待办.md").write_text("- 修复登录\n", encoding="utf-8")
    (commands / "review.md").write_text(
        "---\nallowed-tools: Bash(echo:*), Read\n---\n"
        "!`echo 你好`\n!`ls notes`\n!`touch x`\n@notes/待办.md\nReview.\n",
        encoding="utf-8",
    )
    model = ScriptedModel([Message.assistant("ok")])
    log = QueryLog(tmp_path / "q.db")
    agent = Agent(
        model,
        [shell_tool(work), *filesystem_tools(work)],
        governance=Governance(gates=[NoTouch()]),
        orchestration=Orchestration(
            limits=RunLimits(query_log=log), commands=Commands.from_directory(commands)
        ),
    )
    try:
        await agent.run("/review", Session("chat-6", requester="dave"))
        (run,) = await log.search(kind="run")
        rows = await log.search(parent=run.id)
        assert sorted((row.input.split('"')[-2], row.outcome) for row in rows) == [
            ("echo 你好", "ran"),  # pre-approved by the command's allowed-tools
            ("ls notes", "refused:approval"),  # no rule, no approver
            ("notes/待办.md", "ran"),
            ("touch x", "refused:gate"),
        ]
        assert {(row.kind, row.client) for row in rows} == {("call", "dave")}
        assert not (work / "x").exists()
    finally:
        await log.close()


async def test_a_slash_command_line_the_policy_refuses_is_a_refused_row(tmp_path: Path) -> None:
    from toolweave.agent import Agent, Session
    from toolweave.agent.orchestration import Commands, Orchestration, RunLimits
    from toolweave.builtins.shell import shell_tool
    from toolweave.governance import Governance
    from toolweave.llm import Message, ScriptedModel
    from toolweave.tools import PermissionPolicy

    commands = tmp_path / "commands"
    commands.mkdir()
    (commands / "status.md").write_text(
        "---\nallowed-tools: Bash(echo:*)\n---\n!`echo 状态`\nSummarise.\n", encoding="utf-8"
    )
    model = ScriptedModel([Message.assistant("ok")])
    log = QueryLog(tmp_path / "q.db")
    agent = Agent(
        model,
        [shell_tool(tmp_path)],
        governance=Governance(policy=PermissionPolicy(denied=["shell"])),
        orchestration=Orchestration(
            limits=RunLimits(query_log=log), commands=Commands.from_directory(commands)
        ),
    )
    try:
        await agent.run("/status", Session("chat-7", requester="erin"))
        prompt = model.requests[0].messages[-1].text
        assert "[`echo 状态` was not run: tool 'bash' needs permission 'shell'" in prompt
        (run,) = await log.search(kind="run")
        (row,) = await log.search(parent=run.id)
        assert (row.tool, row.client, row.outcome) == ("bash", "erin", "refused:policy")
    finally:
        await log.close()
