from django.urls import path

from apps.answers.web import answer_views, conversation_views, views

urlpatterns = [
    path("", views.chat_page, name="chat"),
    path("c/<uuid:conversation_id>/", views.chat_page, name="chat-conversation"),
    path(
        "c/<uuid:conversation_id>/rename/",
        conversation_views.conversation_rename,
        name="conversation-rename",
    ),
    path(
        "c/<uuid:conversation_id>/delete/",
        conversation_views.conversation_delete,
        name="conversation-delete",
    ),
    path("conversations/", conversation_views.conversation_search, name="conversation-search"),
    path("api/turns/", views.turns_create, name="api-turns"),
    path("api/turns/<int:turn_id>/events", views.turn_events_replay, name="api-turn-events"),
    path(
        "turns/<int:turn_id>/sources/<str:alias>/",
        answer_views.source_preview,
        name="turn-source-preview",
    ),
    path("turns/<int:turn_id>/feedback/", answer_views.turn_feedback, name="turn-feedback"),
]
