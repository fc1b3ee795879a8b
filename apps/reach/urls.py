from django.urls import path

from apps.reach.openai_api import views

# Under /v1/, where every OpenAI client appends its paths to the base URL it is given.
urlpatterns = [
    path("models", views.ModelList.as_view(), name="reach-models"),
    path("chat/completions", views.ChatCompletions.as_view(), name="reach-chat-completions"),
]
