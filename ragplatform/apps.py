from django.apps import AppConfig


class RagplatformConfig(AppConfig):
    """The project itself as an app, so that project-wide commands (`serve`) live beside settings."""

    name = "ragplatform"
    label = "ragplatform"
