"""The Persian catalogue: every interface string is translated, and the committed .mo is the
compiled form of the committed .po (nothing compiles it at install or run time)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from django.conf import settings
from django.utils import translation

PO = Path(settings.BASE_DIR) / "locale" / "fa" / "LC_MESSAGES" / "django.po"
_FIELD = re.compile(r'^(msgid|msgid_plural|msgstr(?:\[\d\])?) (".*")$')


def _entries() -> list[dict[str, str]]:
    """msgid, msgid_plural and msgstr[...] of each entry (continued lines joined)."""
    entries: list[dict[str, str]] = []
    for block in PO.read_text(encoding="utf-8").split("\n\n"):
        entry: dict[str, str] = {}
        field = ""
        for line in block.splitlines():
            if match := _FIELD.match(line):
                field = match[1]
                entry[field] = ast.literal_eval(match[2])
            elif line.startswith('"') and field:
                entry[field] += ast.literal_eval(line)
        if entry.get("msgid"):
            entries.append(entry)
    return entries


def test_every_string_has_a_persian_translation() -> None:
    entries = _entries()
    assert len(entries) > 40
    untranslated = [e["msgid"] for e in entries if not (e.get("msgstr") or e.get("msgstr[0]"))]
    assert untranslated == []
    assert "#, fuzzy" not in PO.read_text(encoding="utf-8").split("\n\n", 1)[1]


def test_the_compiled_catalogue_matches_the_source() -> None:
    with translation.override("fa"):
        for entry in _entries():
            if "msgid_plural" in entry:
                got = translation.ngettext(entry["msgid"], entry["msgid_plural"], 1)
                assert got == entry["msgstr[0]"], entry["msgid"]
            else:
                assert translation.gettext(entry["msgid"]) == entry["msgstr"], entry["msgid"]
