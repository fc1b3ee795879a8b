"""The embedded server's connection limit: written where its next start reads it, and a
running server that has another one is reported (it takes the new one when restarted)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from ragplatform.embedded_postgres.server import (
    _configure,
    _database_ensure,
    embedded_server_ensure,
)

pytestmark = pytest.mark.skipif(
    settings.DATABASES["default"]["ENGINE"] != "ragplatform.embedded_postgres",
    reason="DATABASE_URL is set: no embedded server",
)


def test_the_limit_is_written_to_a_file_postgresql_conf_includes_once(tmp_path: Path) -> None:
    (tmp_path / "postgresql.conf").write_text("max_connections = 100\n")
    _configure(tmp_path, max_connections=250)
    _configure(tmp_path, max_connections=250)
    main = (tmp_path / "postgresql.conf").read_text()
    assert main.startswith("max_connections = 100\n")  # initdb's file is left as it was
    assert main.count("include_if_exists = 'ragplatform.conf'") == 1  # after it: it wins
    assert (tmp_path / "ragplatform.conf").read_text() == "max_connections = 250\n"


@pytest.mark.django_db
def test_a_server_running_with_another_limit_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    pgdata = Path(str(settings.DATABASES["default"]["EMBEDDED_PGDATA"]))
    name = str(settings.DATABASES["default"]["EMBEDDED_DATABASE"])
    limit = int(str(settings.DATABASES["default"]["EMBEDDED_MAX_CONNECTIONS"]))
    server = embedded_server_ensure(pgdata=pgdata, database=name, max_connections=limit)
    with connection.cursor() as cursor:
        cursor.execute("SHOW max_connections")
        running = int(cursor.fetchone()[0])
    _database_ensure(server, name, max_connections=running)
    assert not caplog.records
    _database_ensure(server, name, max_connections=running + 1)
    assert "restarted" in caplog.text and f"not {running + 1}" in caplog.text
