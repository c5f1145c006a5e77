"""Text utilities every retrieval store shares: CJK detection, token estimates, segmentation.

Memory, the knowledge base and sessions all need to know how long a text is in tokens and how
to cut Chinese into words, and they must agree: a chunk the knowledge base sizes at 500 tokens
must be 500 tokens to the session budget too. So the CJK character class, the token estimate,
jieba segmentation and the FTS5 query builder are defined here, once.

The segmenter is rjieba (jieba-rs: jieba's dictionary and search-mode cut in Rust, 13x faster
than jieba's pure Python, word for word the same; a test holds it to jieba). It is imported,
and its dictionary loaded (~0.1 s), on the first segmentation, never at import.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Sequence
from typing import Any, Literal

# CJK punctuation, kana, Han, hangul, CJK compatibility, full-width forms and extension blocks:
# about one token per character.
CJK = re.compile(
    "[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
    "\U00020000-\U0002ceaf]"
)
#: A word outside CJK text: a run of letters, digits and underscores.
WORD = re.compile(r"\w+", re.UNICODE)
#: A character FTS5's unicode61 tokenizer keeps in a token: a letter or a digit. Everything
#: else separates tokens, "_" included ("max_retries" is "max" and "retries"), and so do the
#: hyphen, the dot and apostrophes. (unicode61 keeps a combining mark inside its token and
#: folds it away; this class splits there, so a decomposed "résumé" is tokenized differently.)
TOKEN_CHAR = r"[^\W_]"
#: A token as unicode61 splits text: what the words index (FTS5, and the tsvector made from
#: the same tokens) holds.
TOKEN = re.compile(f"{TOKEN_CHAR}+")
# CJK text with the ASCII letters and digits mixed into it ("Python编程", "2024年"), kept
# together so jieba sees the words across the boundary.
_CJK_RUN = re.compile(
    f"((?:{CJK.pattern}|[A-Za-z0-9])*{CJK.pattern}(?:{CJK.pattern}|[A-Za-z0-9])*)"
)
_JIEBA: Any = None
_JIEBA_LOCK = threading.Lock()

#: English function words: they match most English records (a query term costs time per match)
#: and would dominate every hashed vector.
STOP_WORDS = frozenset(
    (
        "a",
        "about",
        "after",
        "also",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "his",
        "i",
        "in",
        "into",
        "is",
        "it",
        "its",
        "more",
        "not",
        "of",
        "on",
        "or",
        "our",
        "over",
        "said",
        "says",
        "she",
        "than",
        "that",
        "the",
        "their",
        "there",
        "they",
        "this",
        "to",
        "was",
        "we",
        "were",
        "what",
        "when",
        "which",
        "who",
        "will",
        "with",
        "would",
        "you",
    )
)

#: Words that say what kind of answer a question wants, not what it is about ("How many
#: ... did"): left out of queries (never of the index), like `STOP_WORDS`. They only pull in
#: passages that share them: leaving them out gains 0.4 points of hit@1 on SQuAD questions and
#: 2.3 on LoCoMo's (benchmarks/retrieval_public.py, tune half).
QUESTION_WORDS = frozenset(
    [
        "how",
        "many",
        "much",
        "does",
        "did",
        "do",
        "why",
        "where",
        "whom",
        "whose",
        "name",
        "type",
        "kind",
    ]
)

#: Chinese function words and question words ("是", "的", "哪个", "什么时候"): left out of
#: queries as `STOP_WORDS` are. jieba gives each its own word, so they match most Chinese
#: records; on CMRC 2018 questions (tune half) dropping them gains 0.7 points of hit@1.
CJK_STOP_WORDS = frozenset(
    [
        "的",
        "是",
        "了",
        "在",
        "和",
        "与",
        "及",
        "或",
        "为",
        "被",
        "由",
        "于",
        "从",
        "到",
        "对",
        "把",
        "将",
        "这",
        "那",
        "个",
        "之",
        "也",
        "都",
        "就",
        "而",
        "但",
        "所",
        "以",
        "其",
        "中",
        "上",
        "下",
        "有",
        "哪",
        "什么",
        "哪个",
        "哪些",
        "哪里",
        "哪儿",
        "多少",
        "几",
        "谁",
        "怎么",
        "怎样",
        "如何",
        "为什么",
        "何",
        "吗",
        "呢",
        "么",
        "么样",
        "什么样",
        "是什么",
        "一",
        "时候",
        "什么时候",
        "哪一",
        "哪年",
        "几年",
    ]
)
#: Every word `query_terms` leaves out.
QUERY_STOP_WORDS = STOP_WORDS | QUESTION_WORDS | CJK_STOP_WORDS

#: Shortest term the trigram index can match; shorter ones need a LIKE scan.
TRIGRAM_MIN_CHARS = 3


def estimate_tokens(text: str, *, other: Literal["chars", "words"] = "chars") -> int:
    """A tokenizer-free estimate: one token per CJK character, plus the rest of the text.

    `other="chars"` counts the rest as one token per four characters (right for JSON and code,
    which have few spaces; within ~25% of real tokenizers). `other="words"` counts one token per
    word, the measure document chunkers use for prose.
    """
    if not text:
        return 0
    cjk = len(CJK.findall(text))
    if other == "words":
        return cjk + len(WORD.findall(CJK.sub(" ", text)))
    return cjk + (len(text) - cjk + 3) // 4


def has_cjk(text: str) -> bool:
    return CJK.search(text) is not None


def _jieba() -> Any:
    global _JIEBA
    with _JIEBA_LOCK:
        if _JIEBA is None:
            import rjieba

            _JIEBA = rjieba
    return _JIEBA


def segment(text: str) -> list[str]:
    """Words of `text`, lower-cased: jieba's search-mode cut for CJK runs, `\\w+` for the rest.

    Search mode also yields the parts of long words ("清华大学" -> 清华, 大学, 清华大学), so a
    two-character query word finds the four-character word that contains it. Only the CJK runs
    go through jieba; everything else is a regex.
    """
    if not has_cjk(text):
        return [w.lower() for w in WORD.findall(text)]
    words: list[str] = []
    # split() with one group alternates: text between runs (even), a CJK run (odd).
    for position, part in enumerate(_CJK_RUN.split(text)):
        if position % 2:
            words.extend(WORD.findall(" ".join(_cut(part))))
        elif part:
            words.extend(WORD.findall(part))
    return [w.lower() for w in words]


def segmented(text: str) -> str:
    """`segment(text)` joined by spaces: the column a `simple` tsvector indexes."""
    return " ".join(segment(text))


def fts_text(text: str) -> str:
    """What an FTS5 unicode61 column indexes to find the words `segment(text)` finds: the text
    with each CJK run replaced by its jieba words. unicode61 splits and folds case itself, so
    text without CJK goes in as it is, with no Python work per word (ingest pays for this)."""
    return fts_texts([text])[0]


def fts_texts(texts: Sequence[str]) -> list[str]:
    """`fts_text` of each text, with one jieba call for all their CJK runs.

    jieba lets go of the GIL on every call, and a thread taking it back waits for any other
    busy thread to yield it (up to the 5 ms switch interval): cutting 1,000 short Chinese texts
    one call each took 2.2 s instead of 5 ms beside one spinning thread. The runs are cut as
    one text, one per line; jieba never joins words across a line break.
    """
    # split() with one group alternates: text between runs (even), a CJK run (odd).
    parts = [_CJK_RUN.split(text) if has_cjk(text) else None for text in texts]
    runs = [run for split in parts if split for run in split[1::2]]
    if not runs:
        return list(texts)
    words: list[str] = _jieba().cut_for_search("\n".join(runs), False)
    cut = " ".join(words).split(" \n ")  # a run's words hold no space
    if len(cut) != len(runs):  # a jieba that kept a line break inside a word
        cut = [" ".join(_cut(run)) for run in runs]
    out, position = list(texts), 0
    for n, split in enumerate(parts):
        if split:
            count = len(split) // 2
            split[1::2] = [f" {piece} " for piece in cut[position : position + count]]
            out[n], position = "".join(split), position + count
    return out


def _cut(run: str) -> list[str]:
    """jieba's search-mode cut of one CJK run, without its HMM for unknown words.

    The HMM joins characters jieba's dictionary does not know into guessed words, and guesses
    a question's characters differently from a passage's ("谁发明了X" vs "X由某人发明"), so the
    guessed word matches nothing. Without it an unknown name is its characters, which match
    wherever the name is written: on CMRC 2018 (tune half) hit@1 rises from 0.955 to 0.965."""
    words: list[str] = _jieba().cut_for_search(run, False)
    return words


def query_terms(query: str) -> list[str]:
    """Distinct search terms of a query, in order of first appearance.

    Single Latin letters and digits (the "s" of "alice's"), English and Chinese stop words and
    question words ("how many", "哪个") are dropped: they match nearly every record. Another
    single CJK character is a word and stays. A query of nothing but stop words keeps them
    ("the who").
    """
    return _content_terms(segment(query))


def keyword_terms(query: str) -> list[str]:
    """The query's terms as the words index holds them: each word of `query_terms` split into
    its unicode61 tokens ("max_retries" -> "max", "retries"; "gpt-4o" -> "gpt", "4o"), with the
    words `query_terms` leaves out left out of the tokens too. Scoring counts each token as
    the index does, so "max_retries", "max-retries" and "max retries" count alike."""
    return _content_terms([t for word in segment(query) for t in TOKEN.findall(word)])


def _content_terms(words: list[str]) -> list[str]:
    words = [t for t in words if len(t) > 1 or has_cjk(t)]
    content = [t for t in words if t not in QUERY_STOP_WORDS]
    return list(dict.fromkeys(content or words))


def fts5_match(terms: Iterable[str], operator: Literal["OR", "AND"] = "OR") -> str:
    """An FTS5 MATCH expression joining the terms, each quoted (no query syntax injection)."""
    return f" {operator} ".join('"' + term.replace('"', '""') + '"' for term in terms)


def like_pattern(term: str) -> str:
    """A LIKE pattern matching `term` anywhere, with `%`, `_` and `\\` escaped (ESCAPE '\\')."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
