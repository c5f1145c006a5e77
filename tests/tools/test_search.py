"""`ToolRegistry.search`: ranked tools for a task in words, over the registry's own index
(keyword, dependency-free) and the retrieval layer's hybrid index on both backends; never a tool
the caller may not use; following tools as they are added, removed and changed."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from toolweave.builtins import fetch_tool, filesystem_tools, shell_tool
from toolweave.storage.retrieval.tool_index import HybridToolIndex
from toolweave.tools import FunctionTool, Permission, PermissionPolicy, ToolRegistry
from toolweave.tools.search import KeywordToolIndex, name_words, terms, tool_text


def gmail_send_message(raw: str) -> str:
    """Sends the specified message to the recipients in the To, Cc, and Bcc headers.

    Args:
        raw: The entire email message in an RFC 2822 formatted and base64url encoded string.
    """
    return "sent"


def calendar_events_insert(calendar_id: str, summary: str) -> str:
    """Creates an event.

    Args:
        calendar_id: Calendar identifier.
        summary: Title of the event.
    """
    return "created"


def catalog(tmp_path: Path) -> ToolRegistry:
    """The built-in tools (their real descriptions) beside two Google API methods described in
    the words of Google's API reference."""
    registry = ToolRegistry()
    registry.register_all(filesystem_tools(tmp_path))
    registry.register(shell_tool(tmp_path))
    registry.register(fetch_tool())
    registry.register(FunctionTool(gmail_send_message))
    registry.register(FunctionTool(calendar_events_insert))
    return registry


@pytest.fixture(params=["keyword-index", "hybrid-sqlite", "hybrid-postgres"])
async def registry(request: pytest.FixtureRequest, tmp_path: Path):  # type: ignore[no-untyped-def]
    registry = catalog(tmp_path)
    index = None
    if request.param == "hybrid-sqlite":
        index = HybridToolIndex()
    elif request.param == "hybrid-postgres":
        from toolweave.storage.retrieval import IndexSettings, open_index

        dsn = request.getfixturevalue("postgres_dsn")
        backend = open_index(
            tmp_path / "unused.db",
            "auto",
            name=f"tools_{uuid.uuid4().hex[:8]}",
            settings=IndexSettings(dsn=dsn, qdrant_path=str(tmp_path / "qdrant")),
        )
        index = HybridToolIndex(backend)
    if index is not None:
        registry.search_index = index
    else:
        assert isinstance(registry.search_index, KeywordToolIndex)
    yield registry
    if index is not None:
        await index.close()


async def test_send_an_email_finds_gmail_send_message(registry: ToolRegistry) -> None:
    found = await registry.search("send an email", k=3)
    assert found[0].name == "gmail_send_message"
    assert [m.name for m in await registry.search("run a shell command", k=1)] == ["bash"]
    assert (await registry.search("download a web page", k=2))[0].name == "fetch"
    explained = await registry.search("create a calendar event", k=1, explain=True)
    assert explained[0].name == "calendar_events_insert" and explained[0].explain is not None


async def test_a_tool_the_caller_may_not_use_is_never_returned(registry: ToolRegistry) -> None:
    registry.policy = PermissionPolicy(denied=[Permission.SHELL])
    assert "bash" not in [m.name for m in await registry.search("run a shell command", k=20)]
    mail_only = await registry.search(
        "send an email", k=20, allowed=lambda tool: tool.name != "gmail_send_message"
    )
    assert "gmail_send_message" not in [m.name for m in mail_only]
    session = registry.overlay()  # a session layer follows the shared policy and index
    assert "bash" not in [m.name for m in await session.search("shell command", k=20)]


async def test_the_index_follows_added_removed_and_changed_tools(registry: ToolRegistry) -> None:
    def translate_text(text: str, target: str) -> str:
        """Translates text into the target language.

        Args:
            text: The text to translate.
            target: The language to translate into.
        """
        return text

    assert all(m.name != "translate_text" for m in await registry.search("translate", k=5))
    tool = FunctionTool(translate_text)
    registry.register(tool)
    assert (await registry.search("translate a sentence into French", k=1))[0].name == (
        "translate_text"
    )
    registry.unregister("translate_text")  # changed: searched by its new text
    registry.register(FunctionTool(translate_text, description="把文本翻译成目标语言"))
    assert all(m.name != "gmail_send_message" for m in await registry.search("翻译文本", k=1))
    assert (await registry.search("翻译文本", k=1))[0].name == "translate_text"
    registry.unregister("translate_text")
    assert all(m.name != "translate_text" for m in await registry.search("翻译文本", k=5))


async def test_a_chinese_query_finds_an_english_tool_with_a_cross_language_embedder(
    tmp_path: Path,
) -> None:
    """e5 (multilingual-e5-small) reads both languages; WordLlama, the default, does not."""
    registry = catalog(tmp_path)
    registry.search_index = index = HybridToolIndex(embedder="e5", mode="vector")
    try:
        found = await registry.search("发送一封电子邮件", k=3)
        assert "gmail_send_message" in [m.name for m in found]
    finally:
        await index.close()


def test_the_text_searched_and_its_terms() -> None:
    assert name_words("mcp__github__create_issue") == "github create issue"
    assert name_words("sendEmailMessage") == "send Email Message"
    text = tool_text(FunctionTool(gmail_send_message))
    assert text.startswith("gmail send message\n") and "RFC 2822" in text
    assert terms("Sends the emails 发送邮件") == [
        "send",
        "email",
        "发",
        "送",
        "邮",
        "件",
        "发送",
        "送邮",
        "邮件",
    ]


async def test_bad_queries_are_refused_with_the_fix(tmp_path: Path) -> None:
    registry = catalog(tmp_path)
    from toolweave.tools import ToolError

    with pytest.raises(ToolError, match="search needs a query"):
        await registry.search("  ")
    with pytest.raises(ToolError, match="k must be a positive integer"):
        await registry.search("email", k=0)
