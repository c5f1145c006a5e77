"""Tool search on public tool-retrieval sets: how often the right tool is found, and what a
model is sent per request.

The sets are nobody's here (`tool_search_sets.py` says where each comes from): MetaTool (199
plugins, English), Seal-Tools (4,076 API tools, English), ACEBench (a Chinese half with
Chinese-described tools, and an English half) and ToolBench's test queries over 2,479 RapidAPI
endpoints (StableToolBench's copy). Their text is never committed: fetch the repositories and
point the script at them (`--metatool`, `--seal-tools`, `--acebench`, `--stabletoolbench`; any
subset). Queries are subsampled with a fixed seed (`--queries`, `--seed`), every system answers
the same ones. `--half tune` / `--half held-out` keep the queries whose SHA-1's first byte is
even / odd: `HybridToolIndex`'s per-query fusion (`ToolFusion`) was chosen on the tune halves,
and the docs report the held-out halves.

Systems, each over the same tool text (`toolweave.tools.search.tool_text`: name words, title,
description, parameter names and descriptions): `ToolRegistry.search` with its default
`KeywordToolIndex`, with `HybridToolIndex` in hybrid, keyword and vector mode (`--embedder` for
the English sets, `--chinese-embedder` for the Chinese one: WordLlama, the default, reads no
Chinese), bm25s as the BM25 baseline (PyStemmer for English, jieba words for Chinese; the
`bench` extra), and the substring filter `mcp_discover` applies today (the query must appear in
a name or description; ranked by name). Metrics: recall@1, @5, @10 (the share of a query's
labelled tools among the first k) and nDCG@10, each with a 95% bootstrap interval over queries;
then hybrid's recall@5 lead over bm25s with a paired interval (both resampled with the same
queries) and the most any system could lead by (1 - bm25s' recall@5).

Bytes per request, the JSON of the tool definitions a model receives, averaged over queries:
eager (every tool), lazy as `mcp_discover` / `mcp_load` work today (the two loader tools plus the
labelled tools, had the model loaded exactly those; its discover listing, one line per tool,
comes on top once, as a tool result), and search mode (a `tool_search` tool plus the first 5
matches it loaded).

Run: .venv/bin/python benchmarks/tool_search.py --metatool PATH/MetaTool/dataset
    --seal-tools PATH/Seal-Tools/Seal-Tools_Dataset --acebench PATH/ACEBench/data_all
    --stabletoolbench PATH/StableToolBench/solvable_queries/test_instruction
    --livemcptool PATH/LiveMCPBench/tools/LiveMCPTool/tools.json
    --mcptoolbench PATH/MCPToolBenchPP/data/file_system/filesystem_0723_single.json
(the real-server catalog, `--livemcptool` with `--mcptoolbench`, starts the MCP servers the tests
install: run `make test` once first.)
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import random
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from retrieval_public import _tokens as bm25s_tokens  # the same tokens as its baseline
from tool_search_sets import (
    ToolSet,
    load_acebench,
    load_mcp_catalog,
    load_metatool,
    load_seal_tools,
    load_stabletoolbench,
)

from toolweave.mcp import MCPManager, lazy_tools
from toolweave.storage.retrieval.tool_index import HybridToolIndex
from toolweave.tools import FunctionTool, ToolDef, ToolRegistry, tool_def
from toolweave.tools.search import KeywordToolIndex, tool_text

PEERS = Path(__file__).resolve().parents[1] / "tests" / "peers" / "node_modules" / ".bin"
"""The real MCP servers the tests install (`make test`)."""
K = 10
SEARCH_LOADS = 5
"""Tools a search mode loads per request in the bytes estimate."""
DISCOVER_LINE = 100
"""Characters of a description in an `mcp_discover` line."""
BM25S = "bm25s (stemmer / jieba)"
Ranker = Callable[[str], Awaitable[list[str]]]
Outcome = tuple[list[int], int]
"""The ranks (0-based, under K) of a query's labelled tools that were found, and how many it has."""


