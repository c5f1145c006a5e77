"""`KeywordToolIndex` keeps postings (`toolweave.tools.bm25.Postings`) in step with the tools it
is handed and ranks exactly as BM25 counted afresh over those tools (`bm25_scores`, the plain
formula, is the oracle): over the whole catalog and over one caller's subset, with a tool
replaced under its name read again and a dropped one never returned."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from toolweave.builtins import fetch_tool, filesystem_tools, shell_tool
from toolweave.tools import FunctionTool, Tool
from toolweave.tools.bm25 import Postings, bm25_scores
from toolweave.tools.search import KeywordToolIndex, terms, tool_text

QUERIES = (
    "read a file",
    "write text to a file in the workspace",
    "run a shell command",
    "fetch a web page over HTTP",
    "list the directory",
    "读取文件",
)


def fresh_ranking(query: str, tools: list[Tool], k: int) -> list[tuple[str, float]]:
    """BM25 over `tools` counted from scratch, best first, ties by name."""
    wanted = set(terms(query))
    counts = [Counter(terms(tool_text(tool))) for tool in tools]
    ranked = [
        (tool.name, score)
        for tool, score in zip(tools, bm25_scores(wanted, counts), strict=True)
        if score > 0
    ]
    return sorted(ranked, key=lambda m: (-m[1], m[0]))[:k]


def catalog(tmp_path: Path) -> list[Tool]:
    return [*filesystem_tools(tmp_path), shell_tool(tmp_path), fetch_tool()]


async def test_the_postings_rank_as_bm25_counted_afresh_over_the_tools_handed_in(
    tmp_path: Path,
) -> None:
    tools = catalog(tmp_path)
    subset = tools[::2]  # another caller, fewer tools: its own document counts and lengths
    index = KeywordToolIndex()
    for query in QUERIES:
        for handed in (tools, subset, tools):
            found = await index.search(query, handed, 5)
            assert [(m.name, m.score) for m in found] == fresh_ranking(query, handed, 5)
    assert await index.search("read a file", tools, 3)  # the oracle agreed on real matches


async def test_a_tool_replaced_under_its_name_is_read_again(tmp_path: Path) -> None:
    def translate_text(text: str) -> str:
        """Translate text into another language."""
        return text

    def translate_text_v2(text: str) -> str:
        """Convert an amount of money between currencies."""
        return text

    tools: list[Tool] = [*catalog(tmp_path), FunctionTool(translate_text)]
    index = KeywordToolIndex()
    assert [m.name for m in await index.search("translate language", tools, 1)] == [
        "translate_text"
    ]
    tools[-1] = FunctionTool(translate_text_v2, name="translate_text")
    assert await index.search("language", tools, 3) == []
    found = await index.search("currencies money", tools, 1, explain=True)
    assert [(m.name, m.explain) for m in found] == [
        ("translate_text", {"mode": "keyword", "terms": ["currencie", "money"]})
    ]
    assert await index.search("currencies money", tools[:-1], 3) == []  # not handed in


def test_postings_forget_a_removed_document_entirely() -> None:
    postings = Postings()
    postings.add("a", Counter(terms("send an email message")))
    postings.add("b", Counter(terms("read an email")))
    postings.remove("a")
    postings.remove("missing")
    assert "a" not in postings and len(postings) == 1
    assert postings.scores(["send"], {"b"}) == {}
    assert set(postings.scores(["email"], {"b"})) == {"b"}
    postings.add("b", Counter(terms("fetch a page")))  # replaced: its old terms are gone
    assert postings.scores(["email"], {"b"}) == {}
