"""Heading-aware Markdown chunking with a CJK-aware token budget.

Retrieval works on chunks, not documents: a hit should be a passage a model can read, carrying
the section it came from. `chunk_markdown` parses Markdown into blocks (paragraphs, fenced code,
tables) under a heading path ("A > B"), splits a block larger than the budget (a paragraph by
sentences, then by tokens; a table by rows with its header repeated; a code fence never), and
packs consecutive blocks of one section into chunks of at most `chunk_tokens`, carrying up to
`overlap_tokens` of trailing blocks into the next chunk. A chunk is bounded in characters as well
(`max_chars`): a run of text the token estimate counts as one word (a PDF whose spaces were lost,
a long URL, a base64 blob) or a fenced code block is cut there, so no chunk printed by a search
is ever longer than that. Every position counts code points,
never bytes. Unlike the reference chunker, packing always makes progress: the overlap is dropped
whenever keeping it would not leave room for the next block (the reference loops forever on a
60-token paragraph followed by a 750-token one at 800/100).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from toolweave.errors import ConfigError
from toolweave.storage.text import CJK, estimate_tokens

DEFAULT_CHUNK_TOKENS = 800
DEFAULT_OVERLAP_TOKENS = 100
DEFAULT_MAX_CHUNK_CHARS = 6000
"""Characters a chunk may hold whatever its token count (800 English words are ~5,000)."""
HEADING_SEPARATOR = " > "

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
# A setext heading's underline: `Title` over `=====` (level 1) or `-----` (level 2).
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_NOT_SETEXT_TEXT = re.compile(r"^ {0,3}(?:[-*+>|#]|\d+[.)][ \t]|`{3}|~{3})")
# A sentence ends after a CJK terminator, or after a Western one followed by whitespace.
_SENTENCE_END = re.compile(r"(?<=[。！？；])|(?<=[.!?;])(?=\s)")
# One estimate token: a CJK character, or a run of other word characters.
_TOKEN = re.compile(f"{CJK.pattern}|(?:(?!{CJK.pattern})\\w)+")

Unit = Literal["tokens", "chars"]


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrievable passage and the code-point span `start:end` of the source it covers.

    Its text is the source's blocks in that span; a table split by rows repeats its header row.
    """

    text: str
    heading_path: str | None
    start: int
    end: int

    @property
    def contextual_text(self) -> str:
        """The chunk under its heading path (a prefix line; no model call)."""
        return f"{self.heading_path}\n{self.text}" if self.heading_path else self.text


@dataclass(frozen=True, slots=True)
class _Measure:
    size: Callable[[str], int]
    spans: Callable[[str], list[tuple[int, int]]]  # the units `size` counts, as spans


def _token_spans(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in _TOKEN.finditer(text)]


def _char_spans(text: str) -> list[tuple[int, int]]:
    return [(i, i + 1) for i in range(len(text))]


_UNITS: dict[str, _Measure] = {
    # Prose tokens: one per CJK character, one per other word (the shared estimate).
    "tokens": _Measure(lambda text: estimate_tokens(text, other="words"), _token_spans),
    "chars": _Measure(len, _char_spans),
}


@dataclass(frozen=True, slots=True)
class _Bound:
    """A chunk's budget: `tokens` in the chunker's unit and `chars` code points."""

    tokens: int
    chars: int
    measure: _Measure


@dataclass(slots=True)
class _Piece:
    text: str
    start: int
    end: int
    size: int
    block: int
    kind: str


def chunk_markdown(
    text: str,
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS,
    *,
    unit: Unit = "tokens",
    max_chars: int = DEFAULT_MAX_CHUNK_CHARS,
) -> list[Chunk]:
    """Split Markdown `text` into heading-aware chunks of at most `chunk_tokens` tokens and
    `max_chars` characters.

    `unit="chars"` reads both sizes as code points instead (the `kb_add` default is 600
    characters with 60 of overlap). A fenced code block is split only past `max_chars`.
    """
    check_chunking(chunk_tokens, overlap_tokens, unit, max_chars)
    bound = _Bound(chunk_tokens, max_chars, _UNITS[unit])
    chunks: list[Chunk] = []
    for heading_path, pieces in _sections(text, bound):
        chunks.extend(_pack(text, heading_path, pieces, bound, overlap_tokens))
    return chunks


def check_chunking(
    chunk_tokens: int, overlap_tokens: int, unit: str, max_chars: int = DEFAULT_MAX_CHUNK_CHARS
) -> None:
    """Raise ConfigError naming the bad size (what `chunk_markdown` accepts)."""
    if chunk_tokens < 1:
        raise ConfigError(f"chunk_tokens must be at least 1, not {chunk_tokens}")
    if not 0 <= overlap_tokens < chunk_tokens:
        raise ConfigError(
            f"overlap_tokens must be between 0 and chunk_tokens - 1 ({chunk_tokens - 1}), "
            f"not {overlap_tokens}"
        )
    if unit not in _UNITS:
        raise ConfigError(f"unit must be 'tokens' or 'chars', not {unit!r}")
    if max_chars < 1:
        raise ConfigError(f"max_chunk_chars must be at least 1, not {max_chars}")


