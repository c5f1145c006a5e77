"""How keyword and vector results become one ranking: a convex mix of normalised scores.

Reciprocal rank fusion counts a weak vector list as much as a strong keyword list, and breaks
ties between the sides by record id. On public QA sets it lost to its own keyword side, so
hybrid search mixes the evidence each side gives instead:

    fused = (1 - w) * keyword_score / best_keyword_score
          + w * (cosine - floor) / (best_cosine - floor),
    floor = min(lowest_pool_cosine, best_cosine - MIN_COSINE_SPAN)

A record found by both sides collects both terms (the sides' agreement adds up); one found by
a side alone gets 0 from the other. The cosine range is at least `MIN_COSINE_SPAN`, so in a
pool of a few close candidates (a small store) a cosine difference of 0.01 stays small. Both
sides are asked for the same `FUSION_POOL` candidates whatever `k` is asked, so the
normalisation, and the top result, do not depend on `k`. Equal fused scores go to the record
the stronger (heavier-weighted) side prefers, then the other side, then the stronger side's
rank: deterministic, and never by record id.

Before fusing, the keyword side's scores get a phrase bonus (`phrase_boost`): bm25 counts the
query's words one by one, so a passage that says "the Super Bowl was played" and one that
scatters "super" and "bowl" over unrelated sentences score alike. A keyword candidate gains
`PHRASE_WEIGHT * best_keyword_score * share`, `share` being the part of the query's adjacent
word pairs (pairs of two stop words left out) that the candidate has side by side too; the
candidates are then ranked by their new scores. On the tune half of the public sets
(benchmarks/retrieval_public.py) it gains 2.4 points of hit@1 on SQuAD, 0.3-0.6 on CMRC 2018
and 2.0 on LoCoMo (docs/knowledge-base.md).

When the vector side's best candidate is not among the keyword side's first ten, the sides
disagree and hybrid search halves `w` (`agreed_weight`): on dialogue memory (LoCoMo) WordLlama's
vectors are weak, and a full-weight disagreement cost hybrid its lead over keyword search.

`w`, the vector weight, depends on the embedder (how good its vectors are), on the query's
script and on its length (`FusionWeights.for_query`), and on the script of the records it finds
(`crossed_weight`): measured on public sets (docs/knowledge-base.md,
benchmarks/retrieval_public.py), WordLlama's vectors add a little to short questions at w = 0.1
on English and 0.05 on Chinese and cost hit@1 from 0.2 on, while a long English query (a
conversation's recent turns, `LONG_QUERY_WORDS` distinct words or more) wants 0.7: on
MADial-Bench's tune half keyword 0.491, vectors 0.549, fused at 0.1 0.526, at 0.7 0.589
nDCG@10. Long Chinese dialogue stays at 0.05 (WordLlama reads no Chinese: vectors 0.165 against
keyword 0.505). MiniLM wants 0.7 for a long English query too (MADial tune half 0.632 against
0.570 at its short 0.3); it is English-only, so its Chinese queries are keyword-only. The
multilingual USE (`embedder="use"`) reads Chinese and crosses languages, so its Chinese weights
are higher and a query over records of the other script is ranked by its vectors alone. The weights
are stored with each index, so a store keeps ranking the way it was measured until its owner
changes them.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from toolweave.storage.errors import ConfigError
from toolweave.storage.retrieval.embedders import E5_NAME, USE_NAME
from toolweave.storage.text import QUERY_STOP_WORDS, has_cjk, segment

if TYPE_CHECKING:
    from toolweave.storage.retrieval.index import IndexHit

FUSION_POOL = 50
"""Candidates taken from each side before fusing, whatever `k` a search asks for (more if `k`
is larger)."""
MIN_COSINE_SPAN = 0.1
"""Smallest cosine range the vector side's scores are normalised over."""
SUBSTRING_SHARE = 0.5
"""Keyword score of a substring-only match (no word matched), as a share of the weakest word
match's score: below every word match, still ahead of records the keyword side never found."""
AGREEMENT_DEPTH = 10
"""How deep in the keyword ranking the vector side's best candidate must be for the sides to
agree (`agreed_weight`)."""
DISAGREEMENT_SHARE = 0.5
"""Share of the vector weight hybrid search keeps when the sides disagree."""
CROSS_SCRIPT_DEPTH = 10
"""Nearest records (the vector side's first) whose script a query without CJK is compared with
(`crossed_weight`)."""
PHRASE_WEIGHT = 1.0
"""Keyword score a candidate gains for having all the query's adjacent word pairs side by side,
as a share of the best keyword score (a part of the pairs earns that part of it)."""
LONG_QUERY_WORDS = 32
"""Distinct words (stop words left out) from which a query is long and fused with the long-query
weight (`FusionWeights.long_latin` / `long_cjk`): a conversation's recent turns rather than a
question. The questions of XQuAD, CMRC 2018 and LoCoMo have at most 29 such words (median 5-7),
DRCD's up to 39 (median 13: jieba's search mode adds the parts of long words); MADial-Bench's
dialogues a median of 50 (English) and 57 (Chinese), 149 of 160 at least 32."""
FUSION_FORMULA = "(1 - w) * keyword/best + w * (cosine - floor)/(best - floor)"


