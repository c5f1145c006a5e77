"""Memory at scale: ingest beside chromadb, LanceDB and sqlite-vec, one `add`, and search
p50/p95 at 100k (and 1M) memories.

Synthetic memories mix Chinese and English sentences from a fixed vocabulary (seeded, so every
run sees the same data); every one also holds "topic N item M", so queries of those words match
the whole store. For each size the benchmark measures, in the same run:
- the raw embedder (WordLlama, batches of `--batch`) over the same texts: the floor;
- `add_many` ingest in batches of `--batch` into a fresh SQLite store: overhead vs the floor;
- one `add` at that size (p50 over `--adds` calls);
- `search` over `--queries` queries (p50/p95), episodic + semantic, keyword and vector fused,
  once with the exact matrix scan and once with HNSW graphs (usearch; the default from 50k vectors);
- jieba segmentation alone over the same texts, which indexing needs and the embedder does not;
- `add_many` with the vectors known beforehand: the store's own work (SQLite rows, full text,
  trigrams, vector BLOBs, payload indexes, dedupe), which ingest adds to the embedder's;
- the same rows and the same vectors (computed once, above) written by each peer of
  `memory_peers.py`, with what each keeps and does not, and toolweave's rate over each;
- search for plain queries and for queries of words every memory holds ("topic 7 item 0");
- search right after the ingest, while the HNSW graph is built in the background (the first
  search of a store past 50k vectors starts the build; an int8 copy of the vectors, rescored
  exactly, answers meanwhile), by how much of the graph is built;
- recall@10 of the HNSW graph against the exact scan.
Goals: search p50 <= 10 ms at 100k and <= 50 ms at 1M, common words included; one add <= 5 ms
p50; ingest at least as fast as the fastest peer while keeping full text, dedupe and the graph.

Run: .venv/bin/python benchmarks/memory_scale.py                 (100k)
     .venv/bin/python benchmarks/memory_scale.py --sizes 100000 1000000   (1M takes long)
     ... --dir DIR --search-only      (search again over the stores a run left in DIR)
     ... --no-peers                   (toolweave alone; the peers need the `bench` extra)
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory_peers import PEERS, beside_busy_thread

from toolweave.memory import MemoryManager
from toolweave.storage.retrieval import Embedder, IndexSettings, load_embedder
from toolweave.storage.retrieval.hnsw import DEFAULT_HNSW_THRESHOLD
from toolweave.storage.text import fts_texts

SUBJECTS_ZH = ["用户", "张三", "李四", "团队", "客户", "产品经理", "我们", "老师", "医生", "学生"]
VERBS_ZH = ["讨论了", "完成了", "喜欢", "计划", "修复了", "发布了", "学习了", "购买了", "取消了"]
OBJECTS_ZH = [
    "机器学习项目",
    "数据库迁移",
    "季度预算",
    "新版本",
    "周末旅行",
    "性能问题",
    "合同",
    "课程",
    "乌龙茶",
    "会议纪要",
    "招聘计划",
    "服务器升级",
    "用户反馈",
    "设计稿",
    "年度报告",
    "体检",
]
SUBJECTS_EN = ["The user", "Alice", "Bob", "The team", "Our client", "The manager", "Carol"]
VERBS_EN = ["discussed", "finished", "likes", "planned", "fixed", "shipped", "learned", "bought"]
OBJECTS_EN = [
    "the search feature",
    "a database migration",
    "the quarterly budget",
    "version two",
    "a weekend trip",
    "the latency regression",
    "the contract",
    "a Rust course",
    "green tea",
    "the meeting notes",
    "the hiring plan",
    "a server upgrade",
    "customer feedback",
    "the design",
]
PLACES = ["on Monday", "in Beijing", "在上海", "last week", "上个月", "at the office", "在家里"]


def memories(count: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        if i % 2:
            text = f"{rng.choice(SUBJECTS_ZH)}{rng.choice(PLACES)}{rng.choice(VERBS_ZH)}"
            text += f"{rng.choice(OBJECTS_ZH)}，编号{i}"
        else:
            text = f"{rng.choice(SUBJECTS_EN)} {rng.choice(VERBS_EN)} {rng.choice(OBJECTS_EN)}"
            text += f" {rng.choice(PLACES)} (note {i})"
        out.append(f"{text} topic {i % 100} item {i % 1000}")
    return out


QUERIES = [
    "数据库迁移",
    "预算",
    "Alice green tea",
    "latency regression fixed",
    "周末旅行计划",
    "招聘",
    "server upgrade",
    "what did the team ship",
    "用户反馈",
    "Rust course",
    "乌龙茶",
    "meeting notes from Monday",
    "年度报告",
    "customer feedback on the design",
]
COMMON_QUERIES = [
    "topic 7 item 0",
    "topic 42 item 142",
    "item topic",
    "topic 3 item 503 note 1503",
    "编号 topic item",
    "the team topic 9",
]
"""Words every memory holds ("topic", "item"), alone or with a rarer one."""


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


SEARCHED_TYPES = ["episodic", "semantic"]
"""The memory types every timed search asks for (the first semantic search of a store also
reads its knowledge graph: every current fact, ~0.2 s at 100k)."""
CPU_MS: list[float] = []
"""The process's CPU time of each timed search, in ms (with a build running, the builder's
share of it too); wall time alone misleads on a machine shared with other work."""


async def timed_searches(
    manager: MemoryManager, count: int, queries: list[str] = QUERIES
) -> list[float]:
    times = []
    for i in range(count):
        start, cpu = time.perf_counter(), time.process_time()
        await manager.search(queries[i % len(queries)], limit=5, memory_types=SEARCHED_TYPES)
        times.append((time.perf_counter() - start) * 1000)
        CPU_MS.append((time.process_time() - cpu) * 1000)
    return times


def load_and_cpu(count: int) -> str:
    """The CPU p50 of the last `count` searches and the machine's load average now."""
    return f"CPU p50 {statistics.median(CPU_MS[-count:]):6.2f} ms  load {os.getloadavg()[0]:.1f}"