# -- parsing ---------------------------------------------------------------------------------------


def _lines(text: str) -> list[tuple[int, str]]:
    """Each line with the code-point offset where it starts (line ends stripped)."""
    out: list[tuple[int, str]] = []
    pos = 0
    for raw in text.splitlines(keepends=True):
        out.append((pos, raw.rstrip("\r\n")))
        pos += len(raw)
    return out


def _block_end(lines: list[tuple[int, str]], i: int) -> tuple[str, int]:
    """The kind of the block starting at line `i` and the index of the line after it."""
    line = lines[i][1]
    fence = _FENCE.match(line)
    if fence:
        marker = fence.group(1)
        j = i + 1
        while j < len(lines) and not lines[j][1].lstrip().startswith(marker):
            j += 1
        return "code", min(j + 1, len(lines))  # an unclosed fence runs to the end
    if "|" in line and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1][1]):
        k = i + 2
        while k < len(lines) and "|" in lines[k][1] and lines[k][1].strip():
            k += 1
        return "table", k
    k = i + 1
    while (
        k < len(lines)
        and lines[k][1].strip()
        and not _opens_block(lines[k][1])
        and not _setext_level(lines, k)
    ):
        k += 1
    return "paragraph", k


def _opens_block(line: str) -> bool:
    return bool(_FENCE.match(line) or _HEADING.match(line))


def _setext_level(lines: Sequence[tuple[int, str]], i: int) -> int:
    """1 or 2 when line `i` is the text of a setext heading (underlined by `===` or `---`),
    else 0. A list item, quote, table row or fence line over `---` is not a heading."""
    if i + 1 >= len(lines):
        return 0
    line, under = lines[i][1], _SETEXT_UNDERLINE.match(lines[i + 1][1])
    if under is None or not line.strip() or _NOT_SETEXT_TEXT.match(line):
        return 0
    return 1 if under.group(1)[0] == "=" else 2


def outline_counts(markdown: str) -> tuple[int, int]:
    """(headings, tables) of a Markdown text as the chunker sees them: ATX (`# Title`) and
    setext (`Title` over `===`) headings; tables as header rows over a rule row."""
    lines = [(0, line) for line in markdown.splitlines()]
    headings = tables = 0
    for i, (_, line) in enumerate(lines):
        if _FENCE.match(line):
            continue
        if _HEADING.match(line) or _setext_level(lines, i):
            headings += 1
        elif "|" in line and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1][1]):
            tables += 1
    return headings, tables


def _sections(text: str, bound: _Bound) -> list[tuple[str | None, list[_Piece]]]:
    """The document's blocks, split to the budget, grouped by heading path."""
    sections: list[tuple[str | None, list[_Piece]]] = []
    stack: list[tuple[int, str]] = []  # (level, title) of the open headings
    current: list[_Piece] = []
    lines = _lines(text)
    block = i = 0
    while i < len(lines):
        start, line = lines[i]
        heading = None if _FENCE.match(line) else _HEADING.match(line)
        setext = 0 if heading else _setext_level(lines, i)
        if not line.strip() or heading or setext:
            if heading or setext:
                if current:
                    sections.append((_path(stack), current))
                current = []
                level = len(heading.group(1)) if heading else setext
                while stack and stack[-1][0] >= level:
                    stack.pop()
                title = ((heading.group(2) if heading else line) or "").strip()
                if title:
                    stack.append((level, title))
            i += 2 if setext else 1
            continue
        kind, k = _block_end(lines, i)
        end = lines[k - 1][0] + len(lines[k - 1][1])
        current.extend(_split_block(text, start, end, kind, block, bound, lines[i:k]))
        block += 1
        i = k
    if current:
        sections.append((_path(stack), current))
    return sections


def _path(stack: list[tuple[int, str]]) -> str | None:
    return HEADING_SEPARATOR.join(title for _, title in stack) or None


# -- splitting one block to the budget -------------------------------------------------------------


def _split_block(
    text: str,
    start: int,
    end: int,
    kind: str,
    block: int,
    bound: _Bound,
    lines: list[tuple[int, str]],
) -> list[_Piece]:
    body, measure = text[start:end], bound.measure
    size = measure.size(body)
    if len(body) <= bound.chars and (size <= bound.tokens or kind == "code"):
        return [_Piece(body, start, end, size, block, kind)]
    if kind == "table":
        return _split_table(lines, block, bound)
    pieces: list[_Piece] = []
    spans = [(0, len(body))] if kind == "code" else _sentences(body)
    for s_start, s_end in spans:
        for w_start, w_end in _windows(body[s_start:s_end], bound):
            a, b = start + s_start + w_start, start + s_start + w_end
            pieces.append(_Piece(text[a:b], a, b, measure.size(text[a:b]), block, kind))
    return pieces


