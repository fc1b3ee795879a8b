"""`manage.py dbshell` for the embedded server: start it and point psql at its socket."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.db.backends.postgresql import client

from .server import embedded_server_ensure


class DatabaseClient(client.DatabaseClient):
    def runshell(self, parameters: Iterable[str]) -> None:
        settings_dict: dict[str, Any] = self.connection.settings_dict
        server = embedded_server_ensure(
            pgdata=Path(settings_dict["EMBEDDED_PGDATA"]),
            database=settings_dict["EMBEDDED_DATABASE"],
            max_connections=settings_dict["EMBEDDED_MAX_CONNECTIONS"],
        )
        settings_dict.update(HOST=server.socket_dir, USER=server.user)
        super().runshell(parameters)
