"""Tool search on a public tool-retrieval set: how often the right tool is found, and what a
model is sent per request.

The set is nobody's here: MetaTool (Huang et al., ICLR 2024; github.com/HowieHwong/MetaTool,
MIT): 199 tools described in their plugins' own words (`dataset/plugin_des.json`) and 20,615
user queries each labelled with the one tool that serves it (`dataset/data/all_clean_data.csv`).
Its text is never committed: fetch the repository and point the script at its `dataset` folder
(`--metatool DIR`). Queries are subsampled with a fixed seed (`--queries`, `--seed`), every
system answers the same ones. `--half tune` / `--half held-out` keep the queries whose SHA-1's
first byte is even / odd: the default index's vector weight (`TOOL_SEARCH_FUSION`) was chosen on
the tune half, and the docs report the held-out half.

Systems, each over the same tool text (`toolweave.tools.search.tool_text`: name words and
description): `ToolRegistry.search` with its default `KeywordToolIndex`, with `HybridToolIndex`
in hybrid, keyword and vector mode (the default embedder, or `--embedder`), bm25s (with
PyStemmer, the `bench` extra) as the BM25 baseline, and the substring filter `mcp_discover`
applies today (the query must appear in a name or description; ranked by name). Metrics:
recall@1, @5, @10 (the gold tool among the first k) and nDCG@10 (one relevant tool), each with a
95% bootstrap interval over queries.

Bytes per request: the JSON of the tool definitions a model receives when every tool is offered
(eager), and in search mode (a `tool_search` tool plus the tools a search loaded: the first 5
matches), averaged over the queries.

Run: .venv/bin/python benchmarks/tool_search.py --metatool PATH/MetaTool/dataset
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import hashlib
import json
import math
import random
import re
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

from toolweave.storage.retrieval.tool_index import HybridToolIndex
from toolweave.tools import FunctionTool, Tool, ToolDef, ToolRegistry, tool_def
from toolweave.tools.search import KeywordToolIndex, tool_text

K = 10
SEARCH_LOADS = 5
"""Tools a search mode loads per request in the bytes estimate."""
Ranker = Callable[[str], Awaitable[list[str]]]


def load_metatool(folder: Path) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """(tool name -> description, [(query, gold tool)])."""
    tools = json.loads((folder / "plugin_des.json").read_text(encoding="utf-8"))
    with (folder / "data" / "all_clean_data.csv").open(encoding="utf-8") as handle:
        queries = [(row["Query"], row["Tool"]) for row in csv.DictReader(handle)]
    known = [(q, t) for q, t in queries if t in tools]
    return tools, known


def _tool(name: str, description: str) -> Tool:
    async def run(query: str) -> str:
        return ""

    safe = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64]
    return FunctionTool(run, name=safe, description=description)


def catalog(tools: dict[str, str]) -> tuple[ToolRegistry, dict[str, str]]:
    """A registry of the set's tools and the map from registry name to the set's label."""
    registry = ToolRegistry()
    names = {}
    for label, description in sorted(tools.items()):
        tool = _tool(label, description)
        registry.register(tool)
        names[tool.name] = label
    return registry, names


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


def bm25s_ranker(registry: ToolRegistry) -> Ranker:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    tools = registry.tools()
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize([tool_text(t) for t in tools], stemmer=stemmer, show_progress=False),
        show_progress=False,
    )

    async def rank(query: str) -> list[str]:
        tokens = bm25s.tokenize([query], stemmer=stemmer, show_progress=False)
        if not tokens.vocab:
            return []
        ids, _ = retriever.retrieve(tokens, k=min(K, len(tools)), show_progress=False)
        return [tools[int(i)].name for i in ids[0]]

    return rank


def registry_ranker(registry: ToolRegistry) -> Ranker:
    async def rank(query: str) -> list[str]:
        return [m.name for m in await registry.search(query, k=K)]

    return rank


def _metrics(ranks: Sequence[int | None]) -> dict[str, float]:
    def recall(k: int) -> float:
        return sum(1 for r in ranks if r is not None and r < k) / len(ranks)

    ndcg = sum(1 / math.log2(r + 2) for r in ranks if r is not None and r < K) / len(ranks)
    return {"R@1": recall(1), "R@5": recall(5), "R@10": recall(10), "nDCG@10": ndcg}


def _interval(ranks: Sequence[int | None], key: str, rounds: int = 1000) -> tuple[float, float]:
    rng = random.Random(0)
    values = sorted(
        _metrics([ranks[rng.randrange(len(ranks))] for _ in ranks])[key] for _ in range(rounds)
    )
    return values[int(0.025 * rounds)], values[int(0.975 * rounds) - 1]


async def evaluate(
    rank: Ranker, queries: Sequence[tuple[str, str]], names: dict[str, str]
) -> tuple[list[int | None], float]:
    ranks: list[int | None] = []
    started = time.perf_counter()
    for query, gold in queries:
        found = [names[n] for n in await rank(query)]
        ranks.append(found.index(gold) if gold in found else None)
    return ranks, (time.perf_counter() - started) / len(queries) * 1000


def _bytes(definitions: Sequence[ToolDef]) -> int:
    payload = [
        {"name": d.name, "description": d.description, "parameters": d.parameters}
        for d in definitions
    ]
    return len(json.dumps(payload, ensure_ascii=False).encode("utf-8"))


async def request_bytes(
    registry: ToolRegistry, queries: Sequence[tuple[str, str]]
) -> tuple[int, float]:
    """Eager bytes, and the mean bytes of a search-mode request (the search tool and the tools
    its first search loaded)."""

    async def tool_search(query: str, k: int = SEARCH_LOADS) -> str:
        """Find tools for a task described in words; the found tools become callable."""
        return ""

    searcher = tool_def(FunctionTool(tool_search))
    eager = _bytes(registry.definitions())
    by_name = {d.name: d for d in registry.definitions()}
    total = 0
    for query, _ in queries:
        loaded = [by_name[m.name] for m in await registry.search(query, k=SEARCH_LOADS)]
        total += _bytes([searcher, *loaded])
    return eager, total / len(queries)


async def main(args: argparse.Namespace) -> None:
    tools, queries = load_metatool(args.metatool)
    if args.half != "all":
        parity = 0 if args.half == "tune" else 1
        queries = [q for q in queries if hashlib.sha1(q[0].encode()).digest()[0] % 2 == parity]
    sample = random.Random(args.seed).sample(queries, min(args.queries, len(queries)))
    registry, names = catalog(tools)
    print(
        f"MetaTool ({args.metatool}): {len(tools)} tools, {len(queries)} labelled queries "
        f"({args.half}), {len(sample)} sampled (seed {args.seed})"
    )
    systems: list[tuple[str, Ranker, HybridToolIndex | None]] = []
    registry.search_index = KeywordToolIndex()
    systems.append(("toolweave KeywordToolIndex (default)", registry_ranker(registry), None))
    for mode in ("hybrid", "keyword", "vector"):
        index = HybridToolIndex(embedder=args.embedder, mode=mode)  # type: ignore[arg-type]
        clone, _ = catalog(tools)
        clone.search_index = index
        systems.append(
            (f"toolweave HybridToolIndex {mode} ({args.embedder})", registry_ranker(clone), index)
        )
    try:
        systems.append(("bm25s + PyStemmer", bm25s_ranker(registry), None))
    except ImportError:
        print(
            "bm25s or PyStemmer missing: pip install 'toolweave[bench]' for the baseline",
            file=sys.stderr,
        )
    systems.append(("substring filter (mcp_discover today)", substring_ranker(registry), None))
    print(
        "\n| system | R@1 | R@5 | R@10 | nDCG@10 (95% CI) | ms/query |\n|---|---|---|---|---|---|"
    )
    for label, rank, index in systems:
        await rank("warm up")  # index the tools, load the embedder
        ranks, ms = await evaluate(rank, sample, names)
        m = _metrics(ranks)
        low, high = _interval(ranks, "nDCG@10")
        print(
            f"| {label} | {m['R@1']:.3f} | {m['R@5']:.3f} | {m['R@10']:.3f} | "
            f"{m['nDCG@10']:.3f} ({low:.3f}-{high:.3f}) | {ms:.2f} |"
        )
        if index is not None:
            await index.close()
    registry.search_index = HybridToolIndex(embedder=args.embedder)
    eager, searched = await request_bytes(registry, sample[: args.byte_queries])
    print(
        f"\ntool definitions per request: eager {eager:,} bytes; search mode {searched:,.0f} "
        f"bytes ({searched / eager:.1%} of eager)"
    )
    await registry.search_index.close()  # type: ignore[attr-defined]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metatool", type=Path, required=True, help="MetaTool's dataset folder")
    parser.add_argument("--queries", type=int, default=2000, help="queries sampled")
    parser.add_argument(
        "--byte-queries", type=int, default=200, help="queries for the bytes estimate"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--half", choices=("all", "tune", "held-out"), default="held-out")
    parser.add_argument("--embedder", default="auto")
    asyncio.run(main(parser.parse_args()))
