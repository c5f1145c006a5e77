"""The documents `toolweave doctor` converts to prove the kb extra works: a DOCX, an HTML page
and a PDF, written by hand (no office or PDF library needed) into a temporary folder.

Each carries the same bilingual sentence, so the check can say whether the text came through,
not only whether the converter ran: a converter that runs but loses the text (the lxml 6.2
break of markitdown's DOCX step did exactly this, as an error) fails the check.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

SENTENCE = "toolweave doctor checks conversion"
"""The text every sample holds (ASCII: the hand-made PDF uses a standard Type 1 font)."""
_HTML = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Doctor 医生</title></head>
<body><h1>Doctor 医生</h1><p>{SENTENCE}.</p></body></html>
"""
_WORD = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_PACKAGE = "http://schemas.openxmlformats.org/package/2006"
_OFFICE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
_DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"


def write_samples(folder: Path) -> list[Path]:
    """The three sample documents, written into `folder`."""
    html = folder / "doctor.html"
    html.write_text(_HTML, encoding="utf-8")
    return [_docx(folder / "doctor.docx"), html, _pdf(folder / "doctor.pdf")]


def _docx(path: Path) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "[Content_Types].xml",
            f'<?xml version="1.0"?><Types xmlns="{_PACKAGE}/content-types">'
            '<Default Extension="rels" ContentType="application/'
            'vnd.openxmlformats-package.relationships+xml"/>'
            '<Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/word/document.xml" ContentType="{_DOCX_TYPE}"/></Types>',
        )
        archive.writestr(
            "_rels/.rels",
            f'<?xml version="1.0"?><Relationships xmlns="{_PACKAGE}/relationships">'
            f'<Relationship Id="rId1" Type="{_OFFICE}" Target="word/document.xml"/>'
            "</Relationships>",
        )
        archive.writestr(
            "word/document.xml",
            f'<?xml version="1.0"?><w:document xmlns:w="{_WORD}"><w:body>'
            f"<w:p><w:r><w:t>{SENTENCE}</w:t></w:r></w:p></w:body></w:document>",
        )
    return path


def _pdf(path: Path) -> Path:
    """A one-page PDF 1.4 with the sentence in Helvetica, its cross-reference table exact."""
    stream = f"BT /F1 12 Tf 72 720 Td ({SENTENCE}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    body = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, content in enumerate(objects, start=1):
        offsets.append(len(body))
        body += b"%d 0 obj\n%s\nendobj\n" % (number, content)
    xref = len(body)
    body += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    body += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    body += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    path.write_bytes(bytes(body))
    return path
