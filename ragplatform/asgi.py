import os
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402
from django.urls import get_resolver  # noqa: E402

from apps.reach.mcp_server.http import PATH as MCP_PATH  # noqa: E402
from apps.reach.mcp_server.http import McpHttp  # noqa: E402
from ragplatform.request_limits import BodyLimitMiddleware  # noqa: E402
from ragplatform.routing import websocket_urlpatterns  # noqa: E402
from ragplatform.security import SiteOriginValidator  # noqa: E402
from ragplatform.session_check import socket_auth_stack  # noqa: E402

# Development serves static files from the app folders (no collectstatic step); production
# serves the collected STATIC_ROOT through WhiteNoise, in the middleware.
http_app = (
    ASGIStaticFilesHandler(django_asgi_app)
    if settings.RAG_ENV == "development"
    else django_asgi_app
)

# Import every view now rather than inside the first request (Django loads the URLconf
# lazily): otherwise the first questions after a start wait for the whole API to import.
get_resolver().url_patterns  # noqa: B018 - loading it is the point

_django_http = BodyLimitMiddleware(http_app)
# The MCP server's streamable HTTP (apps/reach/mcp_server/http.py): beside Django, not in it.
_mcp_http = BodyLimitMiddleware(McpHttp())


async def _http_or_mcp(scope: Any, receive: Any, send: Any) -> None:
    path = scope.get("path", "")
    if path == MCP_PATH or path.startswith(f"{MCP_PATH}/"):
        await _mcp_http(scope, receive, send)
    else:
        await _django_http(scope, receive, send)


application = ProtocolTypeRouter(
    {
        "http": _http_or_mcp,
        "websocket": SiteOriginValidator(socket_auth_stack(URLRouter(websocket_urlpatterns))),
    }
)
