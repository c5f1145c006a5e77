"""Tool search: the tools a caller may use, ranked for a task described in words.

A model handed hundreds of tool definitions pays for every one of them on every request, and
picks worse among many. Searching instead (`ToolRegistry.search`) lets it see a few pinned tools
and look up the rest. What is searched is each tool's text (`tool_text`): its name split into
words (`gmail_send_message` -> "gmail send message", `mcp__github__create_issue` -> "github
create issue"), its title, description, and its parameters' names and descriptions.

`ToolIndex` is what ranks. `KeywordToolIndex`, the registry's default, is BM25 over that text
with no dependency (Latin words, Chinese as character unigrams and bigrams), so a bare
`ToolRegistry` can search. The retrieval layer's hybrid index
(`toolweave.storage.retrieval.tool_index.HybridToolIndex`: FTS5 with jieba segmentation, fused
with vectors from the same embedders memory uses, on SQLite or Postgres + Qdrant) is what agents
and `toolweave serve` use; assign it to `registry.search_index`.

The registry passes an index only the tools the caller may use (its permission policy, and an
`allowed` test such as governance's rules), so a refused tool is never returned, whatever the
index holds.
"""

from __future__ import annotations

import hashlib
import heapq
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from toolweave.tools.bm25 import CJK_RUN, Postings, cjk_grams

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[A-Za-z0-9]+|" + CJK_RUN.pattern)
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "into",
        "is",
        "it",
        "of",
        "on",
        "or",
        "the",
        "to",
        "with",
    ]
)


class Searchable(Protocol):
    """What search reads of a tool (every `Tool` has it); declared here so this module needs
    nothing else of the tool core."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]: ...

    @property
    def annotations(self) -> Any: ...


@dataclass(frozen=True, slots=True)
class ToolMatch:
    """One found tool: its name, the index's score (higher is better) and, when asked, why."""

    name: str
    score: float
    explain: dict[str, Any] | None = None


class ToolIndex(Protocol):
    """Ranks `tools` for `query`: at most `k` matches, best first, only tools of `tools`."""

    async def search(
        self, query: str, tools: Sequence[Searchable], k: int, *, explain: bool = False
    ) -> list[ToolMatch]: ...


def name_words(name: str) -> str:
    """A tool name as words: `mcp__github__create_issue` -> "github create issue",
    `sendEmailMessage` -> "send Email Message"."""
    parts = [p for p in re.split(r"[_\-.:/]+", name) if p and p != "mcp"]
    return " ".join(_CAMEL.sub(" ", p) for p in parts)


def _schema_words(schema: Any, depth: int = 0) -> list[str]:
    """Parameter names and descriptions of a JSON Schema, nested objects a level deep."""
    if not isinstance(schema, dict) or depth > 1:
        return []
    words: list[str] = []
    properties = schema.get("properties")
    for key, value in properties.items() if isinstance(properties, dict) else ():
        words.append(name_words(str(key)))
        if isinstance(value, dict):
            description = value.get("description")
            if isinstance(description, str):
                words.append(description)
            words.extend(_schema_words(value, depth + 1))
    return words


def tool_text(tool: Searchable) -> str:
    """What search reads of a tool: name words, title, description, parameters."""
    title = getattr(tool.annotations, "title", None)
    parts = [name_words(tool.name), title or "", tool.description or ""]
    parts.extend(_schema_words(tool.parameters))
    return "\n".join(p for p in parts if p)


def text_digest(text: str) -> str:
    """A short fingerprint of a tool's text, so an index re-reads only tools that changed."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


def terms(text: str) -> list[str]:
    """Keyword terms: lowercase Latin words (a trailing plural `s` dropped), Chinese as single
    characters and bigrams; common English function words left out."""
    found: list[str] = []
    for run in _WORD.findall(text):
        if CJK_RUN.match(run):
            found.extend(cjk_grams(run))
            continue
        word = run.lower()
        if word in _STOP:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        found.append(word)
    return found


class KeywordToolIndex:
    """BM25 over `tool_text` (`toolweave.tools.bm25`), with no dependency.

    Each tool's terms are read once, into postings (`bm25.Postings`), and read again only when
    the registry holds another tool object under that name (registered after an unregister, an
    MCP server's tools refreshed on `list_changed`): a tool object changed in place is not
    re-read. A query then reads only the postings of its terms, restricted to the tools it was
    handed, so the ranking is BM25 over exactly those tools, as if counted afresh. Names no
    longer handed in keep their postings (a few hundred bytes each): the tools differ per
    caller, so absence from one search says nothing about the registry."""

    def __init__(self) -> None:
        self._tools: dict[str, Searchable] = {}
        self._counts: dict[str, Counter[str]] = {}
        self._postings = Postings()

    def _follow(self, tools: Sequence[Searchable]) -> set[str]:
        """Index the tools not yet read as they are; the names of `tools`."""
        names: set[str] = set()
        for tool in tools:
            name = tool.name
            names.add(name)
            if self._tools.get(name) is not tool:
                counts = Counter(terms(tool_text(tool)))
                self._postings.add(name, counts)
                self._tools[name] = tool
                self._counts[name] = counts
        return names

    async def search(
        self, query: str, tools: Sequence[Searchable], k: int, *, explain: bool = False
    ) -> list[ToolMatch]:
        wanted = set(terms(query))
        if not wanted or not tools or k < 1:
            return []
        scores = self._postings.scores(wanted, self._follow(tools))
        best = heapq.nsmallest(
            k, ((name, s) for name, s in scores.items() if s > 0), key=lambda m: (-m[1], m[0])
        )
        return [
            ToolMatch(
                name,
                score,
                {"mode": "keyword", "terms": sorted(wanted & self._counts[name].keys())}
                if explain
                else None,
            )
            for name, score in best
        ]
