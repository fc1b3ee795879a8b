"""WebSocket routes; the chat consumer registers here."""

from django.urls import URLPattern

websocket_urlpatterns: list[URLPattern] = []
