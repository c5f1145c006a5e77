"""One suite for every session store: SQLite (through SQLiteDatabase) and Postgres (psycopg 3
async, on the shared throwaway cluster) keep the same promises: exact round trips of every part
in Chinese and English, whole turns under concurrent writers, rewrite and clear, and a session
an agent resumes from another store object."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from toolweave.agent import Agent, PostgresSessionStore, Session, SessionStore, SQLiteSessionStore
from toolweave.errors import ConfigError
from toolweave.llm import ImagePart, Message, ScriptedModel, ThinkingPart, ToolCallPart
from toolweave.tools.demo import get_weather

OpenStore = Callable[[], Awaitable[SessionStore]]


@pytest.fixture(params=["sqlite", "postgres"])
async def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[OpenStore]:
    """Opens store objects on one shared database, as separate processes would."""
    opened: list[SQLiteSessionStore | PostgresSessionStore] = []
    prefix = f"t{uuid.uuid4().hex[:12]}_"
    dsn = request.getfixturevalue("postgres_dsn") if request.param == "postgres" else ""

    async def open_one() -> SessionStore:
        store: SQLiteSessionStore | PostgresSessionStore
        if request.param == "sqlite":
            store = SQLiteSessionStore(tmp_path / "sessions.db")
        else:
            store = PostgresSessionStore(dsn, table_prefix=prefix, pool_size=4)
            await store.open()
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        await store.close()


def turn(i: int) -> list[Message]:
    call = ToolCallPart(f"c{i}", "get_weather", {"city": "北京" if i % 2 else "Paris"})
    return [
        Message.assistant("", [call]),
        Message.tool_result(f"c{i}", "get_weather", f"第{i}天: 晴 / day {i}: sunny"),
    ]


async def test_every_part_round_trips(open_store: OpenStore) -> None:
    store = await open_store()
    messages = [
        Message.user("看看这张图 look", [ImagePart(data="aGk=", mime_type="image/png")]),
        Message(
            "assistant",
            [
                ThinkingPart("嗯… hmm", signature="sig"),
                ToolCallPart("1", "f", {"a": [1, {"b": None}], "城市": "杭州"}, {"k": "x"}),
            ],
        ),
        Message.tool_result("1", "f", "结果 result", is_error=True),
    ]
    await store.append("s", messages)
    assert await store.load("s") == messages
    assert await store.load("unknown") == []


async def test_concurrent_writers_keep_every_turn_whole(open_store: OpenStore) -> None:
    first, second = await open_store(), await open_store()
    writes = [first.append("shared", turn(i)) for i in range(12)]
    writes += [second.append("shared", turn(100 + i)) for i in range(12)]
    await asyncio.gather(*writes)
    stored = await first.load("shared")
    assert len(stored) == 48
    for call, result in zip(stored[::2], stored[1::2], strict=True):  # no turn was split
        assert result.tool_results[0].call_id == call.tool_calls[0].id


async def test_rewrite_clear_and_session_ids(open_store: OpenStore) -> None:
    store = await open_store()
    await store.append("old", turn(1))
    await store.append("new", turn(2))
    assert await store.session_ids() == ["new", "old"]  # most recently updated first
    await store.rewrite("old", [Message.user("压缩后 compacted")])
    assert [m.text for m in await store.load("old")] == ["压缩后 compacted"]
    await store.append("old", turn(3))
    assert len(await store.load("old")) == 3
    await store.clear("old")
    assert await store.load("old") == [] and len(await store.load("new")) == 2


async def test_an_agent_resumes_a_session_from_another_store_object(
    open_store: OpenStore,
) -> None:
    model = ScriptedModel(
        [
            Message.assistant("", [ToolCallPart("c1", "get_weather", {"city": "Beijing"})]),
            Message.assistant("Sunny, 12°C."),
            Message.assistant("53.6°F"),
        ]
    )
    agent = Agent(model, [get_weather])
    await agent.run("北京天气如何?", Session("trip", store=await open_store()))
    resumed = Session("trip", store=await open_store())
    await agent.run("And in Fahrenheit?", resumed)
    assert [m.role for m in model.requests[-1].messages][:4] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert len(await (await open_store()).load("trip")) == 6


def test_a_bad_table_prefix_names_the_field() -> None:
    with pytest.raises(ConfigError, match="table_prefix='drop table;'"):
        PostgresSessionStore("postgresql://localhost/x", table_prefix="drop table;")