def long_query(query: str) -> bool:
    """Whether `query` has `LONG_QUERY_WORDS` distinct words (`segment`) or more, stop words
    left out; a query shorter than that in characters is short without being segmented."""
    if len(query) < LONG_QUERY_WORDS:
        return False
    return len(set(segment(query)) - QUERY_STOP_WORDS) >= LONG_QUERY_WORDS


@dataclasses.dataclass(frozen=True, slots=True)
class FusionWeights:
    """The vector side's weight `w` in 0..1 for queries without CJK (`latin`) and with (`cjk`),
    for long queries of each script (`long_latin`, `long_cjk`: `LONG_QUERY_WORDS` distinct
    words or more; the short weight when not given), and for a query over records of the other
    script (`crossed`, for an embedder that crosses languages; when not given, `crossed_weight`'s
    rules for an embedder that does not)."""

    latin: float
    cjk: float
    long_latin: float | None = None
    long_cjk: float | None = None
    crossed: float | None = None

    def __post_init__(self) -> None:
        for field in ("latin", "cjk", "long_latin", "long_cjk", "crossed"):
            value = getattr(self, field)
            if value is None and field not in ("latin", "cjk"):
                continue
            if not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
                raise ConfigError(
                    f"FusionWeights.{field} must be a number from 0 to 1, not {value!r}"
                )

    def for_query(self, query: str) -> float:
        """The weight for `query`: by its script, and by its length (`long_query`)."""
        return self.weight(cjk=has_cjk(query), long=long_query(query))

    def weight(self, *, cjk: bool, long: bool) -> float:
        """The weight for a query of that script and length."""
        short, longer = (self.cjk, self.long_cjk) if cjk else (self.latin, self.long_latin)
        return longer if long and longer is not None else short

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> FusionWeights:
        """Weights stored by `to_json`; a store written before the long-query (or crossed)
        weights existed keeps its short weights for long queries too (it ranks as it did)."""
        data = json.loads(text)
        return cls(
            float(data["latin"]),
            float(data["cjk"]),
            data.get("long_latin"),
            data.get("long_cjk"),
            data.get("crossed"),
        )


EMBEDDER_WEIGHTS: dict[str, FusionWeights] = {
    "wordllama": FusionWeights(latin=0.1, cjk=0.05, long_latin=0.7),
    # The multilingual USE, tune halves (docs/memory.md): XQuAD English 0.3 (0.988, keyword
    # 0.984), XQuAD Chinese and DRCD 0.2 (0.982 / 0.949; 0.05 is DRCD's best, 0.953), MADial
    # English 1.0 (vectors 0.628; fused at 0.7 0.610, 0.9 0.612; keyword 0.490), Chinese 0.5
    # (0.579; vectors 0.530, keyword 0.505), across 1.0 (MADial en->zh 0.548 against 0.429 at
    # 0.9, zh->en 0.513 against 0.373; XQuAD en->zh 0.806 against 0.564).
    USE_NAME: FusionWeights(latin=0.3, cjk=0.2, long_latin=1.0, long_cjk=0.5, crossed=1.0),
    # e5: its short weights are the unmeasured ones; MADial-Bench's tune half (75 / 77
    # dialogues) sets the rest: English 0.7 (0.536; 0.514 at 0.3, vectors 0.433, keyword 0.490),
    # Chinese 0.5 (0.555; 0.515 at 0.05, vectors 0.504), across 1.0 (en->zh 0.378 against 0.231
    # at 0.9, zh->en 0.339 against 0.255).
    E5_NAME: FusionWeights(latin=0.3, cjk=0.05, long_latin=0.7, long_cjk=0.5, crossed=1.0),
    # MiniLM: short weights from SQuAD / SciFact; MADial-Bench's tune half (75 dialogues) sets
    # long English 0.7 (0.632, as at 0.9; 0.570 at 0.3, vectors 0.620, keyword 0.490). It reads
    # no Chinese (vectors 0.158 on Chinese dialogue against keyword 0.505): CJK stays keyword-only.
    "minilm": FusionWeights(latin=0.3, cjk=0.0, long_latin=0.7),
    "hash": FusionWeights(latin=0.3, cjk=0.1),
}
"""Measured vector weights by embedder family (the embedder name before its first `:`)."""
UNMEASURED_WEIGHTS = FusionWeights(latin=0.3, cjk=0.05)
"""Weights of an embedder no measurement covers (a remote model): keyword-dominant for CJK."""


