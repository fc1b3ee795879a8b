from django.apps import AppConfig


class ReachConfig(AppConfig):
    """The doors other people's clients use: the OpenAI-compatible Chat Completions endpoint
    and the MCP server. They answer through the answers app's turns; this app stores nothing."""

    name = "apps.reach"
    label = "reach"
    default_auto_field = "django.db.models.BigAutoField"
