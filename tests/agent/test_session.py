"""Sessions: persistence across processes, one transaction per turn, crashes, compaction, and
an async store that never blocks the event loop."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from toolweave.agent import Agent, Session, SessionStore, SQLiteSessionStore
from toolweave.llm import ImagePart, Message, ScriptedModel, ThinkingPart, ToolCallPart
from toolweave.storage.text import estimate_tokens
from toolweave.tools import tool
from toolweave.tools.demo import celsius_to_fahrenheit, get_weather

WRITER = textwrap.dedent(
    """
    import sys
    from toolweave.agent import Agent, SQLiteSessionStore, Session
    from toolweave.llm import Message, ScriptedModel, ToolCallPart
    from toolweave.tools.demo import get_weather

    model = ScriptedModel([
        Message.assistant("", [ToolCallPart("c1", "get_weather", {"city": "Beijing"})]),
        Message.assistant("Sunny, 12°C."),
    ])
    session = Session("trip", store=SQLiteSessionStore(sys.argv[1]))
    print(Agent(model, [get_weather]).run_sync("北京天气如何?", session).output)
    """
)

CRASHER = textwrap.dedent(
    """
    import os, sys
    from toolweave.agent import Agent, SQLiteSessionStore, Session
    from toolweave.llm import Message, ScriptedModel, ToolCallPart
    from toolweave.tools import tool
    from toolweave.tools.demo import get_weather

    @tool
    def power_cut() -> str:
        '''Kills the process mid-turn.'''
        os._exit(3)

    model = ScriptedModel([
        Message.assistant("", [ToolCallPart("c1", "get_weather", {"city": "Beijing"})]),
        Message.assistant("", [ToolCallPart("c2", "power_cut", {})]),
    ])
    session = Session("crash", store=SQLiteSessionStore(sys.argv[1]))
    Agent(model, [get_weather, power_cut]).run_sync("go", session)
    """
)


def run_python(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script, *args], capture_output=True, text=True, timeout=60
    )


async def test_a_session_written_by_another_process_is_read_back(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    proc = run_python(WRITER, str(db))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Sunny, 12°C."

    store = SQLiteSessionStore(db)
    session = Session("trip", store=store)
    assert session.messages == []  # read on first use, not in the constructor
    await session.load()
    assert [m.role for m in session.messages] == ["user", "assistant", "tool", "assistant"]
    assert session.messages[0].text == "北京天气如何?"
    assert session.messages[1].tool_calls == [
        ToolCallPart("c1", "get_weather", {"city": "Beijing"})
    ]

    model = ScriptedModel([Message.assistant("53.6°F")])
    await Agent(model, [get_weather]).run("And in Fahrenheit?", session)
    assert [m.role for m in model.requests[0].messages][:4] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert len(await Session("trip", store=SQLiteSessionStore(db)).load()) == 6
    assert await store.session_ids() == ["trip"]
    await store.close()
    journal = sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone()[0]
    assert journal == "wal"


async def test_each_turn_is_committed_before_the_next_begins(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    reader = SQLiteSessionStore(db)
    seen: list[list[str]] = []

    def answer(message: Message) -> Any:
        async def step(request: Any) -> Message:
            seen.append([m.role for m in await reader.load("t")])  # what a crash would keep
            return message

        return step

    model = ScriptedModel(
        [
            answer(Message.assistant("", [ToolCallPart("a", "get_weather", {"city": "Beijing"})])),
            answer(
                Message.assistant("", [ToolCallPart("b", "celsius_to_fahrenheit", {"celsius": 1})])
            ),
            answer(Message.assistant("done")),
        ]
    )
    session = Session("t", store=SQLiteSessionStore(db))
    await Agent(model, [get_weather, celsius_to_fahrenheit]).run("go", session)
    assert seen == [
        [],
        ["user", "assistant", "tool"],
        ["user", "assistant", "tool", "assistant", "tool"],
    ]
    assert len(await reader.load("t")) == 6
    await reader.close()


async def test_a_crash_mid_turn_loses_only_that_turn(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    proc = run_python(CRASHER, str(db))
    assert proc.returncode == 3, proc.stderr
    messages = await Session("crash", store=SQLiteSessionStore(db)).load()
    assert [m.role for m in messages] == ["user", "assistant", "tool"]
    assert messages[2].tool_results[0].call_id == "c1"


async def test_store_round_trips_every_part_and_clears(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "x" / "deep.db")
    messages = [
        Message.user("look", [ImagePart(data="aGk=", mime_type="image/png")]),
        Message(
            "assistant",
            [
                ThinkingPart("hmm", signature="sig"),
                ToolCallPart("1", "f", {"a": [1, {"b": None}]}, {"thoughtSignature": "x"}),
            ],
        ),
        Message.tool_result("1", "f", "result", is_error=True),
    ]
    await store.append("s", messages)
    assert await store.load("s") == messages
    session = Session("s", store=store)
    await session.clear()
    assert session.messages == [] and await store.load("s") == []
    await session.load()  # clear() counts as loaded: nothing comes back
    assert session.messages == []
    await store.close()


def test_token_estimate_counts_cjk_per_character() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("你好世界") == 4
    assert estimate_tokens("hello world!") == 3
    assert estimate_tokens("北京 weather") == 2 + 2
    assert estimate_tokens('{"a":1,"b":2}') == 4


def big_turns(n: int, size: int) -> list[Message]:
    messages = [Message.user("start")]
    for i in range(n):
        call = ToolCallPart(str(i), "fetch", {"page": i})
        messages.append(Message.assistant("", [call]))
        messages.append(Message.tool_result(str(i), "fetch", f"page {i} " + "x" * size))
    return messages


async def test_compaction_stubs_the_oldest_results_first_and_persists(tmp_path: Path) -> None:
    store = SQLiteSessionStore(tmp_path / "c.db")
    await store.append("c", big_turns(6, 4000))
    session = Session("c", store=store, max_history_tokens=3000, keep_recent_results=2)
    await session.load()
    assert session.tokens() > 3000
    compacted = await session.compact()
    assert compacted == 4
    texts = [m.tool_results[0].text for m in session.messages if m.role == "tool"]
    assert all(t.startswith("[compacted:") and "fetch" in t for t in texts[:4])
    assert texts[4].startswith("page 4") and texts[5].startswith("page 5")
    assert await session.compact() == 0  # stubs are not compacted again
    assert session.tokens() < 3000
    assert await Session("c", store=store).load() == session.messages
    await store.close()


async def test_compaction_happens_during_a_run() -> None:
    @tool
    def fetch(page: int) -> str:
        """Returns a big page."""
        return f"page {page} " + "y" * 6000

    script: list[Any] = [
        Message.assistant("", [ToolCallPart(str(i), "fetch", {"page": i})]) for i in range(4)
    ]
    model = ScriptedModel([*script, Message.assistant("summary")])
    session = Session(max_history_tokens=2500, keep_recent_results=1)
    await Agent(model, [fetch]).run("read everything", session)
    last = [p for m in model.requests[-1].messages for p in m.tool_results]
    assert [p.text.startswith("[compacted:") for p in last] == [True, True, True, False]
    assert "page 3" in last[-1].text


async def test_compaction_at_the_start_of_a_run_writes_each_message_once(tmp_path: Path) -> None:
    async with SQLiteSessionStore(tmp_path / "once.db") as store:
        await store.append("c", [*big_turns(4, 8000), Message.assistant("summarised")])
        session = Session("c", store=store, max_history_tokens=3000, keep_recent_results=1)
        await Agent(ScriptedModel([Message.assistant("again")])).run("next question", session)
        stored = await store.load("c")
    assert stored == session.messages
    assert [m.text for m in stored[-2:]] == ["next question", "again"]
    assert sum(m.tool_results[0].text.startswith("[compacted:") for m in stored[2::2][:4]) == 3


def test_cjk_punctuation_and_full_width_forms_count_as_cjk() -> None:
    assert estimate_tokens("你好，世界。") == 6
    assert estimate_tokens("「东京」") == 4
    assert estimate_tokens("ＡＢ") == 2


async def test_a_locked_database_does_not_block_the_event_loop(tmp_path: Path) -> None:
    """Another process holds the write lock: the append waits on the store's worker thread
    while the event loop keeps serving other tasks, then lands once the lock is released."""
    db = tmp_path / "locked.db"
    store = SQLiteSessionStore(db, busy_timeout=30.0)
    await store.load("warm")  # the schema exists before the other writer locks the file
    locker = sqlite3.connect(db, isolation_level=None)
    locker.execute("BEGIN IMMEDIATE")
    write = asyncio.ensure_future(store.append("s", [Message.user("你好")]))
    loop_ran = asyncio.Event()
    asyncio.get_running_loop().call_soon(loop_ran.set)
    await loop_ran.wait()  # the loop turned while the write waits for the lock
    assert not write.done()
    locker.execute("ROLLBACK")
    locker.close()
    await write
    assert [m.text for m in await store.load("s")] == ["你好"]
    await store.close()


async def test_the_store_meets_the_protocol() -> None:
    async with SQLiteSessionStore(":memory:") as store:
        assert isinstance(store, SessionStore)
        await store.append("内存", [Message.user("hi")])
        assert [m.text for m in await store.load("内存")] == ["hi"]
