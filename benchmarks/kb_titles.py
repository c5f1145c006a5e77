"""What a document's title costs the knowledge base and what it does for search, on public sets
whose passages have titles: each paragraph added through `KnowledgeBase.add_texts` as a document
titled with its Wikipedia article's title, then the sets' questions searched.

Sets (fetched, never committed; the loaders of `retrieval_sets.py`, which keep the titles):
- XQuAD English and Chinese (github.com/google-deepmind/xquad, `xquad.en.json`,
  `xquad.zh.json`): 240 paragraphs of 48 articles, 1,190 questions; the Chinese file keeps
  SQuAD's English titles;
- DRCD dev + test (github.com/DRCKnowledgeTeam/DRCD): 2,000 Traditional Chinese paragraphs of
  761 articles (Chinese titles), 7,017 questions.

Per set: the texts the embedder was asked for per document (`embeddings/doc`; one per chunk,
plus one per document while each title was a record of its own), ingest documents per second
(wall and CPU seconds of the process), nDCG@10 and hit@1 in each search mode (a hit is the
paragraph that answers, its document's first chunk in the ranking), and the hybrid search's
p50 and p95 (wall and CPU milliseconds per query), each with the one-minute load average
(`os.getloadavg`, at its start and end) beside it.

`--out FILE` keeps every question's scores; `--compare FILE` (a run of another version, the same
sets, seed and questions) prints this run's difference on each set with a 95% bootstrap
interval. Before/after: run the same script once with another checkout's `src` first on
`PYTHONPATH`.

The files are found as `retrieval_public.py` finds them: `--xquad`, `--drcd`, or `xquad/` and
`DRCD_*.json` in the folder `TOOLWEAVE_RETRIEVAL_DATA` names; without them it says so and stops.

Run: .venv/bin/python benchmarks/kb_titles.py --xquad DIR --drcd DRCD_dev.json DRCD_test.json
     [--backend sqlite|scale] [--questions 300] [--out after.json] [--compare before.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from retrieval_public import ENV, MODES, backend, mean, metrics, paired_difference
from retrieval_sets import Dataset, load_drcd, load_xquad

from toolweave.kb import KnowledgeBase
from toolweave.storage.retrieval import IndexSettings
from toolweave.storage.retrieval.embedders import Embedder, load_embedder

K = 10
BATCH = 500
"""Documents per `add_texts` call (one write each)."""


class Counted:
    """The embedder, counting the texts it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.texts = inner, 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts += len(texts)
        return self.inner.embed(texts)


def percentile(values: list[float], share: float) -> float:
    return sorted(values)[min(len(values) - 1, int(share * len(values)))]


