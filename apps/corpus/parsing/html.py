"""HTML via selectolax's Lexbor parser.

Block-level elements end the running text, so text sitting directly in a
<div> still becomes a block; headings update the heading path; each table row
is one block with its cells joined by " | ", a header row (in <thead>, or all <th>) marked as
the table's head so chunking keeps it above its rows as Markdown tables are; a <pre> is one
code block, its lines kept.
"""

from __future__ import annotations

from selectolax.lexbor import LexborHTMLParser, LexborNode

from .blocks import BlockCollector, collapse_whitespace
from .decode import decode_text
from .types import HEAD_ROW, ROW, Extracted

DROPPED_TAGS = ["script", "style", "nav", "footer", "noscript", "template"]
HEADING_LEVELS = {f"h{level}": level for level in range(1, 7)}
CELL_TAGS = frozenset({"td", "th"})
CELL_SEPARATOR = " | "
# Elements that start and end a block; anything else is inline and joins the run.
BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "dd", "details",
        "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "form", "header",
        "hr", "li", "main", "ol", "p", "section", "summary", "table", "tbody",
        "tfoot", "thead", "ul",
    }
)  # fmt: skip


class _Walker:
    def __init__(self) -> None:
        self.collector = BlockCollector()
        self._run: list[str] = []

    def walk(self, node: LexborNode) -> None:
        for child in node.iter(include_text=True):
            self._visit(child)

    def flush(self) -> None:
        self.collector.add("".join(self._run))
        self._run.clear()

    def _visit(self, node: LexborNode) -> None:
        tag = node.tag or ""
        if node.is_text_node:
            self._run.append(node.text_content or "")
        elif tag == "br":
            self._run.append(" ")
        elif tag in HEADING_LEVELS:
            self.flush()
            self.collector.heading(HEADING_LEVELS[tag], node.text(deep=True))
        elif tag == "tr":
            self.flush()
            self.collector.add(_row_text(node), kind=HEAD_ROW if _is_head_row(node) else ROW)
        elif tag == "pre":  # a command or configuration: its lines are what it says
            self.flush()
            self.collector.add_code(node.text(deep=True))
        elif tag in BLOCK_TAGS:
            self.flush()
            self.walk(node)
            self.flush()
        elif node.is_element_node:
            self.walk(node)


def _row_text(row: LexborNode) -> str:
    cells = (
        collapse_whitespace(cell.text(deep=True)) for cell in row.iter() if cell.tag in CELL_TAGS
    )
    return CELL_SEPARATOR.join(cell for cell in cells if cell)


def _is_head_row(row: LexborNode) -> bool:
    """A row of <thead>, or one whose cells are all <th> (tables written without <thead>)."""
    if row.parent is not None and row.parent.tag == "thead":
        return True
    cells = [cell.tag for cell in row.iter() if cell.tag in CELL_TAGS]
    return bool(cells) and all(tag == "th" for tag in cells)


def parse_html(data: bytes) -> Extracted:
    tree = LexborHTMLParser(decode_text(data))
    tree.strip_tags(DROPPED_TAGS)
    walker = _Walker()
    if tree.body is not None:
        walker.walk(tree.body)
        walker.flush()
    title = _title(tree) or walker.collector.first_heading(level=1)
    return Extracted(title=title, blocks=walker.collector.blocks)


def _title(tree: LexborHTMLParser) -> str | None:
    # Only the <head> title: an inline SVG's <title> is a tooltip, not the page's name.
    node = tree.head.css_first("title") if tree.head is not None else None
    return collapse_whitespace(node.text(deep=True)) if node is not None else None


def html_fragment_text(fragment: str) -> str:
    """Visible text of an HTML snippet (used for raw HTML inside Markdown)."""
    tree = LexborHTMLParser(fragment)
    tree.strip_tags(DROPPED_TAGS)
    body = tree.body
    return body.text(deep=True, separator=" ") if body is not None else ""
