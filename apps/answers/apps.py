from django.apps import AppConfig


class AnswersConfig(AppConfig):
    name = "apps.answers"
    label = "answers"
    default_auto_field = "django.db.models.BigAutoField"
