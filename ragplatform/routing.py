"""WebSocket routes; the chat consumer registers here."""

from django.urls import URLPattern, path

from apps.answers.consumers import ChatConsumer

websocket_urlpatterns: list[URLPattern] = [
    path("ws/chat/", ChatConsumer.as_asgi()),
]
