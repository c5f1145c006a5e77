"""The knowledge graph of semantic memory: relation extraction and its traversal.

Relations are stored in the payload of the semantic memory they came from, so a memory and its
edges commit in one transaction and removing the memory removes its edges from every backend
(SQLite rows, Postgres rows). `KnowledgeGraph` is the in-process view built from those rows
(a directed multigraph in dicts, one edge per relation, keyed by memory id): it answers
`related()` and gives semantic search its graph factor (1.0 for a memory about an entity the
query names, 0.5 for one a hop away).

Extraction without a model is a small bilingual heuristic: explicit patterns ("X lives in Y",
"X 住在 Y", "X works at Y", "X 是 Y", ...). With a model configured, the model extracts triples
after the write, off the `add` path.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from toolweave.memory.types import Relation
from toolweave.storage.text import segment

if TYPE_CHECKING:
    from toolweave.llm import Model

GRAPH_NEIGHBOR_SCORE = 0.5
MAX_ENTITY_WORDS = 4
"""Longest entity name, in words, that a query is searched for."""
#: Predicates with one value at a time: a newer fact with another object supersedes the older.
EXCLUSIVE_PREDICATES = frozenset(
    {
        "lives_in",
        "works_at",
        "works_for",
        "located_in",
        "is_married_to",
        "age",
        "role",
        "status",
        "住在",
        "工作于",
        "位于",
        "年龄",
        "职位",
    }
)
_NAME = r"[A-Z][\w.-]*(?: [A-Z][\w.-]*)*"
_OBJECT = r"[\w][\w .'-]*?"
_ENGLISH = [
    (rf"\b({_NAME}) (?:now )?lives in ({_OBJECT})(?=[.,;!?]|$| and )", "lives_in", (" lives in ",)),
    (rf"\b({_NAME}) (?:now )?works at ({_OBJECT})(?=[.,;!?]|$| and )", "works_at", (" works at ",)),
    (
        rf"\b({_NAME}) (?:now )?works for ({_OBJECT})(?=[.,;!?]|$| and )",
        "works_for",
        (" works for ",),
    ),
    (
        rf"\b({_NAME}) is located in ({_OBJECT})(?=[.,;!?]|$| and )",
        "located_in",
        (" is located in ",),
    ),
    (
        rf"\b({_NAME}) is married to ({_OBJECT})(?=[.,;!?]|$| and )",
        "is_married_to",
        (" is married to ",),
    ),
    (
        rf"\b({_NAME}) (?:likes|loves) ({_OBJECT})(?=[.,;!?]|$| and )",
        "likes",
        (" likes ", " loves "),
    ),
    (rf"\b({_NAME}) uses ({_OBJECT})(?=[.,;!?]|$| and )", "uses", (" uses ",)),
    (rf"\b({_NAME}) is (?:a|an|the) ({_OBJECT})(?=[.,;!?]|$| and )", "is_a", (" is a", " is the ")),
]
_HAN = r"[\u4e00-\u9fffA-Za-z0-9]"
_CHINESE = [
    (rf"({_HAN}{{1,12}}?)(?:现在)?(?:住在|居住在)({_HAN}{{1,12}})", "住在", ("住在",)),
    (rf"({_HAN}{{1,12}}?)(?:现在)?在({_HAN}{{1,12}}?)(?:工作|上班)", "工作于", ("工作", "上班")),
    (rf"({_HAN}{{1,12}}?)(?:工作于|就职于)({_HAN}{{1,12}})", "工作于", ("工作于", "就职于")),
    (rf"({_HAN}{{1,12}}?)位于({_HAN}{{1,12}})", "位于", ("位于",)),
    (rf"({_HAN}{{1,12}}?)(?:喜欢|爱)({_HAN}{{1,12}})", "喜欢", ("喜欢", "爱")),
    (rf"({_HAN}{{1,12}}?)是(?:一种|一个|一门)?({_HAN}{{1,16}})", "是", ("是",)),
]
_PATTERNS = [
    (re.compile(pattern), predicate, needles) for pattern, predicate, needles in _ENGLISH + _CHINESE
]
"""(pattern, predicate, words one of which the pattern needs): a text holding none of the words
skips the pattern, which saves most of extraction's time (the backtracking over capitalised
names and Han runs) on the semantic memories that state no such fact."""
_EXTRACT_PROMPT = (
    "Extract the facts in the text below as a JSON list of [subject, predicate, object]"
    " triples. Use short snake_case English predicates (lives_in, works_at, likes, is_a, ...)"
    " or the text's own language. Answer with the JSON list only; [] if there are none.\n\n"
)


def extract_relations(text: str) -> list[Relation]:
    """Relations a heuristic finds in `text` (English and Chinese patterns); may be empty."""
    found: dict[tuple[str, str, str], Relation] = {}
    for pattern, predicate, needles in _PATTERNS:
        if not any(needle in text for needle in needles):
            continue
        for match in pattern.finditer(text):
            subject, obj = match.group(1).strip(), match.group(2).strip(" .")
            if subject and obj and subject != obj:
                found.setdefault((subject, predicate, obj), Relation(subject, predicate, obj))
    return list(found.values())


async def extract_relations_with_model(model: Model, text: str) -> list[Relation]:
    """Relations the model extracts; malformed answers yield none (the heuristic's stay)."""
    import json_repair

    from toolweave.llm import Message, ModelRequest, TextPart

    request = ModelRequest(messages=[Message("user", [TextPart(_EXTRACT_PROMPT + text)])])
    response = await model.complete(request)
    answer = "".join(p.text for p in response.message.parts if isinstance(p, TextPart))
    try:
        triples = json_repair.loads(answer)
    except (ValueError, json.JSONDecodeError):
        return []
    if not isinstance(triples, list):
        return []
    return [
        Relation(str(t[0]).strip(), str(t[1]).strip(), str(t[2]).strip())
        for t in triples
        if isinstance(t, list | tuple) and len(t) == 3 and all(str(x).strip() for x in t)
    ]


def parse_relations(raw: Iterable[Any], *, field: str = "relations") -> list[Relation]:
    """`[(subject, predicate, object), ...]` as `Relation`s; names the bad entry otherwise."""
    relations = []
    for index, entry in enumerate(raw):
        if isinstance(entry, Relation):
            relations.append(entry)
            continue
        if (
            not isinstance(entry, list | tuple)
            or len(entry) != 3
            or not all(isinstance(x, str) and x.strip() for x in entry)
        ):
            from toolweave.memory.errors import MemoryArgumentError

            raise MemoryArgumentError(
                f"{field}[{index}] must be a (subject, predicate, object) triple of non-empty"
                f" strings, got {entry!r}"
            )
        relations.append(Relation(entry[0].strip(), entry[1].strip(), entry[2].strip()))
    return relations


def _name_keys(name: str) -> set[str]:
    """How a query can spell an entity: its words joined by a space, and with no separator."""
    words = segment(name)
    return {" ".join(words), "".join(words), name.lower()}


class KnowledgeGraph:
    """Entities as nodes, relations as edges keyed by the memory they belong to.

    A directed multigraph in plain dicts (`_succ[subject][object][memory id]` holds the
    predicate, `_pred` the same edges the other way), in insertion order, so that a capped walk
    (`memory_scores`) always meets the edges in the same order. It was a networkx
    `MultiDiGraph`; importing networkx cost the first semantic search 0.2-0.5 s."""

    def __init__(self) -> None:
        self._succ: dict[str, dict[str, dict[str, str]]] = {}
        self._pred: dict[str, dict[str, dict[str, str]]] = {}
        self._edges: dict[str, list[Relation]] = {}
        self._names: dict[str, set[str]] = {}  # segmented, lower-cased name -> entity names

    def __len__(self) -> int:
        return len(self._succ)

    def add(self, memory_id: str, relations: Sequence[Relation]) -> None:
        self.remove(memory_id)
        stored = [Relation(r.subject, r.predicate, r.object, memory_id) for r in relations]
        for relation in stored:
            for node in (relation.subject, relation.object):
                if node not in self._succ:
                    self._succ[node], self._pred[node] = {}, {}
                    for key in _name_keys(node):
                        self._names.setdefault(key, set()).add(node)
            subject, obj = relation.subject, relation.object
            self._succ[subject].setdefault(obj, {})[memory_id] = relation.predicate
            self._pred[obj].setdefault(subject, {})[memory_id] = relation.predicate
        if stored:
            self._edges[memory_id] = stored

    def remove(self, memory_id: str) -> None:
        for relation in self._edges.pop(memory_id, []):
            subject, obj = relation.subject, relation.object
            keys = self._succ.get(subject, {}).get(obj)
            if keys is not None and memory_id in keys:
                del keys[memory_id]
                del self._pred[obj][subject][memory_id]
                if not keys:
                    del self._succ[subject][obj], self._pred[obj][subject]
            for node in (subject, obj):
                if node in self._succ and not self._succ[node] and not self._pred[node]:
                    del self._succ[node], self._pred[node]
                    for key in _name_keys(node):
                        self._names.get(key, set()).discard(node)

    def entities_in(self, text: str) -> list[str]:
        """Known entities the text mentions (case-insensitive), longest first.

        Looks up the text's word sequences (up to `MAX_ENTITY_WORDS` words, joined with and
        without spaces) in a name index, so the cost follows the query, not the graph's size.
        """
        words = segment(text)
        found: set[str] = set()
        for start in range(len(words)):
            for end in range(start + 1, min(start + MAX_ENTITY_WORDS, len(words)) + 1):
                for joiner in (" ", ""):
                    found.update(self._names.get(joiner.join(words[start:end]), ()))
        return sorted(found, key=lambda n: (-len(n), n))

    def _neighbors(self, node: str) -> set[str]:
        """The entities one edge away from `node`, in either direction."""
        return set(self._succ.get(node, ())) | set(self._pred.get(node, ()))

    def related(self, entity: str, depth: int = 1) -> list[Relation]:
        """Relations within `depth` hops of `entity` (case-insensitive name), sorted."""
        matches = {n for n in self._succ if n.lower() == entity.lower()}
        if not matches:
            return []
        nodes, frontier = set(matches), set(matches)
        for _ in range(depth):
            frontier = {n for node in frontier for n in self._neighbors(node)} - nodes
            if not frontier:  # nothing further: a larger depth reaches no more
                break
            nodes |= frontier
        relations = {
            Relation(subject, predicate, obj, key)
            for subject, targets in self._succ.items()
            if subject in nodes
            for obj, keys in targets.items()
            if obj in nodes and (subject in matches or obj in matches or depth > 1)
            for key, predicate in keys.items()
        }
        return sorted(
            relations, key=lambda r: (r.subject, r.predicate, r.object, r.memory_id or "")
        )

    def memory_scores(self, entities: Sequence[str], cap: int) -> dict[str, float]:
        """Graph factor of up to `cap` memory ids: 1.0 for those touching a query entity, then
        0.5 for those one hop further (a hub entity stops the walk at `cap`)."""
        scores: dict[str, float] = {}
        if not entities:
            return scores
        direct = sorted(set(entities))
        neighbors = sorted({n for e in direct for n in self._neighbors(e)} - set(direct))
        for nodes, score in ((direct, 1.0), (neighbors, GRAPH_NEIGHBOR_SCORE)):
            for node in nodes:
                for edges in (self._succ.get(node, {}), self._pred.get(node, {})):
                    for keys in edges.values():
                        for key in keys:
                            scores.setdefault(key, score)
                            if len(scores) >= cap:
                                return scores
        return scores

    def conflicts(self, relations: Sequence[Relation], exclusive: frozenset[str]) -> set[str]:
        """Memory ids holding an exclusive (subject, predicate) with another object."""
        clashing: set[str] = set()
        for new in relations:
            if new.predicate not in exclusive:
                continue
            for obj, keys in self._succ.get(new.subject, {}).items():
                if obj != new.object:
                    clashing.update(k for k, p in keys.items() if p == new.predicate)
        return clashing
