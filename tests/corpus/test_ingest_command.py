from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps.corpus.models import Chunk, Document
from tests.conftest import CountingEmbedder

pytestmark = pytest.mark.django_db


def _run(*args: str) -> list[dict[str, object]]:
    out = StringIO()
    call_command("ingest", *args, "--json", stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines() if line.startswith("{")]


def test_folder_recurses_and_second_run_changes_nothing(
    tmp_path: Path, embedder: CountingEmbedder
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_text("# A\n\nAlpha is the first letter.")
    (tmp_path / "sub" / "b.txt").write_text("Beta is the second letter.")
    (tmp_path / "sub" / "ignored.bin").write_bytes(b"\x00\x01")

    first = _run(str(tmp_path), "--collection", "Letters", "--wait")
    chunk_ids = set(Chunk.objects.values_list("pk", flat=True))
    embedded = embedder.passages_embedded
    second = _run(str(tmp_path), "--collection", "Letters", "--wait")

    assert sorted(str(r["status"]) for r in first) == ["ready", "ready"]
    assert {r["action"] for r in second} == {"unchanged"}
    assert set(Chunk.objects.values_list("pk", flat=True)) == chunk_ids
    assert embedder.passages_embedded == embedded
    assert Document.objects.filter(collection__name="Letters").count() == 2


def test_refused_file_is_reported_not_fatal(tmp_path: Path, embedder: CountingEmbedder) -> None:
    (tmp_path / "tool.exe").write_bytes(b"MZ")
    (tmp_path / "ok.txt").write_text("Fine text.")
    rows = _run(str(tmp_path / "tool.exe"), str(tmp_path / "ok.txt"), "--wait")
    assert [r["action"] for r in rows] == ["refused", "processed"]
    assert "exe" in str(rows[0]["message"])


def test_missing_path_is_a_command_error(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="No such file"):
        call_command("ingest", str(tmp_path / "nope"), "--wait")


def test_search_reindex_restores_the_postings(tmp_path: Path, embedder: CountingEmbedder) -> None:
    from apps.corpus.models import ChunkTerm

    (tmp_path / "a.md").write_text("# A\n\nAlpha bravo charlie.")
    _run(str(tmp_path), "--wait")
    before = ChunkTerm.objects.count()
    ChunkTerm.objects.all().delete()

    call_command("search_reindex", stdout=StringIO())

    assert ChunkTerm.objects.count() == before > 0


def test_a_folder_gives_every_supported_ending_and_nothing_else(
    tmp_path: Path, embedder: CountingEmbedder
) -> None:
    from apps.corpus.parsing import SUPPORTED_SUFFIXES

    for suffix in (".htm", ".markdown", ".text", ".TXT"):
        (tmp_path / f"note{suffix}").write_text("Some words about leave.")
    (tmp_path / "notes.rtf").write_text("{\\rtf1 not supported}")

    rows = _run(str(tmp_path), "--wait")

    assert sorted(Path(str(r["path"])).suffix for r in rows) == [
        ".TXT",
        ".htm",
        ".markdown",
        ".text",
    ]
    assert all(Path(str(r["path"])).suffix.lower() in SUPPORTED_SUFFIXES for r in rows)
