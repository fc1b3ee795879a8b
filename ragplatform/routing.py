"""WebSocket routes; the chat consumer registers here."""

from django.urls import URLPattern, path

from apps.answers.web.consumers import ChatConsumer

websocket_urlpatterns: list[URLPattern] = [
    path("ws/chat/", ChatConsumer.as_asgi()),
]
