"""The loop-level pieces with ScriptedModel: circuit breaker, todo reminders, quota checks
before each model call, slash commands, query-log rows, and the session tool overlay."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.agent.orchestration.test_subagents import call, results
from toolweave.accounting import QueryLog, Quota, QuotaExceeded
from toolweave.agent import Agent, Session
from toolweave.agent.orchestration import Children, Orchestration, RunLimits
from toolweave.agent.orchestration.circuit import CircuitBreaker
from toolweave.llm import FunctionModel, Message, ModelRequest, ScriptedModel, Usage
from toolweave.tools import tool


async def test_a_tool_failing_three_times_is_refused_for_the_session() -> None:
    attempts: list[int] = []

    @tool
    def flaky(n: int) -> str:
        """A broken tool.

        Args:
            n: Attempt number.
        """
        attempts.append(n)
        raise RuntimeError("backend down")

    model = ScriptedModel(
        [*(call("flaky", f"c{i}", n=i) for i in range(4)), Message.assistant("x")]
    )
    agent = Agent(model, [flaky], max_turns=6)
    session = Session("chat-1")
    await agent.run("go", session)
    assert attempts == [0, 1, 2]  # the fourth call never ran
    refused = results(model.requests[4])[-1]
    assert "is paused for this session: it failed 3 times in a row" in refused
    assert "until" in refused
    # Still offered, so the provider's prompt cache keeps hitting.
    assert "flaky" in [d.name for d in model.requests[4].tools]
    # Another session is not affected.
    other = ScriptedModel([call("flaky", "o1", n=9), Message.assistant("y")])
    await Agent(other, [flaky]).run("go", Session("chat-2"))
    assert attempts == [0, 1, 2, 9]


def test_circuit_recovers_after_the_recovery_time() -> None:
    now = [0.0]
    breaker = CircuitBreaker(failures=2, recovery=300, clock=lambda: now[0])
    breaker.record("s", "t", failed=True)
    assert breaker.refusal("s", "t") is None
    breaker.record("s", "t", failed=True)
    assert breaker.refusal("s", "t") is not None
    now[0] = 299
    assert breaker.refusal("s", "t") is not None
    now[0] = 301
    assert breaker.refusal("s", "t") is None  # half-open: one trial call
    breaker.record("s", "t", failed=True)
    assert breaker.refusal("s", "t") is not None  # the trial failed: open again
    now[0] = 700
    breaker.record("s", "t", failed=False)
    assert breaker.refusal("s", "t") is None
    with pytest.raises(ValueError, match="circuit_failures"):
        CircuitBreaker(failures=0)


@dataclass
class Item:
    content: str
    status: str


@dataclass
class Snapshot:
    items: tuple[Item, ...]

    @property
    def unfinished(self) -> tuple[Item, ...]:
        return tuple(i for i in self.items if i.status != "completed")

    def render(self) -> str:
        return "\n".join(f"[{i.status}] {i.content}" for i in self.items)


class Todos:
    """The shape of toolweave.builtins.TodoStore (get(session_id) -> snapshot)."""

    def __init__(self) -> None:
        self.lists: dict[str | None, tuple[Item, ...]] = {}

    def get(self, session_id: str | None) -> Snapshot:
        return Snapshot(self.lists.get(session_id, ()))


async def test_todo_reminder_is_injected_once_per_change() -> None:
    todos = Todos()

    @tool
    def step(done: bool) -> str:
        """Advance.

        Args:
            done: Whether to finish the list.
        """
        todos.lists["s"] = (
            Item("写测试", "completed"),
            Item("修 bug", "completed" if done else "in_progress"),
        )
        return "ok"

    todos.lists["s"] = (Item("写测试", "in_progress"), Item("修 bug", "pending"))
    model = ScriptedModel(
        [
            call("lookup_nothing", "a"),  # unknown tool: the list is unchanged
            call("step", "b", done=False),  # the list changes
            call("step", "c", done=False),  # the same list again
            call("step", "d", done=True),  # everything completed
            Message.assistant("done"),
        ]
    )
    agent = Agent(model, [step], max_turns=6, orchestration=RunLimits(todos=todos))
    session = Session("s")
    await agent.run("work", session)

    def reminder(i: int) -> str | None:
        last = model.requests[i].messages[-1]
        return last.text if "<todo_reminder>" in last.text else None

    first = reminder(0)
    assert first is not None and "[in_progress] 写测试\n[pending] 修 bug" in first
    assert reminder(1) is None  # unchanged: not injected again
    second = reminder(2)
    assert second is not None and "[completed] 写测试\n[in_progress] 修 bug" in second
    assert reminder(3) is None
    assert reminder(4) is None  # nothing unfinished
    # The reminder lives in requests only, never in the stored history.
    assert not any("<todo_reminder>" in m.text for m in session.messages)


async def test_todo_write_feeds_the_reminder_end_to_end() -> None:
    """The real built-in `todo_write` and its `TodoStore` drive the reminder."""
    from toolweave.builtins import TodoStore, todo_tool

    store = TodoStore()
    items = [
        {"content": "读需求 / read the spec", "status": "in_progress"},
        {"content": "write the code", "status": "pending"},
    ]
    model = ScriptedModel(
        [
            call("todo_write", "t", todos=items),
            Message.assistant("working"),
        ]
    )
    agent = Agent(model, [todo_tool(store)], orchestration=RunLimits(todos=store))
    session = Session("todo-session")
    await agent.run("plan it", session)
    last = model.requests[1].messages[-1].text
    assert "<todo_reminder>" in last
    assert "[in_progress] 读需求 / read the spec\n[pending] write the code" in last
    assert store.get("todo-session").unfinished


async def test_quota_refuses_before_the_model_call(tmp_path: Path) -> None:
    quota = Quota(tmp_path / "q.db", per_session_daily_tokens=100)
    model = ScriptedModel([Message.assistant("hi")] * 3, usage=Usage(60, 10))
    agent = Agent(model, [], orchestration=RunLimits(quota=quota))
    try:
        first = await agent.run("hello", Session("u1"))
        assert first.output == "hi"
        usage = await quota.usage("u1")
        assert usage.session_tokens == 70  # settled with the real usage, not the estimate
        await agent.run("again", Session("u1"))  # 70 used: this call still fits
        with pytest.raises(QuotaExceeded) as caught:
            await agent.run("one more", Session("u1"))
        assert caught.value.limit == 100 and caught.value.used == 140
        assert len(model.requests) == 2  # the refused run never reached the model
        assert (await agent.run("other user", Session("u2"))).output == "hi"
    finally:
        await quota.close()


async def test_subagent_tokens_count_against_the_parents_quota(tmp_path: Path) -> None:
    quota = Quota(tmp_path / "q.db", per_session_daily_tokens=10_000)
    child = ScriptedModel([Message.assistant("sub answer")], usage=Usage(300, 100))
    parent = ScriptedModel(
        [call("subagent_run", "p", task="t"), Message.assistant("ok")], usage=Usage(10, 10)
    )
    agent = Agent(
        parent,
        [],
        orchestration=Orchestration(
            children=Children(subagents=True, subagent_model=child), limits=RunLimits(quota=quota)
        ),
    )
    try:
        result = await agent.run("go", Session("u"))
        assert result.usage.total_tokens == 2 * 20 + 400
        assert (await quota.usage("u")).session_tokens == 440
    finally:
        await quota.close()


async def test_slash_commands_are_expanded_before_the_run() -> None:
    model = FunctionModel(lambda request: Message.assistant(request.messages[-1].text))
    agent = Agent(
        model,
        [],
        orchestration=Orchestration(
            commands={"tr": "把这句话翻译成英文：$args", "review": "Review it."}
        ),
    )
    assert (await agent.run("/tr 早上好")).output == "把这句话翻译成英文：早上好"
    assert (await agent.run("/review a.py")).output == "Review it.\n\nARGUMENTS: a.py"
    assert (await agent.run("/unknown x")).output == "/unknown x"


async def test_query_log_rows_for_each_ending(tmp_path: Path) -> None:
    log = QueryLog(tmp_path / "log.db")

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    ok = ScriptedModel(
        [call("ping", "a"), call("ping", "b"), Message.assistant("done")], usage=Usage(7, 3)
    )
    failing = ScriptedModel([RuntimeError("provider down")])
    started = asyncio.Event()

    async def slow(request: ModelRequest) -> Message:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    try:
        await Agent(ok, [ping], orchestration=RunLimits(query_log=log)).run(
            "北京天气", Session("s1")
        )
        with pytest.raises(RuntimeError):
            await Agent(failing, [], orchestration=RunLimits(query_log=log)).run(
                "will fail", Session("s2")
            )
        with pytest.raises(TimeoutError):
            await Agent(FunctionModel(slow), [], orchestration=RunLimits(query_log=log)).run(
                "slow", timeout=0.05
            )
        task = asyncio.create_task(
            Agent(FunctionModel(slow), [], orchestration=RunLimits(query_log=log)).run("stop me")
        )
        started.clear()
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        stopped, timed_out, failed, success = await log.search(kind="run", limit=4)
        assert (success.input, success.session_id, success.status) == ("北京天气", "s1", "success")
        assert (success.tool_calls, success.tools, success.tokens) == (2, ["ping", "ping"], 30)
        calls = await log.search(parent=success.id)  # each call is a row of its own
        assert [(c.tool, c.outcome, c.kind) for c in calls] == [("ping", "ran", "call")] * 2
        assert failed.status == "error" and "provider down" in failed.error
        assert timed_out.status == "timeout" and stopped.status == "stopped"
        assert stopped.input == "stop me"
    finally:
        await log.close()


async def test_session_tools_never_leak_and_shadow_shared_ones() -> None:
    @tool
    def lookup() -> str:
        """Shared."""
        return "shared"

    @tool(name="lookup")
    def session_lookup() -> str:
        """Session-bound."""
        return "mine"

    @tool
    def loaded() -> str:
        """Loaded at run time."""
        return "loaded"

    model_a = ScriptedModel([call("lookup", "a"), Message.assistant("a")])
    model_b = ScriptedModel([call("lookup", "b"), call("loaded", "c"), Message.assistant("b")])
    shared = [lookup]
    agent_a, agent_b = Agent(model_a, shared), Agent(model_b, shared)
    a, b = Session("A"), Session("B")
    overlay = a.tool_overlay(agent_a.registry)
    overlay.register(session_lookup)
    overlay.register(loaded)
    await agent_a.run("go", a)
    await agent_b.run("go", b)
    assert results(model_a.requests[1]) == ["mine"]  # the session's tool wins
    assert results(model_b.requests[1]) == ["shared"]
    assert results(model_b.requests[2])[-1].startswith("Unknown tool 'loaded'")
    assert "loaded" not in agent_a.registry


def test_chat_runs_custom_commands_and_still_rejects_unknown_ones(tmp_path: Path) -> None:
    from rich.console import Console

    from toolweave.agent.orchestration import Commands
    from toolweave.cli.agent_cmd import chat_loop

    file = tmp_path / "commands.yaml"
    file.write_text("tr: '翻译：$ARGUMENTS'\n", encoding="utf-8")
    seen: list[str] = []

    def answer(request: ModelRequest) -> Message:
        seen.append(request.messages[-1].text)
        return Message.assistant("ok")

    agent = Agent(
        FunctionModel(answer), [], orchestration=Orchestration(commands=Commands.load(file))
    )
    lines = iter(["/tr 你好", "/nope x", "/exit"])
    console = Console(record=True, width=120)
    chat_loop(agent, Session(), console, lambda: next(lines))
    assert seen == ["翻译：你好"]
    assert "unknown command /nope" in console.export_text()


async def test_a_subagents_own_tool_calls_are_rows_under_the_parent_run(tmp_path: Path) -> None:
    log = QueryLog(tmp_path / "log.db")

    @tool(read_only=True)
    def weather(city: str) -> str:
        """Look the weather up."""
        return f"{city}: 晴"

    @tool(read_only=True)
    def broken(city: str) -> str:
        """Always fails."""
        raise RuntimeError(f"no station in {city}")

    child = ScriptedModel(
        [
            call("weather", "c1", city="北京"),
            call("broken", "c2", city="上海"),
            Message.assistant("北京晴"),
        ]
    )
    parent = ScriptedModel([call("subagent_run", "p1", task="查天气"), Message.assistant("ok")])
    agent = Agent(
        parent,
        [weather, broken],
        orchestration=Orchestration(
            children=Children(subagents=True, subagent_model=child),
            limits=RunLimits(query_log=log),
        ),
    )
    try:
        await agent.run("天气如何", Session("s1", requester="alice"))
        (run,) = await log.search(kind="run")
        rows = {row.tool: row for row in await log.search(parent=run.id)}
        assert {name: row.outcome for name, row in rows.items()} == {
            "subagent_run": "ran",
            "weather": "ran",
            "broken": "failed",
        }
        assert rows["subagent_run"].session_id == "s1"
        for name in ("weather", "broken"):  # the subagent's own session, the same requester
            assert rows[name].session_id.startswith("s1/subagent-task-")
            assert (rows[name].kind, rows[name].client) == ("call", "alice")
        assert rows["weather"].input == 'weather {"city": "北京"}'
        assert "no station in 上海" in rows["broken"].error
        assert run.tools == ["subagent_run"]  # the run's own calls; the subagent's are rows
    finally:
        await log.close()