def weights_for(embedder_name: str) -> FusionWeights:
    """The default weights of an embedder, by its family (`wordllama:256` -> `wordllama`)."""
    return EMBEDDER_WEIGHTS.get(embedder_name.split(":", 1)[0], UNMEASURED_WEIGHTS)


def pool_size(limit: int) -> int:
    """Candidates each side contributes to a search for `limit` hits."""
    return max(FUSION_POOL, limit)


def word_pairs(words: Sequence[str]) -> set[tuple[str, str]]:
    """The adjacent pairs of `words`, leaving out pairs of two stop words ("of the")."""
    return {
        pair
        for pair in itertools.pairwise(words)
        if not (pair[0] in QUERY_STOP_WORDS and pair[1] in QUERY_STOP_WORDS)
    }


def _is_word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


def side_by_side(text: str, first: str, second: str) -> bool:
    """Whether lower-cased `text` has `first` then `second` with only non-word characters
    between: Latin words whole (not inside longer words) and apart, CJK words also written
    together ("乌龙" "茶" in "乌龙茶"). A scan with `str.find`: compiling a regular expression
    per word pair would cost more than the search itself."""
    latin_first, latin_second = not has_cjk(first[-1]), not has_cjk(second[0])
    start = text.find(first)
    while start >= 0:
        end = start + len(first)
        whole = not (latin_first and start > 0 and _is_word_char(text[start - 1]))
        if latin_first and end < len(text) and _is_word_char(text[end]):
            whole = False
        gap = end
        while gap < len(text) and not _is_word_char(text[gap]):
            gap += 1
        after = gap + len(second)
        if (
            whole
            and (gap > end or not (latin_first and latin_second))
            and text.startswith(second, gap)
            and not (latin_second and after < len(text) and _is_word_char(text[after]))
        ):
            return True
        start = text.find(first, start + 1)
    return False


def phrase_boost(query: str, keyword: Sequence[IndexHit]) -> list[IndexHit]:
    """The keyword hits with the phrase bonus added to their scores, best first, re-ranked.

    A hit gains `PHRASE_WEIGHT * best * share`: `best` the best keyword score among the hits,
    `share` the part of the query's adjacent word pairs (`word_pairs` of `segment(query)`) that
    the hit's text has side by side (`side_by_side`: the text is searched for each pair, not
    segmented, as jieba over 50 passages would cost more than the search). Equal scores keep
    the keyword order.
    """
    from toolweave.storage.retrieval.index import IndexHit

    wanted = word_pairs(segment(query))
    if not wanted or not keyword:
        return list(keyword)
    scores = [_score_of(hit, rank) for rank, hit in enumerate(keyword, start=1)]
    gain = PHRASE_WEIGHT * max(scores) / len(wanted)
    boosted = []
    for hit, score in zip(keyword, scores, strict=True):
        text = hit.record.text.lower()
        found = sum(
            1
            for first, second in wanted
            if first in text and second in text and side_by_side(text, first, second)
        )
        boosted.append(score + gain * found)
    order = sorted(range(len(keyword)), key=lambda i: -boosted[i])
    return [
        IndexHit(keyword[i].record, 0.0, keyword_rank=rank, keyword_score=boosted[i])
        for rank, i in enumerate(order, start=1)
    ]


def agreed_weight(weight: float, keyword: Sequence[IndexHit], vector: Sequence[IndexHit]) -> float:
    """The vector weight a hybrid search fuses with: `weight`, times `DISAGREEMENT_SHARE` when
    the vector side's best candidate is not among the keyword side's first `AGREEMENT_DEPTH`
    (the sides disagree, and the vectors are the weaker evidence: the keyword order then
    holds unless the vectors tell its candidates clearly apart). Keyword-only and vector-only
    searches (w = 0 or 1), and a search one side found nothing for, keep `weight`."""
    if not keyword or not vector or weight in (0.0, 1.0):
        return weight
    agreeing = {hit.record.id for hit in keyword[:AGREEMENT_DEPTH]}
    return weight if vector[0].record.id in agreeing else weight * DISAGREEMENT_SHARE


