"""Rewrite the two bash constructs bashlex cannot read into equivalent ones it can.

- ANSI-C quoting: `$'\\x72m'` is the word `rm` to bash, but bashlex reads it as `$x72m`, so a
  rule would never see `rm`. It is decoded here and re-quoted as `'rm'`.
- The `time` keyword (`time make`, `! time x`): bashlex refuses it. At a command's start it is
  rewritten as `\\time`, the plain word that the parser then unwraps like `nohup`.

Everything else is copied unchanged; the scanner only tracks quotes, comments and where a
command starts.
"""

from __future__ import annotations

__all__ = ["prepare"]

_BREAK = frozenset(" \t\n;&|()<>'\"\\$`")
_STARTS_COMMAND = frozenset(";&|()\n`")
_KEYWORDS = frozenset({"!", "then", "do", "else", "elif", "if", "while", "until", "{"})
_SIMPLE_ESCAPES = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t",
    "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip


def prepare(source: str) -> str:
    """`source` with ANSI-C strings decoded and `time` keywords made plain words."""
    out: list[str] = []
    index, size = 0, len(source)
    start = True
    quote: str | None = None
    while index < size:
        char = source[index]
        if quote is not None:
            if quote == '"' and char == "\\" and index + 1 < size:
                out.append(source[index : index + 2])
                index += 2
                continue
            if char == quote:
                quote = None
            out.append(char)
            index += 1
            continue
        if char == "\\":
            out.append(source[index : index + 2])
            index, start = index + 2, False
        elif source.startswith("$'", index):
            decoded, after = _ansi_c(source, index + 2)
            if decoded is None:  # unterminated: left as it is, for bashlex to refuse
                out.append(source[index:])
                break
            out.append(_quoted(decoded))
            index, start = after, False
        elif source.startswith('$"', index):  # locale translation: a plain double-quoted string
            out.append('"')
            quote, index, start = '"', index + 2, False
        elif char in "'\"":
            out.append(char)
            quote, index, start = char, index + 1, False
        elif char == "#" and (index == 0 or source[index - 1] in " \t\n;&|()"):
            end = source.find("\n", index)
            end = size if end < 0 else end
            out.append(source[index:end])
            index = end
        elif char in _STARTS_COMMAND:
            out.append(char)
            index, start = index + 1, True
        elif char in " \t":
            out.append(char)
            index += 1
        else:
            end = index
            while end < size and source[end] not in _BREAK:
                end += 1
            if end == index:  # `<`, `>`, `$` alone
                out.append(char)
                index, start = index + 1, False
                continue
            word = source[index:end]
            if start and word == "time":
                out.append("\\time")
            else:
                out.append(word)
                start = word in _KEYWORDS
            index = end
    return "".join(out)


def _quoted(text: str) -> str:
    """`text` as one bash word bashlex reads back unchanged."""
    if "'" not in text:
        return f"'{text}'"
    return '"' + "".join("\\" + c if c in '\\"$`' else c for c in text) + '"'


def _ansi_c(source: str, index: int) -> tuple[str | None, int]:
    """Decode a `$'...'` body starting at `index`: the text and the index after its `'` (None
    for the text when the string never ends)."""
    out: list[str] = []
    size = len(source)
    while index < size:
        char = source[index]
        if char == "'":
            return "".join(out).split("\0", 1)[0], index + 1
        if char != "\\" or index + 1 >= size:
            out.append(char)
            index += 1
            continue
        code = source[index + 1]
        index += 2
        if code in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[code])
        elif code in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[code]
            digits = _take(source, index, width, "0123456789abcdefABCDEF")
            if digits:
                out.append(chr(min(int(digits, 16), 0x10FFFF)))
            else:
                out.append("\\" + code)
            index += len(digits)
        elif code in "01234567":
            digits = code + _take(source, index, 2, "01234567")
            out.append(chr(int(digits, 8) & 0xFF))
            index += len(digits) - 1
        elif code == "c" and index < size:
            out.append(chr(ord(source[index]) & 0x1F))
            index += 1
        else:
            out.append("\\" + code)
    return None, index


def _take(source: str, index: int, width: int, allowed: str) -> str:
    end = index
    while end < len(source) and end - index < width and source[end] in allowed:
        end += 1
    return source[index:end]
