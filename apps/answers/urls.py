from django.urls import path

from apps.answers import conversation_views, views

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
]
