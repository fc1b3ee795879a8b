"""The MCP server over stdio, for desktop clients that start it themselves
(`manage.py mcp_serve --user NAME`): every tool acts as that one user."""

from __future__ import annotations

import anyio
from django.contrib.auth import get_user_model

from apps.reach.mcp_server.tools import STDIO_USER, mcp_server_build
from ragplatform.db_threads import db_threads_detached


class UnknownUser(LookupError):
    """No active account has that name."""


def stdio_user_id(*, username: str) -> int:
    user_model = get_user_model()
    user = user_model._default_manager.filter(
        **{user_model.USERNAME_FIELD: username, "is_active": True}
    ).first()
    if user is None or not isinstance(user.pk, int):
        raise UnknownUser(f"No active user named {username!r}")
    return user.pk


def stdio_serve(*, user_id: int) -> None:
    """Serve stdin/stdout until the client closes them."""
    STDIO_USER.set(user_id)
    server = mcp_server_build(allowed_hosts=[], allowed_origins=[])  # no HTTP: nothing to check

    async def serve() -> None:
        with db_threads_detached():  # the tools' database calls go to the database threads
            await server.run_stdio_async()

    anyio.run(serve)
