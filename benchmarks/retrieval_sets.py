"""The public sets of `retrieval_public.py`, read from the files of their fetched repositories
(never committed): each becomes collections of (id, text) records and questions with the ids of
the records that answer them.

- SQuAD v1.1 (`load_squad`): Wikipedia paragraphs, one answering paragraph per question (each
  SQuAD-format set keeps its paragraphs' article titles, `Dataset.titles`);
- XQuAD (`load_xquad`): SQuAD paragraphs and questions in English and Chinese, and across;
- DRCD (`load_drcd`, SQuAD format): Traditional Chinese Wikipedia paragraphs
  (`DRCD_dev.json` and `DRCD_test.json` of github.com/DRCKnowledgeTeam/DRCD), a Chinese
  reading-comprehension set besides CMRC;
- CMRC 2018 dev (`load_cmrc`): Simplified Chinese Wikipedia paragraphs;
- BEIR (`load_beir`): a corpus.jsonl / queries.jsonl / qrels/test.tsv folder (SciFact and the
  other BEIR sets), title and text of a document one record, graded relevance kept as a set;
- a SciFact subset (`load_scifact_subset`), where no mirror holds BEIR's whole corpus: the
  2,101 SciFact abstracts of 9-25 sentences that github.com/nice-hku-coder/coder_data keeps
  (`scifact_antonym/corpus_candidate.jsonl`, text without titles) and the claims of BEIR's
  SciFact test and train qrels (`scifact/queries.jsonl`, `scifact/qrels/*.tsv` of
  github.com/Kirloxious/CSI4107_Assignment2) whose relevant abstracts are all among them;
- LoCoMo (`load_locomo`): long conversations, one collection each, questions with their
  evidence turns;
- MADial-Bench (`load_madial`): memories of two users' events, English and Chinese, recalled
  from the dialogue before the turn that recalls them (long conversational queries), and across
  the two languages.
"""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path
from typing import Any


@dataclasses.dataclass
class Dataset:
    name: str
    source: str
    collections: dict[str, list[tuple[str, str]]]  # collection -> (id, text)
    questions: list[tuple[str, str, set[str]]]  # (collection, question, relevant ids)
    titles: dict[str, str] = dataclasses.field(default_factory=dict)
    """The title of each record that has one (a SQuAD-format article's, spaces for `_`)."""


def _squad_format(path: Path, collection: str) -> Dataset:
    """Paragraphs (id: article and paragraph position) and questions of a SQuAD-format file."""
    data = json.loads(path.read_text(encoding="utf-8"))["data"]
    passages, questions, titles = [], [], {}
    for a, article in enumerate(data):
        for p, paragraph in enumerate(article["paragraphs"]):
            pid = f"{a}-{p}"
            passages.append((pid, paragraph["context"]))
            titles[pid] = _title(article)
            questions += [(collection, qa["question"], {pid}) for qa in paragraph["qas"]]
    return Dataset("", str(path), {collection: passages}, questions, titles)


def _title(article: dict[str, Any]) -> str:
    """A SQuAD-format article's title as a person writes it ("Super_Bowl_50": "Super Bowl 50")."""
    return str(article.get("title", "")).replace("_", " ").strip()


def load_squad(path: Path) -> Dataset:
    return dataclasses.replace(
        _squad_format(path, "squad"), name="SQuAD v1.1 (Du et al. test split)"
    )


def load_xquad(folder: Path) -> list[Dataset]:
    """XQuAD (github.com/google-deepmind/xquad: 240 paragraphs of SQuAD's dev set, 1,190
    questions, translated by professionals, aligned across languages): English, Chinese, and
    the cross-language pairs (English questions over the Chinese paragraphs and the reverse)."""
    en = _squad_format(folder / "xquad.en.json", "xquad")
    zh = _squad_format(folder / "xquad.zh.json", "xquad")
    return [
        dataclasses.replace(en, name="XQuAD English"),
        dataclasses.replace(zh, name="XQuAD Chinese"),
        dataclasses.replace(
            zh,
            name="XQuAD en->zh (English questions, Chinese paragraphs)",
            questions=en.questions,
            source=str(folder),
        ),
        dataclasses.replace(
            en,
            name="XQuAD zh->en (Chinese questions, English paragraphs)",
            questions=zh.questions,
            source=str(folder),
        ),
    ]


def load_cmrc(path: Path) -> Dataset:
    data = json.loads(path.read_text(encoding="utf-8"))
    passages = [(p["context_id"], p["context_text"]) for p in data]
    questions = [("cmrc", qa["query_text"], {p["context_id"]}) for p in data for qa in p["qas"]]
    return Dataset("CMRC 2018 dev", str(path), {"cmrc": passages}, questions)


def load_locomo(folder: Path) -> Dataset:
    collections: dict[str, list[tuple[str, str]]] = {}
    questions = []
    for file in sorted(folder.glob("*.json")):
        conversation = json.loads(file.read_text(encoding="utf-8"))
        name = f"conv_{file.stem}"
        turns = []
        for key, session in conversation.items():
            if key.startswith("session_") and isinstance(session, list):
                for turn in session:
                    text = f"{turn['speaker']}: {turn['text']}"
                    if turn.get("blip_caption"):
                        text += f" [shares {turn['blip_caption']}]"
                    turns.append((turn["dia_id"], text))
        collections[name] = turns
        known = {t[0] for t in turns}
        for qa in conversation["qa"]:
            evidence = {e for e in qa.get("evidence", []) if e in known}
            if qa.get("category") != 5 and evidence:
                questions.append((name, str(qa["question"]), evidence))
    return Dataset("LoCoMo (categories 1-4)", str(folder), collections, questions)