def _sentences(body: str) -> list[tuple[int, int]]:
    """Spans of the sentences of `body` (CJK and Western terminators), outer whitespace cut."""
    bounds = [0, *(m.start() for m in _SENTENCE_END.finditer(body)), len(body)]
    spans: list[tuple[int, int]] = []
    for a, b in itertools.pairwise(bounds):
        segment = body[a:b]
        lead, tail = len(segment) - len(segment.lstrip()), len(segment.rstrip())
        if tail > lead:
            spans.append((a + lead, a + tail))
    return spans


def _windows(sentence: str, bound: _Bound) -> list[tuple[int, int]]:
    """Contiguous spans of `sentence` holding at most `bound.tokens` units and `bound.chars`
    characters each, cut just before a unit so that punctuation stays with the text before it;
    a unit (or a run between units) longer than `bound.chars` is cut inside."""
    cuts = [0]
    count = 0
    for u_start, u_end in bound.measure.spans(sentence):
        if count and (count >= bound.tokens or u_end - cuts[-1] > bound.chars):
            cuts.append(u_start)
            count = 0
        count += 1
    cuts.append(len(sentence))
    spans = []
    for a, b in itertools.pairwise(cuts):
        for piece in range(a, b, bound.chars):
            end = piece + len(sentence[piece : min(b, piece + bound.chars)].rstrip())
            if end > piece:
                spans.append((piece, end))
    return spans


def _split_table(lines: list[tuple[int, str]], block: int, bound: _Bound) -> list[_Piece]:
    """Row groups that fit the budget, each led by the table's header and rule rows. A row
    over `bound.chars` with the header (or every row, when the header alone is over half of
    it) is cut like prose, without the header."""
    measure = bound.measure
    header = f"{lines[0][1]}\n{lines[1][1]}"
    if 2 * len(header) > bound.chars:
        return [p for offset, line in lines for p in _cut(line, offset, block, bound)]
    pieces: list[_Piece] = []
    group: list[tuple[int, str]] = []

    def body(rows: list[tuple[int, str]]) -> str:
        return header + "".join("\n" + row for _, row in rows)

    def flush() -> None:
        if group:
            text = body(group)
            end = group[-1][0] + len(group[-1][1])
            pieces.append(_Piece(text, group[0][0], end, measure.size(text), block, "table"))
            group.clear()

    for row in lines[2:]:
        if len(header) + 1 + len(row[1]) > bound.chars:
            flush()
            pieces.extend(_cut(row[1], row[0], block, bound))
            continue
        grown = body([*group, row])
        if group and (measure.size(grown) > bound.tokens or len(grown) > bound.chars):
            flush()
        group.append(row)
    flush()
    return pieces


def _cut(line: str, offset: int, block: int, bound: _Bound) -> list[_Piece]:
    """`line` (at `offset` in the source) in windows of the bound, as prose pieces."""
    return [
        _Piece(line[a:b], offset + a, offset + b, bound.measure.size(line[a:b]), block, "paragraph")
        for a, b in _windows(line, bound)
    ]


# -- packing ---------------------------------------------------------------------------------------


def _pack(
    source: str, heading_path: str | None, pieces: list[_Piece], bound: _Bound, overlap: int
) -> list[Chunk]:
    """Greedy packing that always advances: each chunk holds at least one new piece."""
    chunks: list[Chunk] = []
    current: list[_Piece] = []
    used = 0

    def fits(piece: _Piece) -> bool:
        chars = len(_joined(source, [*current, piece])) if current else len(piece.text)
        return used + piece.size <= bound.tokens and chars <= bound.chars

    for piece in pieces:
        if current and not fits(piece):
            chunks.append(_chunk(source, heading_path, current))
            current, used = _overlap(current, overlap)
            if not fits(piece):
                current, used = [], 0  # no room for the overlap beside this piece: drop it
        current.append(piece)
        used += piece.size
    if current:
        chunks.append(_chunk(source, heading_path, current))
    return chunks


def _overlap(emitted: list[_Piece], overlap: int) -> tuple[list[_Piece], int]:
    """The trailing pieces of `emitted` within `overlap` (a table's rows never carry over)."""
    kept: list[_Piece] = []
    used = 0
    for piece in reversed(emitted):
        if piece.kind == "table" or used + piece.size > overlap:
            break
        kept.insert(0, piece)
        used += piece.size
    return kept, used


def _joined(source: str, pieces: list[_Piece]) -> str:
    parts = [pieces[0].text]
    for prev, piece in itertools.pairwise(pieces):
        same_block = prev.block == piece.block and piece.kind != "table"
        parts.append(source[prev.end : piece.start] if same_block else "\n\n")
        parts.append(piece.text)
    return "".join(parts)


def _chunk(source: str, heading_path: str | None, pieces: list[_Piece]) -> Chunk:
    return Chunk(_joined(source, pieces), heading_path, pieces[0].start, pieces[-1].end)
