"""Document conversion: real docx/pdf/xlsx/pptx/html files made in the test, and their reports."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.kb.formats import (
    SECTION_EN,
    SECTION_ZH,
    make_docx,
    make_html,
    make_paragraph_bomb_docx,
    make_pdf,
    make_pptx,
    make_xlsx,
)
from toolweave.kb import DocumentError, convert_file
from toolweave.kb.convert import ConversionLimits


def test_docx_keeps_headings_and_table(tmp_path: Path) -> None:
    doc = convert_file(make_docx(tmp_path / "guide.docx"))
    assert doc.title == "Retrieval Guide 检索指南"
    assert "## 混合检索" in doc.markdown and SECTION_ZH in doc.markdown
    assert "| 北京 | 21893095 |" in doc.markdown
    report = doc.report
    assert (report.format, report.headings, report.tables, report.warnings) == ("docx", 3, 1, [])


def test_pdf_reports_pages_and_warns_about_flat_text(tmp_path: Path) -> None:
    doc = convert_file(make_pdf(tmp_path / "scan.pdf", pages=3))
    assert SECTION_ZH in doc.markdown and "Page 3" in doc.markdown
    assert "\x0c" not in doc.markdown  # page breaks become line breaks
    assert doc.report.pages == 3 and doc.report.headings == 0
    assert any("flat text with no headings" in w for w in doc.report.warnings)
    assert doc.title == "scan"


def test_xlsx_sheets_are_sections_with_tables(tmp_path: Path) -> None:
    doc = convert_file(make_xlsx(tmp_path / "data.xlsx"))
    assert "## 人口" in doc.markdown and "| 北京 | 21893095 |" in doc.markdown
    assert doc.report.pages == 2 and doc.report.tables == 2


def test_pptx_slides_are_counted(tmp_path: Path) -> None:
    doc = convert_file(make_pptx(tmp_path / "deck.pptx"))
    assert doc.report.pages == 2 and SECTION_EN in doc.markdown and "# 混合检索" in doc.markdown


def test_html_title_headings_and_table(tmp_path: Path) -> None:
    doc = convert_file(make_html(tmp_path / "page.html"))
    assert doc.title == "Retrieval Guide 检索指南"
    assert doc.report.headings == 3 and doc.report.tables == 1


def test_markdown_and_text_are_read_directly(tmp_path: Path) -> None:
    md = tmp_path / "notes.md"
    md.write_text("\ufeff# 笔记\r\n\r\n内容。\r\n", encoding="utf-8")
    doc = convert_file(md)
    assert doc.markdown == "# 笔记\n\n内容。\n" and doc.title == "笔记"
    assert doc.report.summary().endswith("1 headings, 0 tables")
    txt = tmp_path / "plain.txt"
    txt.write_text("just text", encoding="utf-8")
    assert convert_file(txt).report.warnings == []  # plain text has no headings to lose
    binary_ish = tmp_path / "dump.txt"
    binary_ish.write_text("col\x00umn 一\x00二", encoding="utf-8")
    assert convert_file(binary_ish).markdown == "column 一二"  # no store keeps a NUL


def test_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(DocumentError, match="no such file"):
        convert_file(tmp_path / "missing.pdf")
    binary = tmp_path / "image.bin"
    binary.write_bytes(b"\x00\x01")
    with pytest.raises(DocumentError, match=r"cannot convert \.bin.*supported: \.csv"):
        convert_file(binary)
    latin = tmp_path / "latin.txt"
    latin.write_bytes("café".encode("latin-1"))
    with pytest.raises(DocumentError, match=r"not UTF-8 text.*save it as UTF-8"):
        convert_file(latin)
    broken = tmp_path / "broken.docx"
    broken.write_bytes(b"not a zip file")
    with pytest.raises(DocumentError, match=r"broken\.docx: conversion failed"):
        convert_file(broken)


def test_empty_pdf_warns_no_text(tmp_path: Path) -> None:
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(tmp_path / "blank.pdf"))
    pdf.showPage()
    pdf.save()
    report = convert_file(tmp_path / "blank.pdf").report
    assert report.characters == 0 and any("no text came out" in w for w in report.warnings)


def test_a_file_over_max_file_bytes_is_refused_before_it_is_read(tmp_path: Path) -> None:
    big = tmp_path / "大文件.txt"
    big.write_text("北京" * 1000, encoding="utf-8")  # 6000 bytes
    limits = ConversionLimits(max_file_bytes=4096)
    with pytest.raises(
        DocumentError, match=r"大文件\.txt: refused: 6000 bytes, over max_file_bytes"
    ):
        convert_file(big, limits)
    assert convert_file(big, ConversionLimits(max_file_bytes=6000)).report.characters == 2000


def test_a_paragraph_bomb_docx_is_stopped_at_the_time_limit(tmp_path: Path) -> None:
    bomb = make_paragraph_bomb_docx(tmp_path / "bomb.docx", 40_000)
    assert bomb.stat().st_size < 10_000
    with pytest.raises(DocumentError, match=r"bomb\.docx: refused: .* longer than 1 s"):
        convert_file(bomb, ConversionLimits(convert_timeout=1.0))
    guide = convert_file(make_docx(tmp_path / "guide.docx"))  # a fresh worker takes over
    assert SECTION_ZH in guide.markdown


def test_markdown_over_its_bound_is_refused(tmp_path: Path) -> None:
    page = make_html(tmp_path / "page.html")
    with pytest.raises(DocumentError, match=r"page\.html: refused: .* over max_markdown_chars"):
        convert_file(page, ConversionLimits(max_markdown_chars=20))


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="convert_timeout must be positive"):
        ConversionLimits(convert_timeout=0)


async def test_ingest_says_which_file_was_refused_and_why(tmp_path: Path) -> None:
    from toolweave.kb import KnowledgeBase
    from toolweave.kb.ingest import ingest_paths

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "small.md").write_text("# 小\n\n短文。", encoding="utf-8")
    (docs / "huge.txt").write_text("x" * 5000, encoding="utf-8")
    limits = ConversionLimits(max_file_bytes=4096)
    async with KnowledgeBase(tmp_path / "kb.db", "hash", conversion=limits) as kb:
        summary = await ingest_paths(kb, [docs])
    assert [r.status for r in summary.added] == ["added"]
    reason = summary.failed[str(docs / "huge.txt")]
    assert "5000 bytes, over max_file_bytes (4096)" in reason


def test_pdf_pages_come_from_the_page_tree_not_form_feeds(tmp_path: Path) -> None:
    from reportlab.pdfgen import canvas

    path = tmp_path / "mostly_blank.pdf"
    pdf = canvas.Canvas(str(path))
    pdf.drawString(72, 750, SECTION_EN)
    for _ in range(4):  # the text's form feeds after page 1 are trailing whitespace
        pdf.showPage()
    pdf.save()
    doc = convert_file(path)
    assert doc.report.pages == 4 and SECTION_EN in doc.markdown


def test_setext_headings_count_as_headings_not_tables(tmp_path: Path) -> None:
    path = tmp_path / "setext.md"
    path.write_text(
        "Guide\n=====\n\nIntro text.\n\nInstall\n-------\n\nRun it.\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n- item\n---\n",
        encoding="utf-8",
    )
    report = convert_file(path).report
    assert (report.headings, report.tables) == (2, 1)