def crossed_weight(
    weight: float,
    query: str,
    keyword: Sequence[IndexHit],
    vector: Sequence[IndexHit],
    weights: FusionWeights,
) -> float:
    """The weight for a query over records of the other script: most of its `CROSS_SCRIPT_DEPTH`
    nearest records are of the other script (CJK or not) and so is the keyword side's best
    match (it matched the few words the two scripts share, or none).

    - A query without CJK over Chinese records: 1.0, the vector side alone. Measured on XQuAD,
      English questions over the Chinese paragraphs (docs/knowledge-base.md): WordLlama's
      vectors alone 0.341 nDCG@10, fused at any weight up to 0.5 about 0.30.
    - A Chinese query over records without CJK: the weight of a query without CJK of its
      length (`weights.weight`): the keyword side reads the records' script. A short question's
      Latin words are names and numbers, which the keyword side matches well (XQuAD zh->en:
      fused 0.250, vectors alone 0.168); a long one is a conversation whose words the records
      do not share (MADial-Bench zh->en, WordLlama: keyword 0.100, fused at 0.7 0.146).

    An embedder that crosses languages sets its own weight for both directions
    (`weights.crossed`): the multilingual USE's vectors alone beat any fusion on MADial-Bench's
    cross-language pairs, the keyword side matching only chance words.

    Keyword-only and vector-only searches, and a query the keyword side matched a record of
    its own script for, keep `weight`."""
    if weight in (0.0, 1.0) or not vector:
        return weight
    query_cjk = has_cjk(query)
    if keyword and has_cjk(keyword[0].record.text) == query_cjk:
        return weight
    near = vector[:CROSS_SCRIPT_DEPTH]
    if (2 * sum(has_cjk(hit.record.text) for hit in near) > len(near)) == query_cjk:
        return weight
    if weights.crossed is not None:
        return weights.crossed
    if not query_cjk:
        return 1.0
    return weights.weight(cjk=False, long=long_query(query))


def fuse_hits(
    keyword: Sequence[IndexHit], vector: Sequence[IndexHit], limit: int, *, weight: float
) -> list[IndexHit]:
    """One ranking from both sides; each hit keeps its keyword rank and score and its cosine.

    `keyword` is in keyword rank order with `keyword_score` set (bm25 or the backend's rank,
    higher is better); `vector` in cosine order. `weight` is the vector side's `w`.
    """
    from toolweave.storage.retrieval.index import IndexHit

    by_id: dict[str, IndexHit] = {}
    vector_rank: dict[str, int] = {}
    for rank, hit in enumerate(keyword, start=1):
        by_id[hit.record.id] = IndexHit(
            hit.record, 0.0, keyword_rank=rank, keyword_score=_score_of(hit, rank)
        )
    for rank, hit in enumerate(vector, start=1):
        vector_rank[hit.record.id] = rank
        existing = by_id.get(hit.record.id)
        if existing is None:
            by_id[hit.record.id] = IndexHit(hit.record, 0.0, vector_score=hit.vector_score)
        else:
            existing.vector_score = hit.vector_score
    best_keyword = max((h.keyword_score or 0.0 for h in by_id.values()), default=0.0)
    cosines = [h.vector_score for h in vector if h.vector_score is not None]
    top = max(cosines, default=0.0)
    bottom = min(min(cosines, default=0.0), top - MIN_COSINE_SPAN)
    keyword_norm: dict[str, float] = {}
    vector_norm: dict[str, float] = {}
    for key, hit in by_id.items():
        k = (hit.keyword_score or 0.0) / best_keyword if best_keyword > 0 else 0.0
        v = 0.0
        if key in vector_rank and hit.vector_score is not None:
            v = (hit.vector_score - bottom) / (top - bottom)
        keyword_norm[key], vector_norm[key] = k, v
        hit.score = (1.0 - weight) * k + weight * v
    keyword_first = weight <= 0.5

    def order(hit: IndexHit) -> tuple[float, ...]:
        key = hit.record.id
        sides = (
            (keyword_norm[key], hit.keyword_rank or math.inf),
            (vector_norm[key], vector_rank.get(key, math.inf)),
        )
        strong, weak = sides if keyword_first else sides[::-1]
        return (-hit.score, -strong[0], -weak[0], strong[1], weak[1])

    return sorted(by_id.values(), key=order)[:limit]


def _score_of(hit: IndexHit, rank: int) -> float:
    """A keyword hit's score; a backend that gives none is scored by rank (1 / rank)."""
    return hit.keyword_score if hit.keyword_score is not None else 1.0 / rank
