from django.urls import path

from apps.answers.api import views

urlpatterns = [
    path("conversations/", views.ConversationList.as_view(), name="api-conversation-list"),
    path(
        "conversations/<uuid:pk>/",
        views.ConversationDetail.as_view(),
        name="api-conversation-detail",
    ),
    path(
        "conversations/<uuid:pk>/turns/",
        views.ConversationTurnList.as_view(),
        name="api-conversation-turns",
    ),
    path("turns/<int:pk>/", views.TurnDetail.as_view(), name="api-turn-detail"),
    path("collections/", views.CollectionList.as_view(), name="api-collection-list"),
    path("answers/", views.AnswerCreate.as_view(), name="api-answer"),
]