def substring_ranker(registry: ToolRegistry) -> Ranker:
    """What `mcp_discover` does today: the query must be a substring of a name or description."""

    async def rank(query: str) -> list[str]:
        needle = query.lower()
        return [
            t.name
            for t in registry.tools()
            if needle in t.name.lower() or needle in t.description.lower()
        ][:K]

    return rank


def bm25s_ranker(registry: ToolRegistry, chinese: bool) -> Ranker:
    import bm25s

    tools = registry.tools()
    retriever = bm25s.BM25()
    retriever.index(bm25s_tokens([tool_text(t) for t in tools], chinese), show_progress=False)

    async def rank(query: str) -> list[str]:
        tokens = bm25s_tokens([query], chinese)[0]
        if not tokens:
            return []
        ids, _ = retriever.retrieve([tokens], k=min(K, len(tools)), show_progress=False)
        return [tools[int(i)].name for i in ids[0]]

    return rank


def registry_ranker(registry: ToolRegistry) -> Ranker:
    async def rank(query: str) -> list[str]:
        return [m.name for m in await registry.search(query, k=K)]

    return rank


def _metrics(outcomes: Sequence[Outcome]) -> dict[str, float]:
    def recall(k: int) -> float:
        return sum(sum(1 for r in ranks if r < k) / n for ranks, n in outcomes) / len(outcomes)

    def ndcg(ranks: list[int], n: int) -> float:
        ideal = sum(1 / math.log2(i + 2) for i in range(min(n, K)))
        return sum(1 / math.log2(r + 2) for r in ranks) / ideal

    mean_ndcg = sum(ndcg(ranks, n) for ranks, n in outcomes) / len(outcomes)
    return {"R@1": recall(1), "R@5": recall(5), "R@10": recall(10), "nDCG@10": mean_ndcg}


def _bootstrap(
    count: int, statistic: Callable[[Sequence[int]], float], rounds: int = 1000
) -> tuple[float, float]:
    """The 95% bootstrap interval of `statistic` (of the indices of a resample of `count`
    queries)."""
    rng = random.Random(0)
    values = sorted(statistic([rng.randrange(count) for _ in range(count)]) for _ in range(rounds))
    return values[int(0.025 * rounds)], values[int(0.975 * rounds) - 1]


def _interval(outcomes: Sequence[Outcome], key: str) -> tuple[float, float]:
    return _bootstrap(len(outcomes), lambda picks: _metrics([outcomes[i] for i in picks])[key])


def _lead(ours: Sequence[Outcome], theirs: Sequence[Outcome]) -> tuple[float, float, float]:
    """Recall@5 of `ours` minus that of `theirs` over the same queries, and its 95% paired
    bootstrap interval (both resampled with the same queries: tighter than two intervals)."""

    def lead(picks: Sequence[int]) -> float:
        return (
            _metrics([ours[i] for i in picks])["R@5"] - _metrics([theirs[i] for i in picks])["R@5"]
        )

    return (lead(range(len(ours))), *_bootstrap(len(ours), lead))


async def evaluate(
    rank: Ranker, queries: Sequence[tuple[str, frozenset[str]]], labels: dict[str, str]
) -> tuple[list[Outcome], float]:
    outcomes: list[Outcome] = []
    started = time.perf_counter()
    for query, gold in queries:
        found = [labels[n] for n in await rank(query)]
        outcomes.append(([i for i, label in enumerate(found) if label in gold], len(gold)))
    return outcomes, (time.perf_counter() - started) / len(queries) * 1000


def _bytes(definitions: Sequence[ToolDef]) -> int:
    payload = [
        {"name": d.name, "description": d.description, "parameters": d.parameters}
        for d in definitions
    ]
    return len(json.dumps(payload, ensure_ascii=False).encode("utf-8"))


