"""Build test documents in code, so the fixtures are readable and never go stale.

Every builder returns the bytes an upload would carry.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence

import docx
from docx.enum.text import WD_BREAK
from PIL import Image
from pypdf import PdfReader, PdfWriter
from reportlab.lib.styles import getSampleStyleSheet
from reportlab.pdfgen import canvas
from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

ZWNJ = "\u200c"
# "Employees may take twenty-six days of leave a year." - "می‌توانند" needs its ZWNJ.
PERSIAN_SENTENCE = f"کارمندان می{ZWNJ}توانند سالانه بیست و شش روز مرخصی بگیرند."
PERSIAN_HEADING = f"مرخصی{ZWNJ}ها"

LONG_PARAGRAPH = (
    "The onboarding guide explains how new staff request laptops, which forms they "
    "sign on the first day, and who answers questions about payroll and benefits."
)


# --- PDF -------------------------------------------------------------------


def pdf_bytes(pages: Sequence[Sequence[str]], *, title: str | None = None) -> bytes:
    """A PDF with one list of paragraphs per page, laid out by ReportLab."""
    buffer = io.BytesIO()
    # ReportLab writes the title "untitled" when none is given, as real tools do.
    template = SimpleDocTemplate(buffer, title=title or "untitled")
    style = getSampleStyleSheet()["BodyText"]
    story: list[object] = []
    for number, paragraphs in enumerate(pages):
        if number:
            story.append(PageBreak())
        story.extend(Paragraph(text, style) for text in paragraphs)
    template.build(story)
    return buffer.getvalue()


def outline_pdf(sections: Sequence[tuple[str, str]], *, metadata_title: str | None = None) -> bytes:
    """One page per (heading, paragraph), each heading drawn large and bookmarked in the
    outline, as a word processor exports a document with headings."""
    buffer = io.BytesIO()
    page = canvas.Canvas(buffer)
    if metadata_title is not None:
        page.setTitle(metadata_title)
    for number, (heading, paragraph) in enumerate(sections):
        key = f"section-{number}"
        page.bookmarkPage(key)
        page.addOutlineEntry(heading, key, level=0)
        page.setFont("Helvetica-Bold", 20)
        page.drawString(72, 760, heading)
        page.setFont("Helvetica", 11)
        page.drawString(72, 730, paragraph)
        page.showPage()
    page.save()
    return buffer.getvalue()


def title_page_pdf(title: str, paragraph: str) -> bytes:
    """A page whose title is only its largest text: no metadata title, no outline."""
    buffer = io.BytesIO()
    page = canvas.Canvas(buffer)
    page.setFont("Helvetica-Bold", 22)
    page.drawString(72, 760, title)
    page.setFont("Helvetica", 11)
    for i, line in enumerate((paragraph, paragraph, paragraph)):
        page.drawString(72, 730 - 14 * i, line)
    page.showPage()
    page.save()
    return buffer.getvalue()


def lines_pdf(lines: Sequence[str]) -> bytes:
    """One page with each string drawn as its own line, for line-break handling."""
    buffer = io.BytesIO()
    page = canvas.Canvas(buffer)
    y = 800
    for line in lines:
        page.drawString(72, y, line)
        y -= 14
    page.showPage()
    page.save()
    return buffer.getvalue()


def image_only_pdf() -> bytes:
    """A page with drawing but no text, like a scan."""
    buffer = io.BytesIO()
    page = canvas.Canvas(buffer)
    page.rect(72, 72, 300, 400, fill=1)
    page.showPage()
    page.save()
    return buffer.getvalue()


def encrypted_pdf(*, user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes([["Secret plans."]]))))
    writer.encrypt(user_password=user_password, owner_password="owner-secret")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def truncated_pdf() -> bytes:
    data = pdf_bytes([[LONG_PARAGRAPH], ["Second page."]])
    return data[: len(data) // 2]


# --- DOCX ------------------------------------------------------------------


def docx_bytes(document: docx.document.Document) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def handbook_docx() -> bytes:
    document = docx.Document()
    document.add_heading("Employee Handbook", level=0)
    document.add_paragraph("Welcome to   the company.")
    document.add_heading("Setup", level=1)
    document.add_paragraph("Read this first.")
    document.add_heading("Install", level=2)
    document.add_paragraph("Run the installer.", style="List Bullet")
    table = document.add_table(rows=2, cols=3)
    rows = (("Tool", "Version", "Owner"), ("Python", "3.11", "IT"))
    for row, values in zip(table.rows, rows, strict=True):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    document.add_heading("Support", level=1)
    document.add_paragraph("Email the help desk.")
    return docx_bytes(document)


def merged_cells_docx() -> bytes:
    document = docx.Document()
    table = document.add_table(rows=2, cols=3)
    merged = table.cell(0, 0).merge(table.cell(0, 1))
    merged.text = "Region"
    table.cell(0, 2).text = "Total"
    for cell, value in zip(table.rows[1].cells, ("North", "South", "12"), strict=True):
        cell.text = value
    return docx_bytes(document)


def titled_docx(*, core_title: str | None, heading: str | None) -> bytes:
    """No Title paragraph: exercises the metadata and first-heading fallbacks."""
    document = docx.Document()
    if core_title is not None:
        document.core_properties.title = core_title
    if heading is not None:
        document.add_heading(heading, level=2)
    document.add_paragraph("Body text.")
    return docx_bytes(document)


def empty_docx() -> bytes:
    document = docx.Document()
    document.add_paragraph("   ")
    document.add_paragraph().add_run().add_break(WD_BREAK.PAGE)
    return docx_bytes(document)


def persian_docx() -> bytes:
    document = docx.Document()
    document.add_heading(PERSIAN_HEADING, level=1)
    document.add_paragraph(PERSIAN_SENTENCE)
    return docx_bytes(document)


def zip_bytes(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


# --- Text formats ----------------------------------------------------------

HANDBOOK_HTML = """<!doctype html>
<html lang="en">
<head><title>  Staff   Handbook </title><style>p { color: red }</style></head>
<body>
  <nav><a href="/">Home</a> <a href="/about">About</a></nav>
  <script>var tracking = "do not index";</script>
  <h1>Handbook</h1>
  <p>Welcome <b>aboard</b>, read <a href="#setup">the setup</a>.</p>
  <h2>Setup</h2>
  <div>Loose text in a div.<p>A paragraph<br>over two lines.</p></div>
  <h3>Install</h3>
  <ul><li>First step<ul><li>Nested step</li></ul></li><li>Second step</li></ul>
  <pre>pip   install
    ragplatform</pre>
  <h2>Reference</h2>
  <table>
    <thead><tr><th>Tool</th><th>Version</th></tr></thead>
    <tbody><tr><td>Python</td><td>3.11</td></tr><tr><td></td><td></td></tr></tbody>
  </table>
  <blockquote>Quoted advice.</blockquote>
  <dl><dt>Term</dt><dd>Definition.</dd></dl>
  <noscript>Enable JavaScript</noscript>
  <template><p>Hidden template</p></template>
  <footer>Copyright footer</footer>
</body>
</html>
"""

HANDBOOK_MARKDOWN = """---
title: Ignored front matter
tags: [a, b]
---
Handbook
========

Welcome *aboard*, read [the setup](#setup) and see ![the logo](logo.png).
This line continues the paragraph with `inline code`.

## Setup

- First **step**
  - Nested step
- Second step

### Install

```bash
pip   install ragplatform
```

| Tool | Version |
|------|---------|
| Python | 3.11 |

## Reference

> Quoted advice.

<div class="note">Raw <em>HTML</em> note.</div>
"""


# --- images ------------------------------------------------------------------

IMAGE_FORMATS = {".png": "PNG", ".jpg": "JPEG", ".jpeg": "JPEG", ".tif": "TIFF", ".tiff": "TIFF"}


def image_bytes(image_format: str, *, size: tuple[int, int] = (64, 64)) -> bytes:
    """A small blank picture in `image_format` ("PNG", "JPEG", "TIFF")."""
    buffer = io.BytesIO()
    Image.new("L", size, color=255).save(buffer, format=image_format)
    return buffer.getvalue()
