"""The chat and the audit number a turn's sources alike: the number the asker saw on a chip
stands beside the composer's alias in the audit."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from apps.answers.models import Citation, CitationKind
from apps.answers.turn.citation_numbers import citation_numbers
from tests.factories import CitationFactory, ConversationFactory, TurnFactory

ANSWER = "Leave is 26 days. It expires in March. Ask your manager."


@pytest.mark.django_db
def test_the_chat_and_the_audit_show_the_same_number_for_each_source(
    client: Client, admin_client: Client, django_user_model: type[User]
) -> None:
    ada = django_user_model.objects.create_user("ada", password="a-long-test-password")
    turn = TurnFactory.create(conversation=ConversationFactory.create(user=ada), answer=ANSWER)
    # Stored in the order the markers arrived: c4 first, then c1; c2 was only attributed.
    CitationFactory.create(turn=turn, alias="c4", position=len("Leave is 26 days."))
    CitationFactory.create(turn=turn, alias="c1", position=len("Leave is 26 days. It expires"))
    CitationFactory.create(turn=turn, alias="c2", kind=CitationKind.ATTRIBUTED)

    client.force_login(ada)
    chat = client.get(f"/c/{turn.conversation_id}/").content.decode()
    chips = re.findall(r'<a class="chip"[^>]*data-alias="(c\d)"[^>]*>(\d)</a>', chat)
    assert chips == [("c4", "1"), ("c1", "2")]

    audit = admin_client.get(reverse("admin:answers_turn_change", args=[turn.pk])).content.decode()
    assert '<a class="chip" href="#citation-c4" title="c4 ' in audit
    assert re.search(r'href="#citation-c4"[^>]*>\[1\]</a>', audit)
    assert re.search(r'href="#citation-c1"[^>]*>\[2\]</a>', audit)
    rows = re.findall(r'<tr id="citation-(c\d)">\s*<td>(\[\d\] )?<span class="quiet">', audit)
    assert rows == [("c1", "[2] "), ("c4", "[1] "), ("c2", "")]


@pytest.mark.django_db
def test_markers_at_one_offset_keep_their_arrival_order() -> None:
    turn = TurnFactory.create()
    late = [CitationFactory.create(turn=turn, alias=a, position=5) for a in ("c3", "c10")]
    unplaced = CitationFactory.create(turn=turn, alias="c7", position=None)
    early = CitationFactory.create(turn=turn, alias="c9", position=1)
    rows = Citation.objects.filter(turn=turn)
    assert citation_numbers(rows) == {"c9": 1, "c3": 2, "c10": 3, "c7": 4}
    assert {c.alias for c in [*late, unplaced, early]} == set(citation_numbers(rows))
