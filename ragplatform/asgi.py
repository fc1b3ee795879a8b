import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ragplatform.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402
from django.urls import get_resolver  # noqa: E402

from ragplatform.request_limits import BodyLimitMiddleware  # noqa: E402
from ragplatform.routing import websocket_urlpatterns  # noqa: E402
from ragplatform.security import SiteOriginValidator  # noqa: E402

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

application = ProtocolTypeRouter(
    {
        "http": BodyLimitMiddleware(http_app),
        "websocket": SiteOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