async def run_set(
    dataset: Dataset, embedder: Embedder, where: dict[str, Any], asked: int, seed: int, n: int
) -> dict[str, Any]:
    """Ingest `dataset` as titled documents into a store of its own (index `n`, on a shared
    Postgres), then answer `asked` of its questions."""
    ((collection, passages),) = dataset.collections.items()
    counted = Counted(embedder)
    questions = [q for q in dataset.questions if q[0] == collection]
    questions = random.Random(seed).sample(questions, min(asked, len(questions)))
    with tempfile.TemporaryDirectory() as tmp:
        kb = KnowledgeBase(
            Path(tmp) / "kb.db",
            counted,  # type: ignore[arg-type]
            index=IndexSettings(**where),
            index_name=f"kb_titles_{n}",
        )
        ingest_load = os.getloadavg()[0]
        wall, cpu = time.perf_counter(), time.process_time()
        for start in range(0, len(passages), BATCH):
            batch = passages[start : start + BATCH]
            items = [{"text": t, "title": dataset.titles[i], "doc_id": i} for i, t in batch]
            await kb.add_texts(items)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        embedded = counted.texts  # searches embed their queries too
        ingest_load = (ingest_load + os.getloadavg()[0]) / 2
        warm = getattr(kb.index, "warm_postings", None)
        if warm is not None:  # a store a moment after the write (retrieval_latency waits too)
            await warm()
        stats = await kb.stats()
        scores: dict[str, list[dict[str, float]]] = {m: [] for m in MODES}
        walls, cpus = [], []
        load = os.getloadavg()[0]
        for _, question, relevant in questions:
            for mode in MODES:
                began, began_cpu = time.perf_counter(), time.process_time()
                hits = await kb.search(question, k=K, mode=mode)
                if mode == "hybrid":
                    walls.append(1000 * (time.perf_counter() - began))
                    cpus.append(1000 * (time.process_time() - began_cpu))
                ranked = list(dict.fromkeys(h.doc_id for h in hits))
                scores[mode].append(metrics(ranked, relevant))
        await kb.close()
    load = (load + os.getloadavg()[0]) / 2
    return {
        "set": dataset.name,
        "documents": len(passages),
        "chunks": stats["chunks"],
        "embeddings/doc": embedded / len(passages),
        "ingest docs/s": len(passages) / wall,
        "ingest CPU ms/doc": 1000 * cpu / len(passages),
        "ingest load": ingest_load,
        "questions": len(questions),
        **{f"{m} nDCG@10": mean(scores[m])["nDCG@10"] for m in MODES},
        **{f"{m} hit@1": mean(scores[m])["hit@1"] for m in MODES},
        "hybrid p50 ms": statistics.median(walls),
        "hybrid p95 ms": percentile(walls, 0.95),
        "hybrid CPU p50 ms": statistics.median(cpus),
        "search load": load,
        "scores": scores,
    }


def compare(results: list[dict[str, Any]], before: list[dict[str, Any]]) -> None:
    """This run minus `before` on each set: nDCG@10 per mode with a 95% bootstrap interval."""
    earlier = {r["set"]: r for r in before}
    for result in results:
        other = earlier.get(result["set"])
        if other is None:
            continue
        print(f"\n{result['set']}: this run minus the compared one")
        for mode in MODES:
            diff, low, high = paired_difference(
                result["scores"][mode], other["scores"][mode], "nDCG@10"
            )
            print(f"  {mode} nDCG@10 {diff:+.4f} ({low:+.4f}..{high:+.4f})")
        for key in ("embeddings/doc", "ingest docs/s", "hybrid p50 ms", "hybrid CPU p50 ms"):
            print(f"  {key}: {other[key]:.2f} -> {result[key]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--xquad", type=Path, help="folder with xquad.en.json, xquad.zh.json")
    parser.add_argument("--drcd", type=Path, nargs="*", default=[], help="DRCD_*.json files")
    parser.add_argument("--backend", choices=("sqlite", "scale"), default="sqlite")
    parser.add_argument("--embedder", default="auto")
    parser.add_argument("--questions", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", type=Path)
    args = parser.parse_args()
    base = Path(os.environ[ENV]) if os.environ.get(ENV) else None
    xquad = args.xquad or (base and base / "xquad")
    drcd = args.drcd or (base and sorted(base.glob("DRCD_*.json")))
    sets = load_xquad(xquad)[:2] if xquad and xquad.exists() else []
    if drcd:
        sets.append(load_drcd(drcd))
    if not sets:
        print(f"no data (pass --xquad and --drcd, or set {ENV}); skipped")
        return
    embedder = load_embedder(args.embedder)
    results = []
    with backend(args.backend) as where:
        for n, dataset in enumerate(sets):
            result = asyncio.run(run_set(dataset, embedder, where, args.questions, args.seed, n))
            results.append(result)
            shown = {k: v for k, v in result.items() if k != "scores"}
            print(json.dumps(shown, ensure_ascii=False, indent=1), flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, ensure_ascii=False), encoding="utf-8")
    if args.compare:
        compare(results, json.loads(args.compare.read_text(encoding="utf-8")))


if __name__ == "__main__":
    main()
