"""Split a docstring into the tool description and per-parameter descriptions.

Google, NumPy and Sphinx styles are parsed with griffe, which is imported only when a docstring
actually has a parameter section (griffe costs ~70 ms to import). The description keeps the
prose, admonitions ("Note: ...") and a one-line "Returns:" summary; parameter text moves into
the schema, and other sections (Raises, Examples) are dropped: the model cannot act on them.
"""

from __future__ import annotations

import inspect
import logging
import re
from dataclasses import dataclass, field
from typing import Any

_PARAM_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters)"
    r"\s*:?\s*$"
    r"|^\s*:param\s|^\s*-{3,}\s*$",
    re.MULTILINE,
)


@dataclass(frozen=True, slots=True)
class ParsedDocstring:
    description: str
    params: dict[str, str] = field(default_factory=dict)


def parse_docstring(func: Any) -> ParsedDocstring:
    doc = inspect.getdoc(func)
    if not doc:
        return ParsedDocstring("")
    if not _PARAM_SECTION.search(doc):
        return ParsedDocstring(doc.strip())
    return _parse_with_griffe(doc)


def _detect_style(doc: str) -> str:
    if re.search(r"^\s*:param\s", doc, re.MULTILINE):
        return "sphinx"
    if re.search(r"^\s*-{3,}\s*$", doc, re.MULTILINE):
        return "numpy"
    return "google"


_GOOGLE_HEADER = re.compile(
    r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters"
    r"|Returns?|Yields?|Raises|Examples?|Notes?|Warnings?|See Also|Attributes)\s*:\s*$"
)


def _separate_sections(doc: str) -> str:
    """Put a blank line before each Google section header: griffe only sees a header after
    one, and "Summary.\nArgs:" or an "Args:" block running into "Returns:" is common."""
    lines: list[str] = []
    for line in doc.splitlines():
        if lines and lines[-1].strip() and _GOOGLE_HEADER.match(line):
            lines.append("")
        lines.append(line)
    return "\n".join(lines)


def _parse_with_griffe(doc: str) -> ParsedDocstring:
    from griffe import Docstring, DocstringSectionKind

    logger = logging.getLogger("griffe")
    previous = logger.disabled
    logger.disabled = True  # griffe warns about missing types; our types come from hints
    style = _detect_style(doc)
    if style == "google":
        doc = _separate_sections(doc)
    try:
        sections = Docstring(doc).parse(style)  # type: ignore[arg-type]
    finally:
        logger.disabled = previous
    texts: list[str] = []
    params: dict[str, str] = {}
    for section in sections:
        if section.kind is DocstringSectionKind.text:
            texts.append(str(section.value).strip())
        elif section.kind in (
            DocstringSectionKind.parameters,
            DocstringSectionKind.other_parameters,
        ):
            for param in section.value:
                description = " ".join(str(param.description).split())
                if description:
                    params[param.name.lstrip("*")] = description
        elif section.kind is DocstringSectionKind.admonition:
            note = " ".join(str(section.value.description).split())
            texts.append(f"{section.title}: {note}" if section.title else note)
        elif section.kind is DocstringSectionKind.returns:
            returns = " ".join(" ".join(str(r.description).split()) for r in section.value)
            if returns.strip():
                texts.append(f"Returns: {returns.strip()}")
    return ParsedDocstring("\n\n".join(t for t in texts if t), params)