async def request_bytes(
    registry: ToolRegistry, queries: Sequence[tuple[str, frozenset[str]]], labels: dict[str, str]
) -> dict[str, float]:
    """Eager, lazy and search-mode bytes of tool definitions (see the module docstring)."""

    async def tool_search(query: str, k: int = SEARCH_LOADS) -> str:
        """Find tools for a task described in words; the found tools become callable."""
        return ""

    searcher = tool_def(FunctionTool(tool_search))
    loaders = [tool_def(t) for t in lazy_tools(MCPManager({}))]
    by_name = {d.name: d for d in registry.definitions()}
    by_label = {labels[name]: d for name, d in by_name.items()}
    listing = "\n".join(
        f"- {d.name}: {' '.join(d.description.split())[:DISCOVER_LINE]}" for d in by_name.values()
    )
    lazy = searched = 0
    for query, gold in queries:
        lazy += _bytes([*loaders, *(by_label[g] for g in sorted(gold))])
        loaded = [by_name[m.name] for m in await registry.search(query, k=SEARCH_LOADS)]
        searched += _bytes([searcher, *loaded])
    return {
        "eager": _bytes(registry.definitions()),
        "lazy": lazy / len(queries),
        "discover listing": len(listing.encode("utf-8")),
        "search mode": searched / len(queries),
    }


def _half(queries: list[tuple[str, frozenset[str]]], half: str) -> list[tuple[str, frozenset[str]]]:
    if half == "all":
        return queries
    parity = 0 if half == "tune" else 1
    return [q for q in queries if hashlib.sha1(q[0].encode()).digest()[0] % 2 == parity]


async def run_set(toolset: ToolSet, args: argparse.Namespace) -> None:
    queries = _half(toolset.queries, args.half)
    sample = random.Random(args.seed).sample(queries, min(args.queries, len(queries)))
    tools, labels = toolset.catalog()
    registry = ToolRegistry()
    registry.register_all(tools)
    embedder = args.chinese_embedder if toolset.chinese else args.embedder
    multi = sum(1 for _, gold in sample if len(gold) > 1)
    print(
        f"\n## {toolset.name} ({toolset.source})\n\n{len(tools):,} tools, "
        f"{len(toolset.queries):,} labelled queries, {len(queries):,} in the {args.half} half, "
        f"{len(sample):,} sampled (seed {args.seed}; {multi} with more than one tool)"
    )
    hybrid = HybridToolIndex(embedder=embedder)
    clone = ToolRegistry()
    clone.register_all(tools)
    clone.search_index = hybrid
    systems: list[tuple[str, Ranker, str | None]] = []
    registry.search_index = KeywordToolIndex()
    systems.append(("toolweave KeywordToolIndex (default)", registry_ranker(registry), None))
    for mode in ("hybrid", "keyword", "vector"):
        label = f"toolweave HybridToolIndex {mode} ({embedder})"
        systems.append((label, registry_ranker(clone), mode))
    try:
        systems.append((BM25S, bm25s_ranker(registry, toolset.chinese), None))
    except ImportError:
        print("bm25s or PyStemmer missing: pip install 'toolweave[bench]'", file=sys.stderr)
    systems.append(("substring filter (mcp_discover today)", substring_ranker(registry), None))
    print(
        "\n| system | R@1 | R@5 (95% CI) | R@10 | nDCG@10 | ms/query |\n|---|---|---|---|---|---|"
    )
    results: dict[str, list[Outcome]] = {}
    for label, rank, mode in systems:
        if mode is not None:
            hybrid.mode = mode  # type: ignore[assignment]
        await rank("warm up")  # index the tools, load the embedder
        outcomes, ms = await evaluate(rank, sample, labels)
        results[mode or label] = outcomes
        m = _metrics(outcomes)
        low, high = _interval(outcomes, "R@5")
        print(
            f"| {label} | {m['R@1']:.3f} | {m['R@5']:.3f} ({low:.3f}-{high:.3f}) | "
            f"{m['R@10']:.3f} | {m['nDCG@10']:.3f} | {ms:.2f} |"
        )
    if BM25S in results:
        lead, low, high = _lead(results["hybrid"], results[BM25S])
        print(
            f"\nhybrid over bm25s, recall@5: {lead * 100:+.1f} points (95% paired bootstrap"
            f" interval {low * 100:+.1f} to {high * 100:+.1f}; the most possible"
            f" {(1 - _metrics(results[BM25S])['R@5']) * 100:+.1f})"
        )
    hybrid.mode = "hybrid"
    sizes = await request_bytes(clone, sample[: args.byte_queries], labels)
    await hybrid.close()
    eager = sizes["eager"]
    print(
        f"\ntool definitions per request: eager {eager:,.0f} bytes; lazy today "
        f"{sizes['lazy']:,.0f} ({sizes['lazy'] / eager:.1%}; plus a discover listing of "
        f"{sizes['discover listing']:,.0f} once); search mode {sizes['search mode']:,.0f} "
        f"({sizes['search mode'] / eager:.1%})"
    )


