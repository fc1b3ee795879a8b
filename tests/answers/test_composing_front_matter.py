"""A manual page's banner and a licence notice are never the answer (composing/front_matter.py)."""

from __future__ import annotations

import pytest

from apps.answers.composing.front_matter import asks_about_document, is_front_matter
from tests.answers.compose import ask, composer, run, text_of, window


@pytest.mark.parametrize(
    "sentence",
    [
        "LOGROTATE(8) System Administrator's Manual LOGROTATE(8) NAME logrotate - rotates logs",
        "SSH_CONFIG(5) BSD File Formats Manual SSH_CONFIG(5) NAME ssh_config",
        "Copyright © 1999 Jason Gunthorpe License Notice APT and this document are free software",
        "This documentation is licensed under the terms of the Creative Commons license.",
        "This program is distributed WITHOUT ANY WARRANTY.",
    ],
)
def test_banners_and_notices_are_front_matter(sentence: str) -> None:
    assert is_front_matter(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "notifempty Do not rotate the log if it is empty (this overrides the ifempty option).",
        "See logrotate(8) and cron(8) for when the job runs.",
        "The license key is read from /etc/app/key.",
    ],
)
def test_manual_text_is_not_front_matter(sentence: str) -> None:
    assert not is_front_matter(sentence)


def test_a_question_about_the_licence_asks_about_the_document() -> None:
    assert asks_about_document("Under which license is logrotate distributed?")
    assert not asks_about_document("which logrotate directive skips rotating empty logs?")


MANUAL = (
    "LOGROTATE",
    "LOGROTATE(8) System Administrator's Manual LOGROTATE(8) NAME logrotate - rotates, "
    "compresses, and mails system logs: directives, empty logs, rotating. "
    "This documentation is licensed under the terms of the GNU General Public License, "
    "logrotate directives and rotating logs included.",
)
DIRECTIVES = (
    "Directives",
    "notifempty Do not rotate the log if it is empty. missingok Go on to the next log file "
    "without an error message if the log file is missing.",
)


async def test_the_banner_and_the_licence_are_not_chosen_over_the_entry() -> None:
    events = await run(
        composer(max_sentences=1, min_evidence=0.05),
        ask("which logrotate directive skips rotating empty logs?", window(MANUAL, DIRECTIVES)),
    )

    text = text_of(events)
    assert "notifempty" in text
    assert "LOGROTATE(8)" not in text and "licensed" not in text


async def test_a_question_about_the_licence_is_answered_from_the_notice() -> None:
    events = await run(
        composer(max_sentences=1, min_evidence=0.05),
        ask("Under which license is the logrotate documentation?", window(MANUAL, DIRECTIVES)),
    )

    assert "GNU General Public License" in text_of(events)
