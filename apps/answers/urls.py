from django.urls import path

from apps.answers import views

urlpatterns = [
    path("", views.chat_page, name="chat"),
    path("c/<uuid:conversation_id>/", views.chat_page, name="chat-conversation"),
    path("api/turns/", views.turns_create, name="api-turns"),
    path("api/turns/<int:turn_id>/events", views.turn_events_replay, name="api-turn-events"),
]
