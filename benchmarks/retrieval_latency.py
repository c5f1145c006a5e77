"""Search latency of the embedded index (`SQLiteTextIndex`) at 5k documents and 100k chunks, in
keyword, hybrid and vector mode, beside bm25s over the same texts in the same run; with `--dsn`
the scale-out index instead (`PostgresQdrantIndex`: that Postgres, Qdrant's local mode).

The texts are those of the public sets `retrieval_public.py` reads (fetched, never committed):
SQuAD-format files (SQuAD, DRCD) and CMRC 2018. A size of documents takes whole paragraphs
first; past them (100k chunks) it adds chunks of one to four consecutive sentences of each
paragraph, as a chunker with overlap makes them, every chunk a distinct text. The queries are
the sets' own questions (English and Chinese), `--queries` of them with a fixed seed.

Each mode is timed per query (the query embedded, words matched, bm25, fusion, the records
read; past `hnsw_threshold` vectors, once the HNSW graph is built), by the wall clock and by
the CPU time the process spent (on a machine shared with other work the wall clock measures
the queue for a core as well), after one warm-up query that loads what a first search loads.
The timing starts once the postings the index reads ahead in the background after its writes
are held (`warm_postings`, both backends), as they are a moment after a store opens or is
written. `--profile` prints where each mode's time goes (cProfile, by cumulative time).
bm25s is timed over its query tokenisation (PyStemmer for English,
jieba for Chinese) and retrieval. Goals (issue 38):
keyword and hybrid p50 <= 5 ms at 5k documents and <= 20 ms at 100k chunks on 2 cores.

To compare with an older toolweave in one sitting, run the script twice, once with
`PYTHONPATH=<older checkout>/src`; the bm25s figures of both runs show the machine's load.

Run: .venv/bin/python benchmarks/retrieval_latency.py --squad F --cmrc F --drcd F [F ...]
     (or one folder in TOOLWEAVE_RETRIEVAL_DATA holding squad.json, cmrc2018_dev.json and
     DRCD_dev.json / DRCD_test.json)
     ... --postgres   (the same on Postgres + Qdrant's local mode: a throwaway cluster on
     loopback, as the tests start it, or the server `--dsn postgresql://...` names)
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from toolweave.storage.retrieval import PostgresQdrantIndex, Record, SQLiteTextIndex, TextIndex
from toolweave.storage.retrieval.index import SearchMode
from toolweave.storage.text import has_cjk

MODES: tuple[SearchMode, ...] = ("keyword", "hybrid", "vector")
SIZES = (5_000, 100_000)
SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")
ENV = "TOOLWEAVE_RETRIEVAL_DATA"


def read_sets(squad_like: Sequence[Path], cmrc: Sequence[Path]) -> tuple[list[str], list[str]]:
    """(paragraphs, questions) of SQuAD-format files and CMRC 2018 files."""
    paragraphs, questions = [], []
    for path in squad_like:
        for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
            for paragraph in article["paragraphs"]:
                paragraphs.append(paragraph["context"])
                questions += [qa["question"] for qa in paragraph["qas"]]
    for path in cmrc:
        for item in json.loads(path.read_text(encoding="utf-8")):
            paragraphs.append(item["context_text"])
            questions += [qa["query_text"] for qa in item["qas"]]
    return list(dict.fromkeys(paragraphs)), questions


def chunks(paragraphs: Sequence[str], size: int) -> list[str]:
    """`size` distinct texts: the paragraphs, then windows of 1-4 consecutive sentences."""
    found = dict.fromkeys(paragraphs[:size])
    for width in (1, 2, 3, 4):
        for paragraph in paragraphs:
            sentences = [s for s in SENTENCE_END.split(paragraph) if s.strip()]
            for start in range(max(len(sentences) - width + 1, 0)):
                if len(found) >= size:
                    return list(found)
                found.setdefault(" ".join(sentences[start : start + width]))
    if len(found) < size:
        raise SystemExit(f"the sets give {len(found)} distinct chunks, fewer than {size}")
    return list(found)


Timings = tuple[list[float], list[float]]
"""(wall-clock seconds, CPU seconds of the process) per query."""


def percentiles(times: Timings) -> str:
    wall, cpu = (sorted(t) for t in times)
    p95 = wall[min(len(wall) - 1, int(0.95 * len(wall)))]
    return (
        f"p50 {statistics.median(wall) * 1e3:7.2f} ms  p95 {p95 * 1e3:7.2f} ms"
        f"  CPU p50 {statistics.median(cpu) * 1e3:6.2f} ms"
    )


class Clock:
    """Times one query by the wall clock and by the process's CPU time (every thread's: the
    event loop's, the database's, the embedder's), which a machine shared with other work
    does not inflate."""

    def __init__(self) -> None:
        self.times: Timings = ([], [])

    def __enter__(self) -> None:
        self._began = (time.perf_counter(), time.process_time())

    def __exit__(self, *_: object) -> None:
        self.times[0].append(time.perf_counter() - self._began[0])
        self.times[1].append(time.process_time() - self._began[1])


def open_bench_index(tmp: Path, embedder: str, dsn: str | None) -> TextIndex:
    """SQLite in `tmp`, or Postgres at `dsn` (a table of its own) with Qdrant's local mode."""
    if dsn is None:
        return SQLiteTextIndex(tmp / "latency.db", embedder)
    name = f"latency_{os.getpid()}_{int(time.time())}"
    return PostgresQdrantIndex(dsn, embedder, qdrant_path=str(tmp / "qdrant"), name=name)


