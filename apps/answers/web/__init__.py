"""The web transport of answers: the chat page, SSE, the WebSocket consumer, conversation and answer actions.

They gate and forward; the work is in turn/ and conversations/."""
