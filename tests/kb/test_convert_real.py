"""Conversion of real documents (copied from Debian's /usr/share/doc, see fixtures/README.md)
and of document bombs: titles as plain strings, words kept apart in PDFs, no traceback on
stderr, chunks bounded in characters, and the memory and unzipped-size bounds."""

from __future__ import annotations

import logging
import zipfile
from pathlib import Path

import pytest

from tests.kb.formats import make_docx, make_memory_bomb_docx
from toolweave.kb import DocumentError, KnowledgeBase, convert_file
from toolweave.kb._convert_worker import words_glued
from toolweave.kb.chunking import DEFAULT_MAX_CHUNK_CHARS, chunk_markdown
from toolweave.kb.convert import ConversionLimits
from toolweave.kb.ingest import ingest_paths

FIXTURES = Path(__file__).parent / "fixtures"
HTML = FIXTURES / "libffi-The-Closure-API.html"
PDF = FIXTURES / "shared-mime-info-spec.pdf"


def test_a_real_html_page_converts_with_its_title_as_a_plain_string() -> None:
    converted = convert_file(HTML)
    assert type(converted.title) is str
    assert converted.title.startswith("The Closure API")
    assert "ffi_closure_alloc" in converted.markdown


def test_a_real_pdf_keeps_its_words_apart_and_its_chunks_bounded() -> None:
    converted = convert_file(PDF)
    text = " ".join(converted.markdown.split())
    assert "This is version 0.21 of the Shared MIME-info Database specification" in text
    assert not words_glued(converted.markdown)
    chunks = chunk_markdown(converted.markdown)
    assert chunks and max(len(c.text) for c in chunks) <= DEFAULT_MAX_CHUNK_CHARS


def test_glued_words_are_told_from_cjk_and_ordinary_prose() -> None:
    assert words_glued("Thisisversion0.21oftheSharedMIME-infoDatabasespecificationlastupdated")
    assert not words_glued("This is version 0.21 of the Shared MIME-info Database specification")
    assert not words_glued("混合检索把关键词和向量的排名融合在一起。" * 50)


def test_a_failed_conversion_prints_nothing_and_says_why_in_one_line(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    broken = tmp_path / "broken.docx"
    with zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("word/document.xml", "<not-a-docx/>")
    with pytest.raises(DocumentError) as raised:
        convert_file(broken)
    assert "\n" not in raised.value.message and "broken.docx: conversion failed" in str(
        raised.value
    )
    assert capfd.readouterr().err == ""  # the worker's stderr is this process's fd 2


async def test_ingest_logs_one_line_per_skipped_file(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.html").write_bytes(HTML.read_bytes())
    with zipfile.ZipFile(docs / "broken.docx", "w") as archive:
        archive.writestr("word/document.xml", "<not-a-docx/>")
    caplog.set_level(logging.WARNING)
    async with KnowledgeBase(tmp_path / "kb.db", "hash") as kb:
        summary = await ingest_paths(kb, [docs])
    assert [r.title for r in summary.added] == [convert_file(HTML).title]
    skipped = [r.getMessage() for r in caplog.records]
    assert len(skipped) == 1 and skipped[0].startswith(f"skipped: {docs / 'broken.docx'}")
    assert "Traceback" not in capfd.readouterr().err


def test_chunks_are_bounded_in_characters_as_well_as_tokens() -> None:
    glued = "Thisisversionzerooftheshareddatabase" * 600  # one "word" of 21,600 characters
    chunks = chunk_markdown(f"# Spec\n\n{glued}\n\nA short closing paragraph.", max_chars=5000)
    assert max(len(c.text) for c in chunks) <= 5000
    assert "".join(c.text for c in chunks[:-1]).replace("\n", "").startswith(glued[:20000])
    cjk = "混合检索把关键词和向量的排名融合在一起。" * 100
    assert max(len(c.text) for c in chunk_markdown(cjk, 800, 0, max_chars=300)) <= 300
    fence = "```\n" + "x = 1\n" * 2000 + "```"
    assert max(len(c.text) for c in chunk_markdown(fence, max_chars=4000)) <= 4000
    wide_row = "| " + " ".join(f"[xsltFunc{i}](APIchunk{i}.html)" for i in range(800)) + " |"
    table = f"| index | links |\n|---|---|\n| a | b |\n{wide_row}\n| c | d |"
    chunks = chunk_markdown(table, max_chars=3000)
    assert max(len(c.text) for c in chunks) <= 3000
    assert chunks[0].text.startswith("| index | links |\n|---|---|\n| a | b |")


def test_a_zip_document_over_its_unzipped_bound_is_refused_before_conversion(
    tmp_path: Path,
) -> None:
    bomb = make_memory_bomb_docx(tmp_path / "bomb.docx", 64)
    assert bomb.stat().st_size < 1_000_000
    with pytest.raises(DocumentError, match=r"bomb\.docx: refused: it holds \d+ bytes uncompressed"
                       r", over max_unzipped_bytes \(16777216\)"):  # fmt: skip
        convert_file(bomb, ConversionLimits(max_unzipped_bytes=16 * 1024 * 1024))


def test_a_memory_bomb_is_stopped_at_the_memory_limit(tmp_path: Path) -> None:
    bomb = make_memory_bomb_docx(tmp_path / "bomb.docx", 16)  # about 500 MB to convert
    limits = ConversionLimits(max_convert_memory=350 * 1024 * 1024)
    with pytest.raises(DocumentError, match=r"bomb\.docx: refused: .* max_convert_memory"):
        convert_file(bomb, limits)
    guide = convert_file(make_docx(tmp_path / "guide.docx"), limits)  # a fresh worker
    assert "Vectors" in guide.markdown


async def test_an_unchanged_file_is_not_converted_again(tmp_path: Path) -> None:
    from toolweave.kb._convert_worker import WORKER

    docs = tmp_path / "docs"
    docs.mkdir()
    copy, page = docs / "copy.html", docs / "page.html"
    copy.write_bytes(HTML.read_bytes())
    page.write_bytes(HTML.read_bytes())
    async with KnowledgeBase(tmp_path / "kb.db", "hash") as kb:
        first = await ingest_paths(kb, [docs])
        assert [r.status for r in first.added] == ["added", "duplicate"]
        WORKER.stop()
        again = await ingest_paths(kb, [docs])
        assert WORKER._process is None  # known by their bytes: no converter was started
        assert [r.status for r in again.added] == ["unchanged", "duplicate"]
        assert again.added[0].report == first.added[0].report
        assert again.added[1].duplicate_of == first.added[0].doc_id
        page.write_bytes(HTML.read_bytes().replace(b"Closure API", b"Closure Interface"))
        changed = await ingest_paths(kb, [docs])
    assert [r.status for r in changed.added] == ["unchanged", "added"]
