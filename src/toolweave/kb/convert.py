"""Any document to Markdown, with a report of what the conversion found.

Markdown is the knowledge base's one input format: it keeps headings (the chunker's section
paths) and tables. Plain text and Markdown are read directly; PDF, Word, PowerPoint, Excel, HTML
and the other formats markitdown knows go through it (the optional `kb` extra, imported only
when such a file arrives). The `ConversionReport` says what came out, so a user sees at once that
a PDF produced flat text with no headings, or that a scan produced no text at all.

Conversion is bounded (`ConversionLimits`): a file over `max_file_bytes` is refused before it is
read; a zip-based document (DOCX, PPTX, XLSX, EPUB, ODF) whose members add up to more than
`max_unzipped_bytes` uncompressed is refused before conversion (the sizes its directory declares:
Python's zip reader stops a member at its declared size, so a lying directory cannot inflate
more); markitdown runs in a worker process killed at `convert_timeout` and limited to
`max_convert_memory` bytes of heap (`_convert_worker.py`), and Markdown over
`max_markdown_chars` is refused before it leaves the worker; each refusal names the file and
the setting.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from toolweave.kb.chunking import outline_counts
from toolweave.kb.errors import DocumentError

#: Read directly as UTF-8 text.
TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".text", ".rst"})
#: Converted by markitdown (`pip install 'toolweave[kb]'`).
CONVERTED_SUFFIXES = frozenset(
    {".pdf", ".docx", ".pptx", ".xlsx", ".xls", ".html", ".htm", ".csv", ".json", ".xml", ".epub"}
)
SUPPORTED_SUFFIXES = TEXT_SUFFIXES | CONVERTED_SUFFIXES

_FIRST_H1 = re.compile(r"^ {0,3}#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_SLIDE = re.compile(r"^<!-- Slide number: \d+ -->$", re.MULTILINE)
# Formats whose documents normally have headings: none found is worth a warning.
_HAS_HEADINGS = frozenset({"pdf", "docx", "pptx", "html", "htm", "epub"})
_ZIP_MAGIC = b"PK\x03\x04"
# How binary formats start; markitdown would read a corrupt one as plain text instead.
_MAGIC = {
    ".pdf": b"%PDF",
    ".docx": _ZIP_MAGIC,
    ".pptx": _ZIP_MAGIC,
    ".xlsx": _ZIP_MAGIC,
    ".epub": _ZIP_MAGIC,
    ".xls": b"\xd0\xcf\x11\xe0",
}
CONVERSION_REVISION = 2
"""Bumped whenever conversion output changes, so an unchanged file is converted again once."""
DEFAULT_MAX_FILE_BYTES = 32 * 1024 * 1024
"""Bytes of the largest file read or converted (`[kb].max_file_bytes`)."""
DEFAULT_CONVERT_TIMEOUT = 60.0
"""Seconds one markitdown conversion may run before its process is killed."""
DEFAULT_MAX_MARKDOWN_CHARS = 16_000_000
"""Characters of Markdown one converted file may produce."""
DEFAULT_MAX_UNZIPPED_BYTES = 256 * 1024 * 1024
"""Bytes a zip-based document (DOCX, PPTX, XLSX, EPUB, ODF) may hold uncompressed."""
DEFAULT_MAX_CONVERT_MEMORY = 1024 * 1024 * 1024
"""Bytes of heap (`RLIMIT_DATA`) the conversion worker may use beyond none: its whole data
segment, markitdown's imports included (about 200 MB)."""


@dataclass(frozen=True, slots=True)
class ConversionLimits:
    """The bounds of `convert_file`, each a named setting with a default."""

    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    convert_timeout: float = DEFAULT_CONVERT_TIMEOUT
    max_markdown_chars: int = DEFAULT_MAX_MARKDOWN_CHARS
    max_unzipped_bytes: int = DEFAULT_MAX_UNZIPPED_BYTES
    max_convert_memory: int = DEFAULT_MAX_CONVERT_MEMORY

    def __post_init__(self) -> None:
        for name in (
            "max_file_bytes", "convert_timeout", "max_markdown_chars", "max_unzipped_bytes",
            "max_convert_memory",
        ):  # fmt: skip
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, not {getattr(self, name)}")


DEFAULT_LIMITS = ConversionLimits()


@dataclass(slots=True)
class ConversionReport:
    """What converting one document produced; `warnings` are for the user, not errors."""

    source: str
    format: str
    characters: int
    headings: int
    tables: int
    pages: int | None = None
    warnings: list[str] = field(default_factory=list)

    def summary(self) -> str:
        pages = f"{self.pages} pages, " if self.pages is not None else ""
        return (
            f"{self.source}: {self.format}, {pages}{self.characters} characters, "
            f"{self.headings} headings, {self.tables} tables"
        )


