"""What only an SMB share has: links the server resolves itself, a share or folder that is not
there, and a server binary that is missing (the fixture fails, naming the package)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from apps.sources.sync.run import source_sync
from tests.conftest import CountingEmbedder
from tests.sources import samba_dovecot, servers
from tests.sources.conftest import smb_place

pytestmark = pytest.mark.django_db


def test_a_link_loop_on_the_share_is_walked_once(
    samba: servers.Running, source_of: Any, embedder: CountingEmbedder
) -> None:
    place = smb_place(samba)
    place.put("guide/alpha", "Aardvarks dig burrows at night.")
    os.symlink(place.root, place.root / "guide" / "loop")  # Samba shows it as a folder

    report = source_sync(source_id=source_of(place).pk, wait=True)

    assert (report.status, report.added, report.failed) == ("ok", 1, 0)


def test_a_share_that_is_not_there_is_a_clear_error(samba: servers.Running, source_of: Any) -> None:
    source = source_of(smb_place(samba), location=f"smb://127.0.0.1:{samba.port}/nosuch/x")
    report = source_sync(source_id=source.pk)
    assert report.status == "failed" and "cannot be listed" in report.error


@pytest.mark.parametrize("start", [samba_dovecot.samba_start, samba_dovecot.dovecot_start])
def test_a_missing_server_binary_fails_naming_its_package(
    start: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)
    with pytest.raises(RuntimeError, match=r"install the Debian package (samba|dovecot-imapd)"):
        start(tmp_path)