async def print_searches(manager: MemoryManager, args: argparse.Namespace, how: str) -> None:
    goal = 10 if args.size <= 100_000 else 50
    for label, queries in (("plain", QUERIES), ("common words", COMMON_QUERIES)):
        times = await timed_searches(manager, args.queries, queries)
        print(
            f"search, {how:10} {spread(times)}  {load_and_cpu(len(times))}"
            f"  goal p50 <= {goal} ms  ({label})"
        )


def open_manager(path: Path, embedder: Embedder, hnsw_threshold: int | None) -> MemoryManager:
    return MemoryManager(
        path, embedder=embedder, index=IndexSettings(hnsw_threshold=hnsw_threshold)
    )


async def run_size(size: int, args: argparse.Namespace, root: Path) -> None:
    embedder = load_embedder("auto")
    embedder.embed(["warm up"])
    path = root / f"scale_{size}.db"
    args.size = size
    print(f"\n== {size:,} memories ==")
    if args.search_only:
        print(f"(reusing {path})")
    else:
        await ingest(size, args, path, embedder)
    if args.hnsw:
        await searches_during_build(path, embedder, args)
    manager = open_manager(path, embedder, None)  # the exact scan, whatever the size
    start = time.perf_counter()
    await manager.search("warm up the vector matrix", memory_types=["episodic"])
    first = time.perf_counter() - start
    print(f"first search        {first * 1000:8.0f} ms  (loads the vector matrix)")
    await print_searches(manager, args, "exact scan")
    exact = await nearest_ids(manager, size)
    await manager.close()
    if args.hnsw:
        manager = open_manager(path, embedder, 1)
        start = time.perf_counter()
        await manager.index.build_graph()  # type: ignore[attr-defined]
        build = time.perf_counter() - start
        print(f"HNSW graph build    {build:8.1f} s   (in the background, once; loaded if saved)")
        await print_searches(manager, args, "HNSW")
        print(
            f"HNSW recall@{RECALL_AT}      {recall(exact, await nearest_ids(manager, size)):8.3f}"
            f"     (vector search against the exact scan, {len(exact)} queries)"
        )
        await manager.close()  # saves the graph beside the file
        manager = open_manager(path, embedder, 1)
        start = time.perf_counter()
        await manager.index.build_graph()  # type: ignore[attr-defined]
        reload = time.perf_counter() - start
        await manager.close()
        print(f"HNSW graph reload   {reload:8.1f} s   (a restart: the graph saved on close)")


RECALL_AT = 10
RECALL_MEMORIES = 80
"""Stored memories asked for their neighbours too, beside the benchmark's queries."""