async def replica_reads(
    index: PostgresQdrantIndex, tmp: Path, embedder: str, queries: list[str]
) -> None:
    """What a second index on the same table (another replica) pays: its read ahead when it
    opens, and its first keyword search after the first index wrote one record (the search
    reads the collection's record versions and the changed record: `PgPostings.catch_up`)."""
    replica = PostgresQdrantIndex(
        index.dsn, embedder, qdrant_path=str(tmp / "replica"), name=index.name
    )
    began = time.perf_counter(), time.process_time()
    held = await replica.warm_postings()
    print(
        f"  a replica opening the table reads {held:,} postings ahead in"
        f" {time.perf_counter() - began[0]:.2f} s ({time.process_time() - began[1]:.2f} s CPU)"
    )
    caught = Clock()
    for n, query in enumerate(queries[:20]):
        await index.write([Record(f"replica-{n}", query)])
        with caught:
            await replica.keyword_search(query, limit=10)
    print(f"  its first keyword search after another writer's write: {percentiles(caught.times)}")
    await replica.close()


@contextmanager
def profiled(on: bool, mode: str) -> Iterator[None]:
    """With `on`, print the functions the block spent its time in (cumulative, top 30)."""
    if not on:
        yield
        return
    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.enable()
    try:
        yield
    finally:
        profile.disable()
        print(f"  -- profile of {mode} --")
        pstats.Stats(profile).sort_stats("cumulative").print_stats(30)


async def toolweave_latency(
    texts: list[str],
    queries: list[str],
    embedder: str,
    dsn: str | None = None,
    profile: bool = False,
) -> dict[str, Timings]:
    with tempfile.TemporaryDirectory() as tmp:
        index = open_bench_index(Path(tmp), embedder, dsn)
        began = time.perf_counter()
        for start in range(0, len(texts), 1_000):
            part = texts[start : start + 1_000]
            await index.write([Record(f"c{start + i}", t) for i, t in enumerate(part)])
        print(f"  ingest: {len(texts) / (time.perf_counter() - began):,.0f} chunks/s")
        if isinstance(index, SQLiteTextIndex):  # past `hnsw_threshold`: wait for the graph
            await index.build_graph()
        assert isinstance(index, SQLiteTextIndex | PostgresQdrantIndex)
        began = time.perf_counter()  # and for the postings read ahead after the writes
        held = await index.warm_postings()
        print(f"  postings read ahead: {held:,} in {time.perf_counter() - began:.2f} s")
        times: dict[str, Timings] = {}
        for mode in MODES:
            await index.search(queries[0], limit=10, mode=mode)  # the first search loads
            clock = Clock()
            with profiled(profile, mode):
                for query in queries:
                    with clock:
                        await index.search(query, limit=10, mode=mode)
            times[mode] = clock.times
        if isinstance(index, PostgresQdrantIndex):
            await replica_reads(index, Path(tmp), embedder, queries)
        await index.close()
    return times