@dataclass(slots=True)
class ConvertedDocument:
    markdown: str
    title: str
    report: ConversionReport


def convert_file(path: str | Path, limits: ConversionLimits = DEFAULT_LIMITS) -> ConvertedDocument:
    """Read `path` as Markdown. Raises `DocumentError` naming the file and the fix."""
    file = Path(path)
    if not file.is_file():
        raise DocumentError(f"{file}: no such file; check the path")
    size = file.stat().st_size
    if size > limits.max_file_bytes:
        raise DocumentError(
            f"{file}: refused: {size} bytes, over max_file_bytes ({limits.max_file_bytes}); "
            "split the file or raise max_file_bytes"
        )
    suffix = file.suffix.lower()
    if suffix in TEXT_SUFFIXES:
        try:
            markdown = file.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DocumentError(
                f"{file}: not UTF-8 text ({exc.reason} at byte {exc.start}); save it as UTF-8"
            ) from None
        title_hint = None
    elif suffix in CONVERTED_SUFFIXES:
        markdown, title_hint = _markitdown(file, limits)
    else:
        known = ", ".join(sorted(SUPPORTED_SUFFIXES))
        raise DocumentError(
            f"{file}: cannot convert {suffix or 'files without an extension'} to Markdown; "
            f"supported: {known}"
        )
    markdown = markdown.replace("\r\n", "\n")
    report = _report(file, suffix.lstrip(".") or "text", markdown)
    markdown = markdown.replace("\x0c", "\n").replace("\x00", "")  # page breaks; NULs of binaries
    return ConvertedDocument(markdown, _title(markdown, title_hint, file), report)


def describe_text(text: str, source: str) -> ConversionReport:
    """The report for text added directly (no conversion)."""
    return _report(Path(source), "text", text)


def _markitdown(file: Path, limits: ConversionLimits) -> tuple[str, str | None]:
    magic = _MAGIC.get(file.suffix.lower())
    with file.open("rb") as f:
        start = f.read(len(_ZIP_MAGIC))
    if magic is not None and not start.startswith(magic):
        raise DocumentError(
            f"{file}: conversion failed: not a valid {file.suffix} file (its first bytes "
            "are wrong); check the file opens in its own application"
        )
    if start == _ZIP_MAGIC:
        _check_unzipped_size(file, limits.max_unzipped_bytes)
    from toolweave.kb._convert_worker import WORKER

    return WORKER.convert(
        file, limits.convert_timeout, limits.max_markdown_chars, limits.max_convert_memory
    )


def _check_unzipped_size(file: Path, limit: int) -> None:
    """Refuse a zip-based document whose members add up to more than `limit` bytes."""
    try:
        with zipfile.ZipFile(file) as archive:
            total = sum(member.file_size for member in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise DocumentError(
            f"{file}: conversion failed: not a readable {file.suffix} file ({exc}); check the "
            "file opens in its own application"
        ) from None
    if total > limit:
        raise DocumentError(
            f"{file}: refused: it holds {total} bytes uncompressed, over max_unzipped_bytes "
            f"({limit}); split the document or raise max_unzipped_bytes"
        )


def _report(file: Path, kind: str, markdown: str) -> ConversionReport:
    text = markdown.strip()
    headings, tables = outline_counts(markdown)
    report = ConversionReport(
        source=str(file),
        format=kind,
        characters=len(text.replace("\x0c", "")),
        headings=headings,
        tables=tables,
    )
    if kind == "pdf":
        report.pages = _pdf_pages(file, text)
    elif kind == "pptx":
        report.pages = len(_SLIDE.findall(markdown))
    elif kind in ("xlsx", "xls"):
        report.pages = report.headings  # one "## Sheet" heading per worksheet
    if not text:
        report.warnings.append(
            "no text came out (a scanned image or an empty file?); run OCR first or add the "
            "text with add_text"
        )
    elif report.headings == 0 and kind in _HAS_HEADINGS:
        report.warnings.append(
            f"the {kind} came out as flat text with no headings, so chunks carry no section "
            "path; a tagged export (or a Markdown copy) retrieves better"
        )
    return report


def _pdf_pages(file: Path, text: str) -> int:
    """The PDF's page count from its page tree (pdfminer, which markitdown converts with);
    form feeds in the text undercount (blank pages, converters that drop them)."""
    try:
        from pdfminer.pdfpage import PDFPage

        with file.open("rb") as f:
            return sum(1 for _ in PDFPage.get_pages(f))
    except Exception:  # a page tree pdfminer cannot walk: the text still converted
        return text.count("\x0c") + 1 if text else 0


def _title(markdown: str, hint: str | None, file: Path) -> str:
    if hint and hint.strip():
        return hint.strip()
    heading = _FIRST_H1.search(markdown)
    return heading.group(1).strip() if heading else file.stem