async def installed_servers_tools(root: Path) -> dict[str, tuple[str, dict[str, Any]]]:
    """The tools of the MCP servers the tests install, as `MCPManager` lists them."""
    servers = {
        "everything": {"command": str(PEERS / "mcp-server-everything")},
        "filesystem": {"command": str(PEERS / "mcp-server-filesystem"), "args": [str(root)]},
        "memory": {"command": str(PEERS / "mcp-server-memory")},
    }
    async with MCPManager.from_config({"mcpServers": servers}) as manager:
        tools = manager.tools()
        missing = sorted(set(servers) - {t.name.split("__", 1)[0] for t in tools})
        if missing:
            raise SystemExit(f"{', '.join(missing)} did not start: run `make test` once")
        return {t.name: (t.description, t.parameters) for t in tools}


async def main(args: argparse.Namespace) -> None:
    sets: list[ToolSet] = []
    if args.metatool:
        sets.append(load_metatool(args.metatool))
    if args.seal_tools:
        sets.append(load_seal_tools(args.seal_tools))
    if args.acebench:
        sets += [load_acebench(args.acebench, "zh"), load_acebench(args.acebench, "en")]
    if args.stabletoolbench:
        sets.append(load_stabletoolbench(args.stabletoolbench))
    if args.livemcptool and args.mcptoolbench:
        with tempfile.TemporaryDirectory() as root:
            real = await installed_servers_tools(Path(root))
        sets.append(load_mcp_catalog(real, args.livemcptool, args.mcptoolbench, args.pad_to))
    if not sets:
        raise SystemExit(
            "name at least one set: --metatool, --seal-tools, --acebench, --stabletoolbench, or"
            " --livemcptool with --mcptoolbench"
        )
    for toolset in sets:
        await run_set(toolset, args)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metatool", type=Path, help="MetaTool's dataset folder")
    parser.add_argument("--seal-tools", type=Path, help="Seal-Tools' Seal-Tools_Dataset folder")
    parser.add_argument("--acebench", type=Path, help="ACEBench's data_all folder")
    parser.add_argument(
        "--stabletoolbench",
        type=Path,
        help="StableToolBench's solvable_queries/test_instruction folder",
    )
    parser.add_argument("--livemcptool", type=Path, help="LiveMCPBench's LiveMCPTool tools.json")
    parser.add_argument(
        "--mcptoolbench", type=Path, help="MCPToolBench++'s filesystem_0723_single.json"
    )
    parser.add_argument(
        "--pad-to", type=int, default=300, help="tools in the real-server catalog, at least"
    )
    parser.add_argument("--queries", type=int, default=2000, help="queries sampled per set")
    parser.add_argument(
        "--byte-queries", type=int, default=200, help="queries for the bytes estimate"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--half", choices=("all", "tune", "held-out"), default="held-out")
    parser.add_argument("--embedder", default="auto", help="for the English sets")
    parser.add_argument("--chinese-embedder", default="e5", help="for the Chinese set")
    asyncio.run(main(parser.parse_args()))
