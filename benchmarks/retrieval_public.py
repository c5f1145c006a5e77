"""Retrieval quality on public datasets: toolweave's hybrid, keyword and vector search beside
bm25s (PyStemmer for English, jieba for Chinese) and brute-force cosine with the same embedder.

A set written by the people who tune the code cannot show whether the ranking is good, so this
benchmark reads sets nobody here wrote, with one passage (or dialogue turn) per record, so a hit
is unambiguous:
- SQuAD v1.1, the Du et al. (2017) test split: 44 Wikipedia articles, 2,430 paragraphs, 11,877
  questions (`data/test-v1.1.json` of github.com/bloomsburyai/question-generation);
- CMRC 2018 dev: 848 Chinese Wikipedia paragraphs, 3,219 questions
  (`data/cmrc2018_dev.json` of github.com/ymcui/cmrc2018);
- DRCD dev + test: 2,000 Traditional Chinese Wikipedia paragraphs, 7,017 questions
  (`DRCD_dev.json`, `DRCD_test.json` of github.com/DRCKnowledgeTeam/DRCD);
- a BEIR set in BEIR's layout: its folder (`corpus.jsonl`, `queries.jsonl`, `qrels/test.tsv`);
- BEIR SciFact whole (5,183 abstracts with titles, the 300 test claims and their 339
  judgements) from allenai/scifact's CSV export (`data/scifact.zip` of
  github.com/sumithra-p-v/claimverifier);
- NFCorpus test, the authors' files (3,162 medical abstracts, preprocessed by them; BEIR's 323
  test queries and 12,334 judgements): `data/nfcorpus/` of
  github.com/hakimamarullah/medisearch-api;
- LoCoMo: 10 long conversations (one collection each, as memory keeps one per user), the
  questions of categories 1-4 with their evidence turns (`data/locomo10.zip` of
  github.com/snap-research/locomo);
- MADial-Bench: 160 dialogues per language (English, Chinese) recalling memories of two users'
  events, the dialogue before the recalling turn as the query, and the two cross-language pairs
  (`data/` of github.com/hejunqing/MADial-Bench);
- XQuAD: 240 paragraphs, 1,190 questions in English and Chinese, and across
  (github.com/google-deepmind/xquad).
Their text is never committed: fetch the repositories and point the script at the files
(`--squad`, `--cmrc`, `--drcd`, `--beir`, `--scifact`, `--nfcorpus`, `--xquad`, `--locomo`,
`--madial`, or one folder in `TOOLWEAVE_RETRIEVAL_DATA` holding `squad.json`,
`cmrc2018_dev.json`, `DRCD_*.json`, `scifact/` (BEIR's layout), `scifact.zip`, `nfcorpus/`,
`xquad/`, `locomo/` with the unzipped conversation files and `madial/`). The loaders are in
`retrieval_sets.py`.

Questions are subsampled with a fixed seed (`--questions`, `--seed`); every system answers the
same ones. `--half tune` and `--half held-out` split each set's questions in two by a hash of
the question's text (SHA-1, even or odd): the ranking's constants (vector weights, phrase bonus,
stop words) were chosen on the tune half, and the figures in the docs are from the held-out
half, so they are not fitted to the questions they report.

Metrics: nDCG@10 (binary relevance), hit@1, hit@5, MRR@10 (first relevant record), recall@5 and
recall@10 (share of the relevant records found; on LoCoMo and BEIR a question has one or more).
The hybrid's difference from every other system comes with a 95% bootstrap interval.
`--sweep` also re-fuses toolweave's own keyword and vector candidates (50 each) at several
vector weights, the measurement behind the weights in `toolweave.storage.retrieval.fusion`,
and by reciprocal rank fusion (ties by id), the previous default.

`--per-user-stores` runs `MemoryManager.search` on LoCoMo twice: the ten users in one shared
store, and each in a store of its own (what per-collection statistics must make equal).

`--backend scale` runs the same sets on Postgres (a temporary cluster, as the tests start one)
+ Qdrant's local mode.

Run: .venv/bin/python benchmarks/retrieval_public.py --squad PATH --cmrc PATH --locomo DIR
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import logging
import math
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from retrieval_sets import (
    Dataset,
    load_beir,
    load_cmrc,
    load_drcd,
    load_locomo,
    load_madial,
    load_nfcorpus,
    load_scifact,
    load_squad,
    load_xquad,
)

from toolweave.memory import MemoryManager
from toolweave.storage.retrieval import (
    FUSION_POOL,
    IndexSettings,
    Record,
    fuse_hits,
    open_index,
    phrase_boost,
    reciprocal_rank_fusion,
)
from toolweave.storage.retrieval.embedders import Embedder, load_embedder
from toolweave.storage.retrieval.fusion import agreed_weight
from toolweave.storage.retrieval.index import SearchMode
from toolweave.storage.text import has_cjk

K = 10
MODES: tuple[SearchMode, ...] = ("hybrid", "keyword", "vector")
SWEEP = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0)
ENV = "TOOLWEAVE_RETRIEVAL_DATA"


HALVES = {"tune": 0, "held-out": 1}


def in_half(question: str, half: str) -> bool:
    """Whether `question` belongs to `half` ("all", "tune" or "held-out")."""
    if half == "all":
        return True
    return int(hashlib.sha1(question.encode()).hexdigest(), 16) % 2 == HALVES[half]


def metrics(ranked: Sequence[str], relevant: set[str]) -> dict[str, float]:
    first = next((i for i, r in enumerate(ranked[:K], start=1) if r in relevant), None)
    gains = sum(1.0 / math.log2(i + 1) for i, r in enumerate(ranked[:K], start=1) if r in relevant)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(relevant), K) + 1))
    return {
        "nDCG@10": gains / ideal,
        "hit@1": float(bool(ranked) and ranked[0] in relevant),
        "hit@5": float(first is not None and first <= 5),
        "MRR@10": 1.0 / first if first else 0.0,
        "R@5": len(relevant & set(ranked[:5])) / len(relevant),
        "R@10": len(relevant & set(ranked[:K])) / len(relevant),
    }


def mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: sum(r[key] for r in rows) / len(rows) for key in rows[0]}


# -- baselines --------------------------------------------------------------------------------


def _tokens(texts: Sequence[str], chinese: bool) -> list[list[str]]:
    if chinese:
        import jieba

        return [[w for w in jieba.cut_for_search(t) if w.strip() and w.isalnum()] for t in texts]
    import bm25s
    import Stemmer

    tokenized = bm25s.tokenize(
        list(texts), stopwords="en", stemmer=Stemmer.Stemmer("english"), show_progress=False
    )
    vocab = {index: word for word, index in tokenized.vocab.items()}
    return [[vocab[i] for i in ids] for ids in tokenized.ids]


def bm25s_rankings(dataset: Dataset, asked: list[tuple[str, str, set[str]]]) -> list[list[str]]:
    import bm25s

    chinese = has_cjk("".join(t for p in dataset.collections.values() for _, t in p[:20]))
    engines = {}
    for name, passages in dataset.collections.items():
        engine = bm25s.BM25()
        engine.index(_tokens([t for _, t in passages], chinese), show_progress=False)
        engines[name] = (engine, [i for i, _ in passages])
    out = []
    for collection, question, _ in asked:
        engine, ids = engines[collection]
        query = _tokens([question], chinese)[0] or ["?"]
        k = min(K, len(ids))
        docs, _ = engine.retrieve([query], k=k, show_progress=False)
        out.append([ids[int(d)] for d in docs[0]])
    return out


def cosine_rankings(
    dataset: Dataset, asked: list[tuple[str, str, set[str]]], embedder: Embedder
) -> list[list[str]]:
    import numpy as np

    matrices = {}
    for name, passages in dataset.collections.items():
        vectors = np.asarray(embedder.embed([t for _, t in passages]), np.float32)
        matrices[name] = (vectors, [i for i, _ in passages])
    queries = np.asarray(embedder.embed([q for _, q, _ in asked]), np.float32)
    out = []
    for (collection, _, _), query in zip(asked, queries, strict=True):
        vectors, ids = matrices[collection]
        scores = vectors @ query
        out.append([ids[i] for i in np.argsort(-scores, kind="stable")[:K]])
    return out


class RememberingEmbedder:
    """`embedder` with each text's vector kept, so the brute-force cosine baseline reuses the
    vectors the index computed (a slow embedder's corpus is embedded once per set)."""

    def __init__(self, embedder: Embedder) -> None:
        self._embedder = embedder
        self._vectors: dict[str, Any] = {}

    @property
    def name(self) -> str:
        return self._embedder.name

    @property
    def dim(self) -> int:
        return self._embedder.dim

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            self._vectors.update(zip(missing, self._embedder.embed(missing), strict=True))
        return np.asarray([self._vectors[t] for t in texts], np.float32).reshape(-1, self.dim)


# -- toolweave --------------------------------------------------------------------------------


@contextmanager
def backend(name: str) -> Iterator[dict[str, Any]]:
    """`IndexSettings` arguments for the embedded backend, or for Postgres (a temporary
    cluster, the tests' `temporary_cluster`) + Qdrant's local mode."""
    if name == "sqlite":
        yield {}
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.postgres_server import temporary_cluster

    with temporary_cluster() as dsn, tempfile.TemporaryDirectory() as qdrant:
        yield {"dsn": dsn, "qdrant_path": qdrant}


async def toolweave_rankings(
    dataset: Dataset,
    asked: list[tuple[str, str, set[str]]],
    embedder: Embedder,
    sweep: bool,
    where: dict[str, Any],
) -> tuple[dict[str, list[list[str]]], dict[str, list[list[str]]], float]:
    """Every question in each mode (and re-fused, with `sweep`); `where` holds the backend's
    `IndexSettings` arguments and the index name."""
    settings = IndexSettings(**{k: v for k, v in where.items() if k != "name"})
    with tempfile.TemporaryDirectory() as tmp:
        index: Any = open_index(
            Path(tmp) / "bench.db", embedder, name=where["name"], settings=settings
        )
        began = time.perf_counter()
        for name, passages in dataset.collections.items():
            for start in range(0, len(passages), 500):
                batch = passages[start : start + 500]
                await index.write([Record(i, t, {}, name) for i, t in batch])
        ingest = time.perf_counter() - began
        modes: dict[str, list[list[str]]] = {m: [] for m in MODES}
        swept: dict[str, list[list[str]]] = {f"vector weight {w}": [] for w in SWEEP}
        swept["reciprocal rank fusion, k = 60"] = []
        for collection, question, _ in asked:
            for mode in MODES:
                hits = await index.search(question, limit=K, collection=collection, mode=mode)
                modes[mode].append([h.record.id for h in hits])
            if sweep:
                args: dict[str, Any] = {"limit": FUSION_POOL, "collection": collection}
                keyword = phrase_boost(
                    question, await index.keyword_search(question, where=None, **args)
                )
                vector = await index.vector_search(question, where=None, **args)
                for weight in SWEEP:
                    agreed = agreed_weight(weight, keyword, vector)
                    fused = fuse_hits(keyword, vector, K, weight=agreed)
                    swept[f"vector weight {weight}"].append([h.record.id for h in fused])
                rrf = reciprocal_rank_fusion(
                    [[h.record.id for h in side] for side in (keyword, vector)]
                )
                best = sorted(rrf, key=lambda key: (-rrf[key], key))[:K]
                swept["reciprocal rank fusion, k = 60"].append(best)
        await index.close()
    return modes, swept, ingest


async def memory_rankings(
    dataset: Dataset,
    asked: list[tuple[str, str, set[str]]],
    embedder: Embedder,
    where: dict[str, Any],
    per_user: bool,
) -> list[list[str]]:
    """`MemoryManager.search` (its default hybrid and tie-break), each conversation a user of
    one shared store (or, `per_user`, of a store of its own), each turn an episodic memory."""
    with tempfile.TemporaryDirectory() as tmp:
        stores: dict[str, MemoryManager] = {}
        turn_of: dict[str, str] = {}
        for name, turns in dataset.collections.items():
            store = f"memory_{len(stores)}.db" if per_user else "memory.db"
            if per_user or not stores:
                manager = MemoryManager(
                    Path(tmp) / store, embedder=embedder, index=IndexSettings(**where)
                )
            stores[name] = manager
            user = manager.for_user(name)
            ids = await user.add_many({"content": t, "memory_type": "episodic"} for _, t in turns)
            for memory_id, (turn, _) in zip(ids, turns, strict=True):
                turn_of.setdefault(memory_id, turn)
        out = []
        for collection, question, _ in asked:
            hits = await stores[collection].for_user(collection).search(question, limit=K)
            out.append([turn_of[h.item.id] for h in hits])
        for manager in dict.fromkeys(stores.values()):
            await manager.close()
    return out


def paired_difference(
    ours: list[dict[str, float]], theirs: list[dict[str, float]], key: str, resamples: int = 2000
) -> tuple[float, float, float]:
    """Mean of `ours - theirs` on `key` over the same questions, with a 95% bootstrap interval
    (the questions resampled `resamples` times, seed 0)."""
    diffs = [a[key] - b[key] for a, b in zip(ours, theirs, strict=True)]
    rng = random.Random(0)
    means = sorted(
        sum(diffs[rng.randrange(len(diffs))] for _ in diffs) / len(diffs) for _ in range(resamples)
    )
    return sum(diffs) / len(diffs), means[resamples // 40], means[resamples - resamples // 40 - 1]


def _row(label: str, values: dict[str, float]) -> str:
    return f"| {label} | " + " | ".join(f"{values[k]:.3f}" for k in values) + " |"


def run(args: argparse.Namespace) -> None:
    with backend(args.backend) as where:
        run_sets(args, where)


def run_sets(args: argparse.Namespace, where: dict[str, Any]) -> None:
    base = Path(os.environ[ENV]) if os.environ.get(ENV) else None
    sources = {
        "squad": (args.squad or (base and base / "squad.json"), load_squad),
        "cmrc": (args.cmrc or (base and base / "cmrc2018_dev.json"), load_cmrc),
        "drcd": (
            args.drcd or (base and sorted(base.glob("DRCD_*.json"))) or None,
            load_drcd,
        ),
        "beir": (args.beir or (base and base / "scifact"), load_beir),
        "scifact": (args.scifact or (base and base / "scifact.zip"), load_scifact),
        "nfcorpus": (args.nfcorpus or (base and base / "nfcorpus"), load_nfcorpus),
        "xquad": (args.xquad or (base and base / "xquad"), load_xquad),
        "locomo": (args.locomo or (base and base / "locomo"), load_locomo),
        "madial": (args.madial or (base and base / "madial"), load_madial),
    }
    for noisy in ("jieba", "bm25s"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    embedder = load_embedder(args.embedder)
    print(
        f"backend {args.backend}, embedder {embedder.name};"
        f" {args.questions} questions per set ({args.half}), seed {args.seed}\n"
    )
    for key, (path, loader) in sources.items():
        paths = path if isinstance(path, list) else [path]
        if path is None or not all(Path(p).exists() for p in paths):
            print(f"{key}: no data (pass --{key.replace('_', '-')} or set {ENV}); skipped\n")
            continue
        loaded = loader(path if isinstance(path, list) else Path(path))
        for dataset in loaded if isinstance(loaded, list) else [loaded]:
            run_set(args, where, key, dataset, embedder)


def run_set(
    args: argparse.Namespace,
    where: dict[str, Any],
    key: str,
    dataset: Dataset,
    embedder: Embedder,
) -> None:
    embedder = RememberingEmbedder(embedder)
    pool = [q for q in dataset.questions if in_half(q[1], args.half)]
    asked = random.Random(args.seed).sample(pool, min(args.questions, len(pool)))
    records = sum(len(p) for p in dataset.collections.values())
    cjk = sum(has_cjk(q) for _, q, _ in asked)
    print(f"## {dataset.name}: {records} records, {len(asked)} of {len(pool)} questions")
    print(f"({args.half} half of {len(dataset.questions)}; {cjk} with CJK); {dataset.source}\n")
    began = time.perf_counter()
    args_for = {**where, "name": f"bench_{key}"}
    modes, swept, ingest = asyncio.run(
        toolweave_rankings(dataset, asked, embedder, args.sweep, args_for)
    )
    searched = time.perf_counter() - began - ingest
    rankings = {f"toolweave {m}": modes[m] for m in MODES}
    if len(dataset.collections) > 1:
        for per_user in (False, True) if args.per_user_stores else (False,):
            memory = asyncio.run(memory_rankings(dataset, asked, embedder, where, per_user))
            label = "a store per user" if per_user else "one shared store"
            rankings[f"toolweave MemoryManager.search, {label}"] = memory
    rankings["bm25s (stemmer / jieba)"] = bm25s_rankings(dataset, asked)
    rankings[f"cosine ({embedder.name}, brute force)"] = cosine_rankings(dataset, asked, embedder)
    print("| system | nDCG@10 | hit@1 | hit@5 | MRR@10 | R@5 | R@10 |")
    print("|---|---|---|---|---|---|---|")
    scored = {
        label: [metrics(r, q[2]) for r, q in zip(ranked, asked, strict=True)]
        for label, ranked in rankings.items()
    }
    for label, rows in scored.items():
        print(_row(label, mean(rows)))
    if args.sweep:
        for label, ranked in swept.items():
            rows = [metrics(r, q[2]) for r, q in zip(ranked, asked, strict=True)]
            print(_row(f"re-fused, {label}", mean(rows)))
    print("\nhybrid minus each other system on the same questions (95% bootstrap interval):")
    for label, rows in scored.items():
        if label != "toolweave hybrid":
            parts = [
                "{} {:+.3f} ({:+.3f}..{:+.3f})".format(
                    key, *paired_difference(scored["toolweave hybrid"], rows, key)
                )
                for key in ("nDCG@10", "hit@1", "R@10")
            ]
            print(f"- {label}: " + ", ".join(parts))
    print(f"\ningest {ingest:.1f} s, toolweave searches {searched:.1f} s\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--squad", type=Path, help="SQuAD-format JSON (test-v1.1.json)")
    parser.add_argument("--cmrc", type=Path, help="cmrc2018_dev.json")
    parser.add_argument("--drcd", type=Path, nargs="*", help="DRCD_dev.json, DRCD_test.json")
    parser.add_argument("--beir", type=Path, help="a BEIR set's folder (scifact)")
    parser.add_argument(
        "--scifact", type=Path, help="allenai/scifact's CSV export (scifact.zip or its folder)"
    )
    parser.add_argument(
        "--nfcorpus", type=Path, help="NFCorpus's folder (test.docs, test.titles.queries, ...)"
    )
    parser.add_argument("--xquad", type=Path, help="folder with xquad.en.json, xquad.zh.json")
    parser.add_argument("--locomo", type=Path, help="folder of LoCoMo conversation JSON files")
    parser.add_argument("--madial", type=Path, help="MADial-Bench's data folder (en/, ch/)")
    parser.add_argument("--questions", type=int, default=300, help="questions per set")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--embedder", default="auto")
    parser.add_argument(
        "--backend", choices=("sqlite", "scale"), default="sqlite", help="scale: Postgres + Qdrant"
    )
    parser.add_argument(
        "--half", choices=("all", *HALVES), default="all", help="which half of the questions"
    )
    parser.add_argument("--sweep", action="store_true", help="re-fuse at several weights")
    parser.add_argument(
        "--per-user-stores",
        action="store_true",
        help="MemoryManager.search also with a store per user beside the shared one",
    )
    run(parser.parse_args())


if __name__ == "__main__":
    main()