async def nearest_ids(manager: MemoryManager, size: int) -> list[set[str]]:
    """The `RECALL_AT` nearest memories of every benchmark query and of `RECALL_MEMORIES`
    stored ones, by vector alone."""
    found = []
    for query in QUERIES + COMMON_QUERIES + memories(size)[:: size // RECALL_MEMORIES]:
        hits = await manager.index.vector_search(query, limit=RECALL_AT, collection=manager.user_id)
        found.append({hit.record.id for hit in hits})
    return found


def recall(exact: list[set[str]], approximate: list[set[str]]) -> float:
    """The share of the exact nearest memories an approximate search found."""
    return sum(len(e & a) for e, a in zip(exact, approximate, strict=True)) / sum(map(len, exact))


async def searches_during_build(path: Path, embedder: Embedder, args: argparse.Namespace) -> None:
    """Search from the moment the store opens until its background HNSW build ends (a graph
    saved by an earlier run is removed first, so the build is the one after an ingest)."""
    manager = open_manager(path, embedder, DEFAULT_HNSW_THRESHOLD)
    live = manager.index.vectors  # type: ignore[attr-defined]
    shutil.rmtree(live.graph_path, ignore_errors=True)
    start = time.perf_counter()
    await manager.search("warm up the vector matrix", memory_types=SEARCHED_TYPES)
    first = (time.perf_counter() - start) * 1000
    print(
        f"first search        {first:8.0f} ms  (loads the vectors and the knowledge graph,"
        " starts the graph build)"
    )
    times: list[float] = []
    # (wall, process CPU, the builder thread's CPU) of each search, by how much is built
    phases: dict[str, list[tuple[float, float, float]]] = {}
    builder = live._builder
    while live.building:
        share, before = live.build_progress, thread_cpu_ms(builder)
        times.extend(await timed_searches(manager, 1, QUERIES[len(times) % len(QUERIES) :]))
        phase = f"graph holds {min(9, int(share * 10))}0%+"
        spent = (times[-1], CPU_MS[-1], max(0.0, thread_cpu_ms(builder) - before))
        phases.setdefault(phase, []).append(spent)
    built = time.perf_counter() - start
    goal = 10 if args.size <= 100_000 else 50
    if times:
        print(
            f"search, during build {spread(times)}  {load_and_cpu(len(times))}"
            f"  goal p50 <= {goal} ms  ({len(times)} searches"
            f" in the {built:.1f} s until the graph took over)"
        )
        for phase, rows in sorted(phases.items()):
            cpu = statistics.median(c for _, c, _ in rows)
            built_cpu = statistics.median(b for _, _, b in rows)
            print(
                f"  {phase:22} {spread([w for w, _, _ in rows])}  CPU p50 {cpu:6.2f} ms"
                f" (builder {built_cpu:5.2f})  ({len(rows)} searches)"
            )
    await print_searches(manager, args, "just built")
    await manager.close()


def thread_cpu_ms(thread: threading.Thread | None) -> float:
    """The CPU time `thread` has used so far, in ms (0 once it has ended): the builder's share
    of a search's process CPU time."""
    if thread is None or thread.ident is None:
        return 0.0
    try:
        return time.clock_gettime(time.pthread_getcpuclockid(thread.ident)) * 1000
    except OSError:  # the thread ended meanwhile
        return 0.0


class KnownVectors:
    """The embedder's vectors, computed beforehand: a store written with it pays for SQLite
    alone, which shows how much of ingest is the store's own work."""

    def __init__(self, embedder: Embedder, texts: list[str], vectors: list[Any]) -> None:
        self.name, self.dim = embedder.name, embedder.dim
        self._vectors = dict(zip(texts, vectors, strict=True))

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        return np.stack([self._vectors[t] for t in texts])


async def warm_up(embedder: Embedder) -> None:
    """Load once per process what the first write loads (jieba's dictionary), as each peer's
    imports happen before its timing starts."""
    manager = MemoryManager(":memory:", embedder=embedder)
    await manager.add_many(
        [{"content": "预热 warm up", "memory_type": t} for t in ("episodic", "semantic")]
    )
    await manager.close()


def kind_of(position: int, batch: int) -> str:
    return "semantic" if (position // batch) % 10 == 0 else "episodic"


async def add_all(manager: MemoryManager, texts: list[str], batch: int) -> float:
    start = time.perf_counter()
    for i in range(0, len(texts), batch):
        kind = kind_of(i, batch)
        await manager.add_many([{"content": t, "memory_type": kind} for t in texts[i : i + batch]])
    return time.perf_counter() - start


def compare_peers(
    texts: list[str],
    vectors: list[Any],
    args: argparse.Namespace,
    root: Path,
    ours: float,
    *,
    busy: bool = False,
) -> None:
    """Each peer writes the same rows and vectors (`busy`: beside a spinning Python thread);
    toolweave's rate (`ours`, texts/s with the vectors known) over each peer's."""
    rows = [
        (f"m{i:09d}", t, {"memory_type": kind_of(i, args.batch), "importance": 0.5})
        for i, t in enumerate(texts)
    ]
    beside = ", beside a busy Python thread" if busy else ""
    print(f"\ningest with the vectors known, same rows and batches ({len(rows):,} texts{beside}):")
    print(f"  {'toolweave add_many':24} {ours:10,.0f} texts/s   1.00x")
    print("      keeps: rows, payload indexes, FTS5 words (CJK segmented), FTS5 trigrams,")
    print("             vectors, dedupe by content hash, the graph")
    for peer in PEERS:
        with beside_busy_thread(busy):
            rate = len(rows) / peer.ingest(root, rows, vectors, args.batch)
        print(f"  {peer.name:24} {rate:10,.0f} texts/s   toolweave {ours / rate:.2f}x")
        print(f"      keeps: {peer.keeps}\n      lacks: {peer.lacks}")


async def ingest(size: int, args: argparse.Namespace, path: Path, embedder: Embedder) -> None:
    """Measure the embedder and segmentation alone, SQLite alone, then `add_many` and one
    `add` into a new store."""
    texts = memories(size)
    await warm_up(embedder)
    start = time.perf_counter()
    vectors = [embedder.embed(texts[i : i + args.batch]) for i in range(0, size, args.batch)]
    raw = time.perf_counter() - start
    start = time.perf_counter()
    for i in range(0, size, args.batch):
        fts_texts(texts[i : i + args.batch])
    jieba = time.perf_counter() - start
    known = KnownVectors(embedder, texts, [v for batch in vectors for v in batch])
    alone = open_manager(path.with_suffix(".sqlite-only.db"), known, None)
    sqlite_only = await add_all(alone, texts, args.batch)
    await alone.close()
    del known
    if args.peers:
        compare_peers(texts, vectors, args, path.parent, size / sqlite_only)
    del vectors
    manager = open_manager(path, embedder, None)
    elapsed = await add_all(manager, texts, args.batch)
    adds = []
    for i in range(args.adds):
        start = time.perf_counter()
        await manager.add(f"一条新的记忆 number {i} about {QUERIES[i % len(QUERIES)]}", "episodic")
        adds.append((time.perf_counter() - start) * 1000)
    await manager.close()
    print(f"raw embedder        {size / raw:10,.0f} texts/s   (floor)")
    print(f"jieba segmentation  {size / jieba:10,.0f} texts/s   (indexing needs it)")
    print(
        f"store alone         {size / sqlite_only:10,.0f} texts/s   (add_many with the vectors"
        f" known: {sqlite_only / raw:.0%} of the embedder's time)"
    )
    print(
        f"add_many ingest     {size / elapsed:10,.0f} texts/s   overhead {elapsed / raw - 1:+.0%}",
        end="",
    )
    print("  goal <= +10%")
    print(f"one add             {spread(adds)}  goal p50 <= 5 ms")


def spread(times: list[float]) -> str:
    return f"p50 {statistics.median(times):6.2f} ms  p95 {pct(times, 0.95):6.2f} ms"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000])
    parser.add_argument("--batch", type=int, default=2_000)
    parser.add_argument("--adds", type=int, default=200)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-hnsw", dest="hnsw", action="store_false", help="skip the HNSW run")
    parser.add_argument("--no-peers", dest="peers", action="store_false", help="toolweave alone")
    parser.add_argument(
        "--search-only", action="store_true", help="reuse the stores in --dir, measure search"
    )
    parser.add_argument("--dir", type=Path, default=None, help="where the stores go (default: tmp)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.dir or Path(tmp)
        for size in args.sizes:
            await run_size(size, args, root)


if __name__ == "__main__":
    asyncio.run(main())
