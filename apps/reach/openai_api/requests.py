"""A Chat Completions request body read into what the platform asks.

The last message is the question and must be the user's; the earlier user messages are the
history a stored conversation is matched on (assistant messages are the platform's own
replies, system and developer messages a client's instructions the platform does not take:
the answer comes from the documents). The platform answers, it calls no tools: `tools`,
`functions` and their choices are refused, as are `n` above 1 and tool messages. Sampling
parameters (`temperature`, `max_tokens`, `top_p`, `stop`, `seed`, ...) and any other field
are ignored, so a client's defaults never break a request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.conf import settings

from apps.reach.openai_api.errors import BadCompletion

ROLES = frozenset({"system", "developer", "user", "assistant"})
_TOOL_FIELDS = ("tools", "functions", "tool_choice", "function_call")


@dataclass(frozen=True)
class CompletionRequest:
    model: str
    question: str
    earlier_questions: tuple[str, ...]
    conversation_id: UUID | None
    stream: bool
    include_usage: bool


def completion_request_read(body: object) -> CompletionRequest:
    """Raises BadCompletion, naming the field, for anything the door cannot answer."""
    if not isinstance(body, dict):
        raise BadCompletion("The body must be a JSON object")
    _tools_refused(body)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise BadCompletion("model must be a model id from GET /v1/models", param="model")
    if body.get("n") not in (None, 1):
        raise BadCompletion(
            "n must be 1: the platform gives one answer", param="n", code="n_unsupported"
        )
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise BadCompletion("stream must be true or false", param="stream")
    texts = _messages(body.get("messages"))
    return CompletionRequest(
        model=model,
        question=texts[-1][1],
        earlier_questions=tuple(text for role, text in texts[:-1] if role == "user"),
        conversation_id=_conversation(body),
        stream=stream,
        include_usage=_include_usage(body.get("stream_options")),
    )


def _tools_refused(body: dict[str, Any]) -> None:
    for field in _TOOL_FIELDS:
        if body.get(field) not in (None, [], "none"):
            raise BadCompletion(
                f"{field} is not supported: the platform answers from its documents and calls no tools",
                param=field,
                code="tools_unsupported",
            )


def _messages(messages: object) -> list[tuple[str, str]]:
    """(role, text) of each message, checked; the last is the user's question."""
    if not isinstance(messages, list) or not messages:
        raise BadCompletion("messages must be a non-empty list", param="messages")
    if len(messages) > (limit := settings.RAG_REACH_MAX_MESSAGES):
        raise BadCompletion(f"At most {limit} messages", param="messages")
    texts = [_message(m, index=i) for i, m in enumerate(messages)]
    if texts[-1][0] != "user":
        raise BadCompletion("The last message must be the user's question", param="messages")
    return texts


def _message(message: object, *, index: int) -> tuple[str, str]:
    param = f"messages[{index}]"
    if not isinstance(message, dict):
        raise BadCompletion(f"{param} must be an object with role and content", param=param)
    role = message.get("role")
    if role == "tool" or message.get("tool_calls"):
        raise BadCompletion(
            f"{param}: tool messages are not supported; the platform calls no tools",
            param=param,
            code="tools_unsupported",
        )
    if role not in ROLES:
        raise BadCompletion(f"{param}.role must be one of {', '.join(sorted(ROLES))}", param=param)
    text = _content(message.get("content"), param=param)
    if len(text) > (limit := settings.RAG_REACH_MAX_MESSAGE_CHARS):
        raise BadCompletion(
            f"{param} is {len(text):,} characters; the limit is {limit:,}", param=param
        )
    return str(role), text


def _content(content: object, *, param: str) -> str:
    """A message's text: a string, or a list of text parts (images and audio refused)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if not (isinstance(part, dict) and part.get("type") == "text"):
                raise BadCompletion(f"{param}.content: only text parts are supported", param=param)
            if not isinstance(text := part.get("text"), str):
                raise BadCompletion(f"{param}.content: a text part needs its text", param=param)
            parts.append(text)
        return "\n".join(parts)
    if content is None:
        return ""
    raise BadCompletion(f"{param}.content must be text", param=param)


def _conversation(body: dict[str, Any]) -> UUID | None:
    """`conversation` names the conversation to continue; failing that, a `user` that is a
    conversation id does (OpenAI's `user` is otherwise an end-user tag, and ignored)."""
    value = body.get("conversation")
    if value not in (None, ""):
        try:
            return UUID(str(value))
        except ValueError:
            raise BadCompletion(
                "conversation must be a conversation id", param="conversation"
            ) from None
    user = body.get("user")
    if isinstance(user, str):
        try:
            return UUID(user)
        except ValueError:
            return None
    return None


def _include_usage(options: object) -> bool:
    if options is None:
        return False
    if not isinstance(options, dict):
        raise BadCompletion("stream_options must be an object", param="stream_options")
    return options.get("include_usage") is True