def bm25s_latency(texts: list[str], queries: list[str]) -> Timings:
    import bm25s
    import jieba
    import Stemmer

    stemmer = Stemmer.Stemmer("english")

    def tokens(text: str) -> list[str]:
        if has_cjk(text):
            return [w for w in jieba.cut_for_search(text) if w.strip() and w.isalnum()]
        words = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        vocab = {i: w for w, i in words.vocab.items()}
        return [vocab[i] for i in words.ids[0]]

    engine = bm25s.BM25()
    engine.index([tokens(t) for t in texts], show_progress=False)
    clock = Clock()
    for query in queries:
        with clock:
            engine.retrieve([tokens(query) or ["?"]], k=10, show_progress=False)
    return clock.times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--squad", type=Path, nargs="*", default=[], help="SQuAD-format JSON")
    parser.add_argument("--drcd", type=Path, nargs="*", default=[], help="DRCD JSON files")
    parser.add_argument("--cmrc", type=Path, nargs="*", default=[], help="cmrc2018_dev.json")
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--embedder", default="auto")
    parser.add_argument("--no-peer", action="store_true", help="skip bm25s")
    parser.add_argument("--postgres", action="store_true", help="measure PostgresQdrantIndex")
    parser.add_argument("--dsn", default=None, help="the Postgres server (default: a throwaway)")
    parser.add_argument("--profile", action="store_true", help="print where the time goes")
    args = parser.parse_args()
    folder = Path(os.environ[ENV]) if os.environ.get(ENV) else None
    squad_like = [*args.squad, *args.drcd]
    cmrc = list(args.cmrc)
    if folder and not (squad_like or cmrc):
        squad_like = [p for p in (folder / "squad.json", *folder.glob("DRCD_*.json")) if p.exists()]
        cmrc = [p for p in [folder / "cmrc2018_dev.json"] if p.exists()]
    if not (squad_like or cmrc):
        raise SystemExit(f"point --squad/--drcd/--cmrc (or {ENV}) at the fetched sets")
    paragraphs, questions = read_sets(squad_like, cmrc)
    queries = random.Random(args.seed).sample(questions, min(args.queries, len(questions)))
    print(f"{len(paragraphs):,} paragraphs, {len(queries)} queries, embedder {args.embedder}")
    with ExitStack() as stack:
        dsn = args.dsn
        if args.postgres and dsn is None:
            sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
            from tests.postgres_server import temporary_cluster

            dsn = stack.enter_context(temporary_cluster())
        for size in args.sizes:
            run_size(paragraphs, size, queries, args, dsn)


def run_size(
    paragraphs: list[str], size: int, queries: list[str], args: argparse.Namespace, dsn: str | None
) -> None:
    """Measure `size` texts of `paragraphs` on the index (SQLite, or Postgres at `dsn`)."""
    texts = chunks(paragraphs, size)
    print(f"\n{size:,} texts ({sum(map(len, texts)) / len(texts):.0f} characters on average)")
    results: dict[str, Any] = asyncio.run(
        toolweave_latency(texts, queries, args.embedder, dsn, args.profile)
    )
    if not args.no_peer:
        results["bm25s"] = bm25s_latency(texts, queries)
    for name, times in results.items():
        print(f"  {name:8} {percentiles(times)}", flush=True)


if __name__ == "__main__":
    main()
