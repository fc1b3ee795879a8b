from django.apps import AppConfig
from django.conf import settings


class ReachConfig(AppConfig):
    """The doors other people's clients use: the OpenAI-compatible Chat Completions endpoint,
    the MCP server and the embeddable widget. They answer through the answers app's turns; this
    app stores nothing."""

    name = "apps.reach"
    label = "reach"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from apps.reach.widget.origins import origins_parse

        # A wildcard or a URL where an origin belongs stops start-up, not the first request.
        origins_parse(settings.RAG_WIDGET_ALLOWED_ORIGINS, name="RAG_WIDGET_ALLOWED_ORIGINS")
