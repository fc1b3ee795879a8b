"""Slides and spreadsheets made by the real libraries (python-pptx, openpyxl), as uploads."""

from __future__ import annotations

import io
from collections.abc import Sequence

import openpyxl
import pptx
from pptx.util import Inches


def pptx_bytes(
    slides: Sequence[tuple[str, str, str]], *, table: Sequence[Sequence[str]] = ()
) -> bytes:
    """One slide per (title, body, notes); `table` goes on a last slide titled "Rates"."""
    presentation = pptx.Presentation()
    for title, body, notes in slides:
        slide = presentation.slides.add_slide(presentation.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
        slide.notes_slide.notes_text_frame.text = notes
    if table:
        slide = presentation.slides.add_slide(presentation.slide_layouts[5])
        slide.shapes.title.text = "Rates"
        shape = slide.shapes.add_table(
            len(table), len(table[0]), Inches(1), Inches(2), Inches(6), Inches(2)
        )
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                shape.table.cell(r, c).text = value
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


def xlsx_bytes(sheets: dict[str, Sequence[Sequence[object]]], *, empty_cells: int = 0) -> bytes:
    """A workbook of the given sheets; `empty_cells` blank-string cells widen the first one."""
    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(list(row))
    if empty_cells:
        first = workbook.worksheets[0]
        width = 1000
        for i in range(empty_cells):
            first.cell(
                row=len(sheets[first.title]) + 2 + i // width, column=1 + i % width, value=""
            )
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()
