"""Real documents in several formats, made with each format's own library (no fixtures on disk).

Every maker writes the same bilingual content: a title, two sections, a table, so tests can
check what each conversion keeps.
"""

from __future__ import annotations

from pathlib import Path

SECTION_EN = "Vector search ranks passages by cosine similarity."
SECTION_ZH = "混合检索把关键词和向量的排名融合在一起。"
TABLE = [("城市", "population"), ("北京", "21893095"), ("Shanghai", "24870895")]


def make_docx(path: Path) -> Path:
    import docx

    document = docx.Document()
    document.add_heading("Retrieval Guide 检索指南", 1)
    document.add_heading("Vectors", 2)
    document.add_paragraph(SECTION_EN)
    document.add_heading("混合检索", 2)
    document.add_paragraph(SECTION_ZH)
    table = document.add_table(rows=len(TABLE), cols=2)
    for r, row in enumerate(TABLE):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.save(str(path))
    return path


def make_pdf(path: Path, pages: int = 2) -> Path:
    """A PDF with a CJK font built into reportlab (no font file needed); flat text, no tags."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    pdf = canvas.Canvas(str(path))
    for page in range(pages):
        pdf.setFont("STSong-Light", 12)
        pdf.drawString(72, 750, f"Page {page + 1}: {SECTION_EN}")
        pdf.drawString(72, 720, SECTION_ZH)
        pdf.showPage()
    pdf.save()
    return path


def make_xlsx(path: Path) -> Path:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "人口"
    for row in TABLE:
        sheet.append(list(row))
    second = book.create_sheet("Notes")
    second.append(["note"])
    second.append([SECTION_EN])
    book.save(str(path))
    return path


def make_pptx(path: Path) -> Path:
    from pptx import Presentation

    deck = Presentation()
    for title, body in (("Vectors", SECTION_EN), ("混合检索", SECTION_ZH)):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    deck.save(str(path))
    return path


def make_html(path: Path) -> Path:
    rows = "".join(f"<tr><td>{a}</td><td>{b}</td></tr>" for a, b in TABLE[1:])
    path.write_text(
        "<html><head><title>Retrieval Guide 检索指南</title></head><body>"
        "<h1>Retrieval Guide 检索指南</h1>"
        f"<h2>Vectors</h2><p>{SECTION_EN}</p>"
        f"<h2>混合检索</h2><p>{SECTION_ZH}</p>"
        f"<table><tr><th>{TABLE[0][0]}</th><th>{TABLE[0][1]}</th></tr>{rows}</table>"
        "</body></html>",
        encoding="utf-8",
    )
    return path


def make_paragraph_bomb_docx(path: Path, paragraphs: int) -> Path:
    """A tiny .docx (deflate turns repeated paragraphs into a few KB) that takes markitdown
    seconds to minutes: its time grows faster than linearly with `paragraphs`."""
    return _docx_with_body(path, "<w:p><w:r><w:t>段落</w:t></w:r></w:p>" * paragraphs)


def make_memory_bomb_docx(path: Path, megabytes: int) -> Path:
    """A .docx of a few hundred KB holding one paragraph of `megabytes` MB of text: parsing
    and converting it takes several times that in memory (the shape of the 143 KB file that
    drove the converter to 1.4 GB)."""
    words = "memory bomb " * (megabytes * 1024 * 1024 // 12)
    return _docx_with_body(path, f"<w:p><w:r><w:t>{words}</w:t></w:r></w:p>")


def _docx_with_body(path: Path, body: str) -> Path:
    import zipfile

    main = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    package = "http://schemas.openxmlformats.org/package/2006"
    document_type = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    office = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "[Content_Types].xml",
            f'<?xml version="1.0"?><Types xmlns="{package}/content-types">'
            '<Default Extension="rels" ContentType="application/'
            'vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/word/document.xml" ContentType="{document_type}.main+xml"/>'
            "</Types>",
        )
        archive.writestr(
            "_rels/.rels",
            f'<?xml version="1.0"?><Relationships xmlns="{package}/relationships">'
            f'<Relationship Id="rId1" Type="{office}" Target="word/document.xml"/>'
            "</Relationships>",
        )
        archive.writestr(
            "word/document.xml",
            f'<?xml version="1.0"?><w:document xmlns:w="{main}"><w:body>{body}</w:body>'
            "</w:document>",
        )
    return path
