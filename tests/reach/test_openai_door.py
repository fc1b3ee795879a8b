"""The OpenAI-compatible door, driven by the official `openai` SDK against a real daphne
process: the models a reader may ask, answers with their citations (whole and streamed), a
continued conversation, and every refusal in OpenAI's error shape."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest
from openai import OpenAI

from apps.answers.models import Conversation, Turn, TurnClient, TurnStatus
from tests.processes import Server
from tests.reach.conftest import ASKS_PER_MINUTE, World

pytestmark = [pytest.mark.processes, pytest.mark.django_db(transaction=True)]
QUESTION = "How many days of annual leave do employees get?"


def _client(server: Server, token: str) -> OpenAI:
    # No retries: a refusal must show as itself, not as the SDK's third attempt.
    return OpenAI(base_url=f"{server.http}/v1", api_key=token, max_retries=0, timeout=60)


def _ask(client: OpenAI, question: str = QUESTION, **extra: Any) -> Any:
    return client.chat.completions.create(
        model="answers", messages=[{"role": "user", "content": question}], **extra
    )


def test_the_models_are_the_readable_collections_and_all_of_them(
    server: Server, world: World
) -> None:
    models = [m.id for m in _client(server, world.token).models.list()]

    assert models == ["answers", "answers/Handbook"]  # not answers/Board: ada may not read it


def test_an_answer_carries_numbered_citations_a_sources_list_and_the_sources_as_data(
    server: Server, world: World
) -> None:
    completion = _ask(_client(server, world.token))

    content = completion.choices[0].message.content
    assert completion.object == "chat.completion"
    assert completion.choices[0].finish_reason == "stop"
    assert "twenty-six days of annual leave a year[1]" in content
    assert "\n\nSources:\n[1] " in content
    extra = completion.model_extra
    (source,) = extra["citations"]
    assert source["number"] == 1 and source["kind"] == "cited"
    assert source["source_file"].endswith(".md") and source["snippet"]
    assert source["chunk_index"] is not None
    assert source["url"].startswith(f"{server.http}/documents/{source['document']}/read/")
    assert source["url"] in content
    assert set(extra["confidence"]) == {"value", "band"}
    assert extra["confidence"]["band"] in {"green", "yellow", "red"}
    assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0
    turn = Turn.objects.get(pk=extra["turn"])
    assert turn.status == TurnStatus.FINISHED and turn.conversation.user == world.user
    # The door and what the SDK says it is (its own User-Agent), for the audit.
    assert turn.client == TurnClient.OPENAI
    assert turn.client_agent == f"OpenAI/Python {openai.__version__}"


def test_a_streamed_answer_comes_in_chunks_with_markers_then_sources_and_ends_with_done(
    server: Server, world: World
) -> None:
    stream = _ask(_client(server, world.token), stream=True)
    chunks = list(stream)

    assert {c.object for c in chunks} == {"chat.completion.chunk"}
    assert len({c.id for c in chunks}) == 1
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "twenty-six days of annual leave a year[1]" in text
    assert "\n\nSources:\n[1] " in text
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert last.usage is not None and last.usage.total_tokens > 0
    assert last.model_extra["citations"][0]["chunk_index"] is not None
    assert last.model_extra["confidence"]["band"] in {"green", "yellow", "red"}
    assert Turn.objects.get().client == TurnClient.OPENAI  # streamed or not, the same door


def test_the_raw_stream_is_server_sent_events_ending_with_done(
    server: Server, world: World
) -> None:
    body = {
        "model": "answers/Handbook",
        "stream": True,
        "messages": [{"role": "user", "content": QUESTION}],
    }
    headers = {"Authorization": f"Bearer {world.token}"}
    with httpx.stream(
        "POST", f"{server.http}/v1/chat/completions", json=body, headers=headers, timeout=60
    ) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in r.iter_lines() if line.startswith("data: ")]
    assert lines[-1] == "data: [DONE]"
    assert len(lines) >= 5


def test_the_message_list_continues_the_stored_conversation(server: Server, world: World) -> None:
    client = _client(server, world.token)
    first = _ask(client)
    followup: list[Any] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": "Do unused days carry over?"},
    ]
    second = client.chat.completions.create(model="answers", messages=followup)
    named = client.chat.completions.create(
        model="answers",
        messages=[{"role": "user", "content": "And who approves leave?"}],
        extra_body={"conversation": first.model_extra["conversation"]},
    )

    conversation = first.model_extra["conversation"]
    assert (second.model_extra or {})["conversation"] == conversation
    assert (named.model_extra or {})["conversation"] == conversation
    assert Conversation.objects.count() == 1
    assert list(Turn.objects.order_by("index").values_list("index", flat=True)) == [1, 2, 3]


def test_a_wrong_token_is_401_in_openai_error_shape(server: Server, world: World) -> None:
    with pytest.raises(openai.AuthenticationError) as refused:
        _client(server, "not-a-token").models.list()

    assert refused.value.status_code == 401
    error = refused.value.body
    assert isinstance(error, dict)
    assert error["type"] == "authentication_error" and error["code"] == "unauthenticated"
    assert error["message"]


def test_an_unreadable_collection_is_404_exactly_like_one_that_does_not_exist(
    server: Server, world: World
) -> None:
    client = _client(server, world.token)
    refusals = []
    for model in ("answers/Board", "answers/Nothing"):
        with pytest.raises(openai.NotFoundError) as refused:
            client.chat.completions.create(
                model=model, messages=[{"role": "user", "content": QUESTION}]
            )
        refusals.append(refused.value.body)

    secret, missing = refusals
    assert isinstance(secret, dict) and isinstance(missing, dict)
    assert secret["type"] == missing["type"] == "not_found_error"
    assert (
        "Board" in secret["message"]
        and secret["message"].replace("Board", "Nothing") == missing["message"]
    )
    assert "salaries" not in str(secret).lower()
    assert Turn.objects.count() == 0


def test_the_chat_pages_rate_limit_answers_429_with_retry_after(
    server: Server, world: World
) -> None:
    client = _client(server, world.token)
    with pytest.raises(openai.RateLimitError) as refused:
        # Within two windows at most twice the limit goes through: a minute may turn between.
        for _ in range(2 * ASKS_PER_MINUTE + 1):
            _ask(client)

    assert refused.value.status_code == 429
    assert 1 <= int(refused.value.response.headers["Retry-After"]) <= 60
    assert isinstance(refused.value.body, dict) and refused.value.body["code"] == "rate_limited"


BAD_REQUESTS: list[tuple[str, dict[str, Any], str]] = [
    ("no messages", {"messages": []}, "messages"),
    ("messages not a list", {"messages": "How many days?"}, "messages"),
    ("a message not an object", {"messages": ["How many days?"]}, "messages[0]"),
    ("an unknown role", {"messages": [{"role": "wizard", "content": "hi"}]}, "messages[0]"),
    (
        "last message not the user's",
        {"messages": [{"role": "assistant", "content": "hi"}]},
        "messages",
    ),
    (
        "an image part",
        {"messages": [{"role": "user", "content": [{"type": "image_url"}]}]},
        "messages[0]",
    ),
    (
        "a tool message",
        {"messages": [{"role": "tool", "content": "42", "tool_call_id": "x"}]},
        "messages[0]",
    ),
    (
        "a 1 MB message",
        {"messages": [{"role": "user", "content": "leave " * 180_000}]},
        "messages[0]",
    ),
    ("an empty question", {"messages": [{"role": "user", "content": "   "}]}, "messages"),
    ("tools", {"tools": [{"type": "function", "function": {"name": "f"}}]}, "tools"),
    ("functions", {"functions": [{"name": "f", "parameters": {}}]}, "functions"),
    ("n above 1", {"n": 2}, "n"),
    ("stream not a boolean", {"stream": "yes"}, "stream"),
    ("no model", {"model": ""}, "model"),
    ("a bad conversation id", {"conversation": "not-an-id"}, "conversation"),
]


@pytest.mark.parametrize(
    ("body", "param"), [(b, p) for _, b, p in BAD_REQUESTS], ids=[i for i, _, _ in BAD_REQUESTS]
)
def test_bad_input_is_400_naming_the_field_and_stores_nothing(
    server: Server, world: World, body: dict[str, Any], param: str
) -> None:
    request = {"model": "answers", "messages": [{"role": "user", "content": QUESTION}], **body}
    headers = {"Authorization": f"Bearer {world.token}"}
    response = httpx.post(
        f"{server.http}/v1/chat/completions", json=request, headers=headers, timeout=60
    )

    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and error["param"] == param
    assert error["message"] and error["code"]
    assert Turn.objects.count() == 0


def test_tools_are_refused_clearly_through_the_sdk(server: Server, world: World) -> None:
    tool = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}
    with pytest.raises(openai.BadRequestError) as refused:
        _ask(_client(server, world.token), tools=[tool])

    assert (
        isinstance(refused.value.body, dict) and refused.value.body["code"] == "tools_unsupported"
    )
    assert "calls no tools" in refused.value.body["message"]


def test_sampling_and_unknown_parameters_are_ignored(server: Server, world: World) -> None:
    completion = _ask(
        _client(server, world.token),
        temperature=0.2,
        max_tokens=50,
        top_p=0.9,
        seed=7,
        extra_body={"frobnicate": True, "user": "someone@example.org"},
    )

    assert "[1]" in completion.choices[0].message.content
