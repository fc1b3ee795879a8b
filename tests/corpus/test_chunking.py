"""Chunks keep the source's lists, steps, tables and code on lines of their own."""

from __future__ import annotations

import hashlib

from apps.corpus.ingestion.chunking import CHUNKER_VERSION, chunk_blocks
from apps.corpus.parsing import Block, parse_document
from apps.corpus.parsing.html import parse_html
from apps.corpus.parsing.markdown import parse_markdown
from apps.corpus.parsing.text import parse_text
from tests.corpus import files

GUIDE = b"""# Guide

## Formats

The platform can ingest these kinds of documents:

- PDF files (.pdf)
- Word documents (.docx)

A file with any other ending is refused.

## Checking

1. Open the document list.
2. Read the message.

## Statuses

| Status | Meaning |
|---|---|
| pending | Waiting for a worker. |
| failed | Ingestion stopped. |

## Command

Run this:

```
python manage.py ingest PATH
```
"""


def chunk_texts() -> dict[str, str]:
    parsed = parse_markdown(GUIDE)
    return {c.heading: c.text for c in chunk_blocks(title="Guide", blocks=parsed.blocks)}


def test_the_markdown_parser_says_what_each_block_is() -> None:
    kinds = [(b.kind, b.text) for b in parse_markdown(GUIDE).blocks]

    assert ("item", "PDF files (.pdf)") in kinds
    assert ("step", "Open the document list.") in kinds
    assert ("head_row", "Status | Meaning") in kinds
    assert ("row", "failed | Ingestion stopped.") in kinds
    assert ("code", "python manage.py ingest PATH") in kinds


def test_list_items_and_the_paragraph_after_them_start_lines() -> None:
    assert chunk_texts()["Guide > Formats"] == (
        "The platform can ingest these kinds of documents:\n- PDF files (.pdf)\n"
        "- Word documents (.docx)\nA file with any other ending is refused."
    )


def test_steps_are_numbered_and_rows_keep_their_cells() -> None:
    texts = chunk_texts()

    assert texts["Guide > Checking"] == "1. Open the document list.\n2. Read the message."
    assert texts["Guide > Statuses"] == (
        "| Status | Meaning |\n|---|---|\n| pending | Waiting for a worker. |\n"
        "| failed | Ingestion stopped. |"
    )
    assert texts["Guide > Command"] == "Run this:\n```\npython manage.py ingest PATH\n```"


def test_plain_paragraphs_read_and_hash_as_before() -> None:
    blocks = [
        Block(text="First paragraph. It has two sentences.", page=None, heading="Intro"),
        Block(text="Second paragraph.", page=None, heading="Intro"),
    ]

    [draft] = chunk_blocks(title="Doc", blocks=blocks)

    assert draft.text == "First paragraph. It has two sentences. Second paragraph."
    expected = hashlib.sha256(f"{CHUNKER_VERSION}\nDoc — Intro\n{draft.text}".encode())
    assert draft.content_hash == expected.hexdigest()


NGINX = """upstream app {
    server 127.0.0.1:8001;
    server 127.0.0.1:8002;
}
server {
    listen 80;
    location / { proxy_pass http://app; }
}"""


def _filler(count: int) -> str:
    return " ".join(
        f"The platform answers question number {n} from the documents." for n in range(count)
    )


def test_a_fenced_block_is_never_cut_by_a_chunk_boundary() -> None:
    source = (
        f"# Guide\n\n## Proxy\n\n{_filler(14)}\n\nAn example:\n\n```nginx\n{NGINX}\n```\n\nDone."
    )

    drafts = chunk_blocks(title="Guide", blocks=parse_markdown(source.encode()).blocks)

    assert len(drafts) > 1  # the budget does cut the section
    holding = [d.text for d in drafts if "upstream app {" in d.text]
    assert holding and all(f"```\n{NGINX}\n```" in text for text in holding)
    assert all(text.count("```") % 2 == 0 for text in (d.text for d in drafts))


def test_an_html_pre_block_is_kept_whole_with_its_lines() -> None:
    pre = NGINX.replace("<", "&lt;")
    page = f"<h1>Guide</h1><p>{_filler(14)}</p><p>An example:</p><pre>{pre}</pre><p>Done.</p>"

    drafts = chunk_blocks(title="Guide", blocks=parse_html(page.encode()).blocks)

    assert len(drafts) > 1
    assert any(f"```\n{NGINX}\n```" in d.text for d in drafts)
    assert all(d.text.count("```") % 2 == 0 for d in drafts)


def test_a_block_over_the_budget_is_cut_at_line_boundaries_each_piece_fenced() -> None:
    code = "\n".join(f"    option_{n} = value_{n};" for n in range(60))
    blocks = [Block(text=code, page=None, heading="Config", kind="code")]

    drafts = chunk_blocks(title="Doc", blocks=blocks, max_words=40)

    assert len(drafts) > 1
    for draft in drafts:
        assert draft.text.startswith("```\n") and draft.text.endswith("\n```")
        assert all(line.startswith("    option_") for line in draft.text.split("\n")[1:-1])


def test_text_commands_and_configuration_become_code_blocks() -> None:
    source = (
        "To make an archive of a directory, run:\n\n"
        "    $ tar -cvJf archive.tar.xz ./source\n\n"
        "The configuration file holds:\n\n"
        '  Dir\n  {\n    State "/disc/";\n\n    State::status "status";\n  };\n\n'
        "Each line ends with a semicolon, as the parser expects."
    )

    blocks = parse_text(source.encode()).blocks

    assert [b.kind for b in blocks] == ["text", "code", "text", "code", "text"]
    assert blocks[1].text == "$ tar -cvJf archive.tar.xz ./source"
    assert blocks[3].text == 'Dir\n{\n  State "/disc/";\n\n  State::status "status";\n};'


def test_a_manual_s_indented_descriptions_stay_prose() -> None:
    source = (
        "OPTIONS\n       -f, --force\n              Tells the tool to force the rotation, even if"
        " it does not think\n              this is necessary for the files given.\n"
    )

    assert [b.kind for b in parse_text(source.encode()).blocks] == ["text"]


# The chunks of the text below as the chunker before code blocks wrote them (same hashes).
PROSE_DIGEST = "ccca40a61f6b60bf91bd6274aeba7f43b6145b2fdf8ce57455f8d8cad1b8c4a7"


def test_prose_without_code_chunks_exactly_as_before() -> None:
    source = (
        f"# Guide\n\n## Part\n\n{_filler(30)}\n\n- an item\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    )

    drafts = chunk_blocks(title="Guide", blocks=parse_markdown(source.encode()).blocks)

    assert all("```" not in d.text for d in drafts)
    assert hashlib.sha256("".join(d.content_hash for d in drafts).encode()).hexdigest() == (
        PROSE_DIGEST
    )


def test_pdf_lines_typed_at_a_prompt_become_a_code_block() -> None:
    data = files.lines_pdf(
        [
            "The archive tools of the system are used like this for a whole directory tree:",
            "$ tar -cvJf archive.tar.xz ./source",
            "$ tar -xvJf archive.tar.xz",
            "Alternatively, by the following.",
        ]
    )

    blocks = parse_document(filename="tools.pdf", data=data).blocks

    assert [b.kind for b in blocks] == ["text", "code", "text"]
    assert blocks[1].text == "$ tar -cvJf archive.tar.xz ./source\n$ tar -xvJf archive.tar.xz"
