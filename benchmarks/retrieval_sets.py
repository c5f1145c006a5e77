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
- BEIR SciFact whole (`load_scifact`): the Hugging Face export of allenai/scifact as CSV
  files (`corpus_train.csv`: the 5,183 abstracts, sentences as a printed array;
  `claims_validation.csv`: the 300 claims with their cited abstracts), which
  github.com/sumithra-p-v/claimverifier commits as `data/scifact.zip`; its claims and cited
  abstracts are BEIR SciFact's test queries and qrels (the same 300 texts and 339 pairs);
- NFCorpus as its authors distribute it (`load_nfcorpus`: `data/nfcorpus/` of
  github.com/hakimamarullah/medisearch-api, the archive of www.cl.uni-heidelberg.de's
  NFCorpus): the test split's 3,162 medical abstracts (text lower-cased, stop words and
  numbers removed by the authors), its 323 title queries (lower-cased) and their 12,334 graded
  judgements (`test.2-1-0.qrel`), which are BEIR NFCorpus's test queries and qrels; BEIR's
  corpus also holds the other splits' abstracts (3,633) in their original text;
- LoCoMo (`load_locomo`): long conversations, one collection each, questions with their
  evidence turns;
- MADial-Bench (`load_madial`): memories of two users' events, English and Chinese, recalled
  from the dialogue before the turn that recalls them (long conversational queries), and across
  the two languages.
"""

from __future__ import annotations

import ast
import csv
import dataclasses
import io
import json
import sys
import tokenize
import zipfile
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


def load_scifact(path: Path) -> Dataset:
    """BEIR SciFact's test set from allenai/scifact's CSV export (see the module's docstring):
    `path` is the zip or the folder holding `corpus_train.csv` and `claims_validation.csv`.
    An abstract's sentences are joined by a space, its whitespace collapsed, its title first
    (as `load_beir` writes a document); a claim's relevant abstracts are its `cited_doc_ids`
    (a claim has a row per evidence set: their ids are merged)."""
    csv.field_size_limit(sys.maxsize)
    files = _folder_or_zip(path)
    passages = []
    for row in csv.DictReader(io.StringIO(files["corpus_train.csv"])):
        sentences = (
            ast.literal_eval(token.string)
            for token in tokenize.generate_tokens(io.StringIO(row["abstract"]).readline)
            if token.type == tokenize.STRING
        )
        text = " ".join(" ".join(sentences).split())
        passages.append((row["doc_id"], f"{row['title']}\n{text}".strip()))
    claims: dict[str, str] = {}
    cited: dict[str, set[str]] = {}
    for row in csv.DictReader(io.StringIO(files["claims_validation.csv"])):
        claims[row["id"]] = row["claim"]
        cited.setdefault(row["id"], set()).update(row["cited_doc_ids"].strip("[]").split())
    questions = [("scifact", claims[c], docs) for c, docs in sorted(cited.items()) if docs]
    return Dataset("BEIR SciFact (test)", str(path), {"scifact": passages}, questions)


def load_nfcorpus(folder: Path) -> Dataset:
    """NFCorpus's test split from the authors' files in `folder` (see the module's docstring):
    `test.docs` and `test.titles.queries` (tab-separated id and text), `test.2-1-0.qrel` (TREC
    format: query, 0, document, level); levels 1 and 2 are both relevant here."""

    def rows(name: str) -> list[list[str]]:
        lines = (folder / name).read_text(encoding="utf-8").splitlines()
        return [line.split("\t") for line in lines if line.strip()]

    passages = [(doc, text) for doc, text in rows("test.docs")]
    queries = dict(rows("test.titles.queries"))
    relevant: dict[str, set[str]] = {}
    for query, _, doc, level in (" ".join(r).split() for r in rows("test.2-1-0.qrel")):
        if int(level) > 0:
            relevant.setdefault(query, set()).add(doc)
    questions = [("nfcorpus", queries[q], docs) for q, docs in sorted(relevant.items())]
    return Dataset(
        "NFCorpus test (the authors' files)", str(folder), {"nfcorpus": passages}, questions
    )


def _folder_or_zip(path: Path) -> dict[str, str]:
    """The text of every file (by its name, folders dropped) of a zip or a folder."""
    if path.is_dir():
        return {f.name: f.read_text(encoding="utf-8") for f in path.iterdir() if f.is_file()}
    with zipfile.ZipFile(path) as archive:
        return {
            Path(name).name: archive.read(name).decode("utf-8")
            for name in archive.namelist()
            if not name.endswith("/")
        }


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