def load_drcd(paths: list[Path]) -> Dataset:
    """DRCD's files (SQuAD format, Traditional Chinese), their paragraphs one collection."""
    passages, questions, titles = [], [], {}
    for path in paths:
        for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
            for paragraph in article["paragraphs"]:
                pid = str(paragraph["id"])
                passages.append((pid, paragraph["context"]))
                titles[pid] = _title(article)
                questions += [("drcd", qa["question"], {pid}) for qa in paragraph["qas"]]
    source = ", ".join(str(p) for p in paths)
    return Dataset("DRCD (Traditional Chinese)", source, {"drcd": passages}, questions, titles)


def load_beir(folder: Path) -> Dataset:
    """A BEIR set: its corpus (title and text one record), the test queries that have
    relevance labels, and the documents labelled relevant (score > 0)."""
    passages = []
    with (folder / "corpus.jsonl").open(encoding="utf-8") as corpus:
        for line in corpus:
            doc = json.loads(line)
            text = f"{doc.get('title', '')}\n{doc['text']}".strip()
            passages.append((str(doc["_id"]), text))
    queries = {}
    with (folder / "queries.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            query = json.loads(line)
            queries[str(query["_id"])] = query["text"]
    relevant: dict[str, set[str]] = {}
    with (folder / "qrels" / "test.tsv").open(encoding="utf-8") as qrels:
        for row in csv.DictReader(qrels, delimiter="\t"):
            if int(row["score"]) > 0:
                relevant.setdefault(row["query-id"], set()).add(row["corpus-id"])
    name = folder.name
    questions = [(name, queries[q], docs) for q, docs in sorted(relevant.items())]
    return Dataset(f"BEIR {name} (test)", str(folder), {name: passages}, questions)


def load_scifact_subset(folder: Path) -> Dataset:
    """`folder` holds corpus_candidate.jsonl, queries.jsonl and qrels/{test,train}.tsv (see the
    module's docstring); a qrels row's ids are the last word of their column (the test file
    writes "<query>\t 0 <doc>\t1")."""
    passages = [
        (str(d["doc_id"]), d["text"]) for d in _json_lines(folder / "corpus_candidate.jsonl")
    ]
    held = {id_ for id_, _ in passages}
    queries = {str(q["_id"]): q["text"] for q in _json_lines(folder / "queries.jsonl")}
    relevant: dict[str, set[str]] = {}
    for split in ("test", "train"):
        with (folder / "qrels" / f"{split}.tsv").open(encoding="utf-8") as qrels:
            for row in list(csv.reader(qrels, delimiter="\t"))[1:]:
                if int(row[2]) > 0:
                    relevant.setdefault(row[0].split()[-1], set()).add(row[1].split()[-1])
    questions = [
        ("scifact", queries[q], docs) for q, docs in sorted(relevant.items()) if docs <= held
    ]
    return Dataset(
        "SciFact subset (BEIR test + train claims)", str(folder), {"scifact": passages}, questions
    )


def _json_lines(path: Path) -> list[dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _madial(folder: Path, language: str) -> tuple[dict[str, str], list[dict[str, Any]]]:
    """One language's memories (id -> event) and dialogues of MADial-Bench's `data` folder."""
    sub, tag = {"en": ("en", "en"), "zh": ("ch", "zh")}[language]
    memories = {}
    for line in _json_lines(folder / sub / f"MADial-Bench-{tag}-memory.json"):
        for key, memory in line.items():
            memories[str(key)] = memory["event"]
    return memories, _json_lines(folder / sub / f"MADial-Bench-{tag}-dialogue.json")


def load_madial(folder: Path) -> list[Dataset]:
    """MADial-Bench (github.com/hejunqing/MADial-Bench, its `data` folder): 160 dialogues per
    language, each with the memories (about five) the assistant's recalling turn draws on.
    The question is the dialogue before that turn (its first `test-turn`), 90-400 words; the
    records are the events of the dialogue's user (a collection per user, as memory keeps one
    per user; the English memories have no user field and take the Chinese ones', their ids
    are aligned). English, Chinese, and the cross-language pairs."""
    memories = {language: _madial(folder, language) for language in ("en", "zh")}
    owner = {}
    for line in _json_lines(folder / "ch" / "MADial-Bench-zh-memory.json"):
        for key, memory in line.items():
            owner[str(key)] = f"user_{memory['user-id']}"
    sets = {}
    for language, (events, dialogues) in memories.items():
        collections: dict[str, list[tuple[str, str]]] = {}
        for key, event in events.items():
            collections.setdefault(owner[key], []).append((key, event))
        questions = []
        for dialogue in dialogues:
            turns = dialogue["dialogue"][1 : dialogue["test-turn"][0]]
            question = "".join(turn for turn in turns if turn.strip() != "<BOD>").strip()
            relevant = {str(i) for i in dialogue["relevant-id"] if str(i) in events}
            questions.append((f"user_{dialogue['user-id']}", question, relevant))
        sets[language] = (collections, questions)
    name = "MADial-Bench {} (dialogue memory)"
    out = [
        Dataset(name.format(language), str(folder), collections, questions)
        for language, (collections, questions) in sets.items()
    ]
    for asked, held in (("en", "zh"), ("zh", "en")):
        out.append(
            Dataset(
                f"MADial-Bench {asked}->{held} ({asked} dialogues, {held} memories)",
                str(folder),
                sets[held][0],
                [
                    (c, q, r & {i for p in sets[held][0].values() for i, _ in p})
                    for c, q, r in sets[asked][1]
                ],
            )
        )
    return out
