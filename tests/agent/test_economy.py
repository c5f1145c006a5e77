"""Context economy: a long result is saved and paged instead of losing its middle, the scratch
space is a jail, and opt-in model summaries shrink old turns with their cost in the usage."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.agent.script import call, calls, tool_messages
from toolweave.agent import Agent, ContextEconomy, Session
from toolweave.agent._run.economy import SUMMARY_PREFIX
from toolweave.agent.stores import SQLiteSessionStore
from toolweave.errors import ConfigError
from toolweave.llm import Message, ModelRequest, ModelResponse, ScriptedModel, ToolCallPart, Usage
from toolweave.tools import InvalidArguments, ToolContext, tool

DOC = Path(__file__).resolve().parents[2] / "docs" / "governance.md"
_HANDLE = re.compile(r'saved whole as "(r-[0-9a-f]{12})"')


def saved_files(root: Path, pattern: str = "r-*.txt") -> list[Path]:
    return list(root.rglob(pattern))


def handle_in(text: str) -> str:
    found = _HANDLE.search(text)
    assert found is not None, text[-600:]
    return found.group(1)


@tool
def read_doc() -> str:
    """Returns a long real document."""
    return DOC.read_text("utf-8")


async def test_a_long_result_keeps_head_and_tail_and_the_model_pages_to_its_middle(
    tmp_path: Path,
) -> None:
    text = DOC.read_text("utf-8")
    lines = text[len(text) // 2 :].splitlines()[1:]
    phrase = next(line.strip()[:30] for line in lines if len(line.strip()) >= 20)  # verbatim
    seen: dict[str, Any] = {}

    def search_middle(request: ModelRequest) -> Message:
        (cut,) = tool_messages(request.messages)
        seen["cut"] = cut.text
        return calls(call("read_result", "2", handle=handle_in(cut.text), pattern=phrase))

    def read_there(request: ModelRequest) -> Message:
        found = tool_messages(request.messages)[-1].text
        seen["found"] = found
        offset = int(re.search(r"offset (\d+):", found).group(1))  # type: ignore[union-attr]
        handle = handle_in(seen["cut"])
        return calls(call("read_result", "3", handle=handle, offset=offset, limit=200))

    model = ScriptedModel(
        [calls(call("read_doc", "1")), search_middle, read_there, Message.assistant("done")]
    )
    agent = Agent(
        model, [read_doc], max_tool_result_chars=2000, context=ContextEconomy(scratch_dir=tmp_path)
    )
    result = await agent.run("what does the middle say?")
    cut = seen["cut"]
    assert len(cut) < 2600 and phrase not in cut  # one budget, the middle not in the context
    assert text[:500] in cut and text[-100:] in cut  # its head and its tail
    assert "not shown here" in cut and cut.rstrip().endswith("to find text in it.]")
    assert "occurs" in seen["found"]
    page = result.invocations[-1].result.content[0].text  # type: ignore[union-attr]
    assert phrase in page and page.startswith(f"[{handle_in(cut)}: characters ")
    saved = saved_files(tmp_path)
    assert len(saved) == 1 and saved[0].read_text("utf-8") == text  # nothing lost
    assert stat.S_IMODE(saved[0].stat().st_mode) == 0o600
    assert stat.S_IMODE(saved[0].parent.stat().st_mode) == 0o700


_CHINESE_FILLER = "北京今天多云，气温十二度，空气质量良好。" * 300
_TURKISH_FILLER = "İstanbul şehir raporu. " * 200  # "İ".lower() is two characters


@pytest.mark.parametrize(
    ("before", "secret", "pattern", "found_at"),
    [
        (_CHINESE_FILLER, "仓库的门禁密码是七四二一", "门禁密码", 3),
        (_TURKISH_FILLER, "The Vault Code is 7421. ", "vault code", 4),
    ],
    ids=["chinese", "lowercasing-changes-lengths"],
)
async def test_results_are_cut_and_searched_by_the_texts_own_characters(
    before: str, secret: str, pattern: str, found_at: int
) -> None:
    @tool
    def report() -> str:
        """Returns a long report."""
        return before + secret + before

    def find(request: ModelRequest) -> Message:
        (cut,) = tool_messages(request.messages)
        return calls(call("read_result", "2", handle=handle_in(cut.text), pattern=pattern))

    model = ScriptedModel([calls(call("report", "1")), find, Message.assistant("7421")])
    result = await Agent(model, [report], max_tool_result_chars=1500).run("密码是什么？")
    found = result.invocations[-1].result.content[0].text  # type: ignore[union-attr]
    assert "occurs 1 time(s)" in found and secret.strip() in found
    assert f"offset {len(before) + found_at}:" in found, found[:300]


async def test_handles_are_jailed_to_their_session_and_never_paths(tmp_path: Path) -> None:
    agent = Agent(
        ScriptedModel([calls(call("read_doc", "1")), Message.assistant("ok")] * 2),
        [read_doc],
        max_tool_result_chars=1000,
        context=ContextEconomy(scratch_dir=tmp_path),
    )
    first = await agent.run("read", Session("alice"))
    handle = handle_in(tool_messages(first.messages)[0].text)
    reader = agent.registry.get("read_result")
    assert reader is not None
    other = await reader.execute({"handle": handle}, ToolContext(session_id="bob"))
    assert "is not saved in this session" in other.content[0].text  # type: ignore[union-attr]
    own = await reader.execute({"handle": handle, "limit": 50}, ToolContext(session_id="alice"))
    assert own.content[0].text.startswith(f"[{handle}: characters 0-50 of ")  # type: ignore[union-attr]
    for bad in ("../../etc/passwd", "r-123", f"{handle}/../x", "/etc/passwd"):
        with pytest.raises(InvalidArguments, match="not a saved-result handle"):
            await reader.execute({"handle": bad}, ToolContext(session_id="alice"))
    # A link planted where a saved result would be is never followed.
    (saved,) = saved_files(tmp_path, f"{handle}.txt")
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret", "utf-8")
    saved.unlink()
    os.symlink(secret, saved)
    linked = await reader.execute({"handle": handle}, ToolContext(session_id="alice"))
    assert "host secret" not in linked.content[0].text  # type: ignore[union-attr]


async def test_a_session_keeps_at_most_its_bound_and_drops_the_oldest(tmp_path: Path) -> None:
    @tool
    def dump(n: int) -> str:
        """Returns n thousand characters."""
        return f"dump {n} " + "z" * (n * 1000)

    steps = [calls(call("dump", str(i), n=3)) for i in range(4)]
    model = ScriptedModel([*steps, Message.assistant("ok")])
    economy = ContextEconomy(scratch_dir=tmp_path, max_saved_bytes=7000)
    result = await Agent(model, [dump], max_tool_result_chars=1000, context=economy).run("go")
    assert len(saved_files(tmp_path)) == 2  # 3 kB each, 7 kB kept
    handles = [handle_in(p.text) for p in tool_messages(result.messages)]
    assert len(set(handles)) == 4


async def test_all_sessions_together_keep_at_most_the_total_bound(tmp_path: Path) -> None:
    @tool
    def dump() -> str:
        """Returns three thousand characters."""
        return "y" * 3000

    economy = ContextEconomy(
        scratch_dir=tmp_path, max_saved_bytes=7000, max_total_saved_bytes=10_000
    )
    model = ScriptedModel([calls(call("dump", "1")), Message.assistant("ok")] * 5)
    agent = Agent(model, [dump], max_tool_result_chars=1000, context=economy)
    first = await agent.run("go", Session("s0"))
    for index in range(1, 5):  # one saved result per session: each within its own bound
        await agent.run("go", Session(f"s{index}"))
    saved = saved_files(tmp_path)
    assert len(saved) == 3 and sum(p.stat().st_size for p in saved) <= 10_000
    reader = agent.registry.get("read_result")
    assert reader is not None
    oldest = handle_in(tool_messages(first.messages)[0].text)
    gone = await reader.execute({"handle": oldest}, ToolContext(session_id="s0"))
    assert "is not saved in this session" in gone.content[0].text  # type: ignore[union-attr]


async def test_saved_results_off_cuts_as_before_and_adds_no_tool() -> None:
    model = ScriptedModel([calls(call("read_doc", "1")), Message.assistant("ok")])
    await Agent(model, [read_doc], max_tool_result_chars=1000, context=False).run("read")
    assert [d.name for d in model.requests[0].tools] == ["read_doc"]
    (cut,) = tool_messages(model.requests[1].messages)
    assert "truncated" in cut.text and "read_result" not in cut.text


def test_settings_are_checked_with_their_names() -> None:
    with pytest.raises(ConfigError, match="max_saved_bytes"):
        ContextEconomy(max_saved_bytes=0)
    with pytest.raises(ConfigError, match="summarize=True"):
        ContextEconomy(summary_model="openai:gpt-4o-mini")

    @tool
    def read_result() -> str:
        """Mine."""
        return ""

    with pytest.raises(ConfigError, match="save_results=False"):
        Agent(ScriptedModel([]), [read_result])


def fetch_turns(n: int) -> list[Any]:
    return [Message.assistant("", [ToolCallPart(str(i), "fetch", {"page": i})]) for i in range(n)]


@tool
def fetch(page: int) -> str:
    """Returns a big page."""
    return f"page {page}: " + "the quick brown fox " * 300


async def test_old_turns_are_summarised_by_the_model_and_the_cost_is_counted(
    tmp_path: Path,
) -> None:
    summaries: list[ModelRequest] = []

    def summarise(request: ModelRequest) -> ModelResponse:
        summaries.append(request)
        return ModelResponse(
            Message.assistant("The user asked to read every page; pages 0-3 held fox text."),
            usage=Usage(900, 30),
        )

    summarizer = ScriptedModel([summarise] * 4)
    model = ScriptedModel([*fetch_turns(6), Message.assistant("all read")], usage=Usage(10, 5))
    economy = ContextEconomy(summarize=True, summary_model=summarizer, save_results=False)
    async with SQLiteSessionStore(tmp_path / "s.db") as store:
        session = Session("s", store=store, max_history_tokens=4000, keep_recent_results=1)
        result = await Agent(model, [fetch], context=economy).run("read every page", session)
        stored = await store.load("s")
    assert summaries and "read every page" in summaries[0].messages[-1].text
    assert summaries[0].max_tokens == economy.summary_max_tokens and not summaries[0].tools
    assert stored == session.messages  # the store holds the summarised history
    first = session.messages[0]
    assert first.role == "user" and first.text.startswith(SUMMARY_PREFIX)
    assert session.messages[1].role == "assistant"  # the cut never splits a call from its result
    called = {c.id for m in session.messages for c in m.tool_calls}
    answered = {p.call_id for m in session.messages for p in m.tool_results}
    assert called == answered
    assert result.usage.input_tokens == 7 * 10 + 900 * len(summaries)
    assert result.new_messages[-1].text == "all read" and result.new_messages[0] == first
    assert session.dropped > 0


async def test_a_failed_summary_loses_nothing_and_stubbing_still_runs() -> None:
    summarizer = ScriptedModel([RuntimeError("summariser down")] * 8)
    model = ScriptedModel([*fetch_turns(5), Message.assistant("done")])
    session = Session(max_history_tokens=3000, keep_recent_results=1)
    economy = ContextEconomy(summarize=True, summary_model=summarizer)
    result = await Agent(model, [fetch], context=economy).run("read", session)
    assert result.output == "done" and session.dropped == 0
    texts = [p.text for p in tool_messages(session.messages)]
    assert texts[0].startswith("[compacted:") and "page 4:" in texts[-1]


async def test_a_result_with_lone_surrogates_is_saved_and_read_back_as_sent() -> None:
    text = "header \ud83d broken pair " + "x" * 5000 + " tail \udc00 end"

    @tool
    def broken() -> str:
        """Returns text as a JSON-escaped lone surrogate decodes."""
        return text

    def read_tail(request: ModelRequest) -> Message:
        (cut,) = tool_messages(request.messages)
        handle = handle_in(cut.text)
        return calls(call("read_result", "2", handle=handle, offset=len(text) - 20))

    model = ScriptedModel([calls(call("broken", "1")), read_tail, Message.assistant("ok")])
    result = await Agent(model, [broken], max_tool_result_chars=1500).run("read")
    page = result.invocations[-1].result.content[0].text  # type: ignore[union-attr]
    assert page.endswith(text[-20:]) and "\udc00" in page
