"""PostgreSQL backend whose server is started on the first connection."""

from __future__ import annotations

from typing import Any

from ragplatform.postgres import base

from .client import DatabaseClient
from .server import embedded_server_ensure


class DatabaseWrapper(base.DatabaseWrapper):
    client_class = DatabaseClient

    def get_connection_params(self) -> dict[str, Any]:
        params: dict[str, Any] = super().get_connection_params()
        server = embedded_server_ensure(
            pgdata=self.settings_dict["EMBEDDED_PGDATA"],
            # Always the main database, never NAME: the test runner creates test_<name> itself
            # and would refuse a database that already exists.
            database=self.settings_dict["EMBEDDED_DATABASE"],
            max_connections=self.settings_dict["EMBEDDED_MAX_CONNECTIONS"],
        )
        params["host"] = server.socket_dir
        params["user"] = server.user
        return params
