"""A question that names an identifier no passage mentions is refused: the passages are about
its neighbours (the real-documents set's "Which ssh_config option limits ... (MaxSessions)?"
over a manual without MaxSessions, "How do I make ssh use my YubiKey for 2FA?")."""

from __future__ import annotations

import pytest

from apps.answers.composing.identifiers import question_identifiers, unmentioned_identifiers
from apps.answers.composing.types import Refusal
from tests.answers.compose import ask, composer, run, text_of, window

SSH_CONFIG = (
    "ssh_config",
    "MaxStartups and MaxAuthTries are set on the server. ControlMaster enables the sharing "
    "of multiple sessions over a single network connection. ControlPersist keeps the master "
    "connection open in the background after the initial client connection has been closed.",
)
# The hashed bag-of-words fake embedder scores evidence low: no evidence threshold here, so
# only the rule under test can refuse.


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("Which option limits sessions (MaxSessions)?", ("MaxSessions",)),
        ("How do I use my YubiKey for 2FA with a TOTP code?", ("YubiKey",)),
        ("Does 40mg of B12 a day help? 64GB on the 1st disk?", ("B12",)),
        ("Can I back up to an S3 bucket over IPv6?", ("S3", "IPv6")),
        ("After how many failures does pam_faillock lock?", ("pam_faillock",)),
        ("What does JSON-RPC 2.0 look like in apt hooks?", ()),
        ("How do I hop through a bastion host with ssh?", ()),
        ("Which NFL team won in 1998?", ()),
        ("how do I run a cron job once at boot with @reboot?", ("@reboot",)),
        # a file's entries are described without the file's name: never a name to look for
        ("what's the default for max connections in rsyncd.conf", ()),
        ("what is -P in rsync, and does --delete-after wait?", ("-P", "--delete-after")),
        ("Does 5'-nucleotidase or (H2A)-histone bind JSON-RPC peers?", ("H2A",)),
    ],
)
def test_only_identifier_shaped_words_count(question: str, names: tuple[str, ...]) -> None:
    assert question_identifiers(question) == names


def test_a_name_is_mentioned_whatever_its_case_and_plural() -> None:
    passages = ["Set maxsessions to 10.", "Every API returns JSON."]
    assert unmentioned_identifiers("What do MaxSessions and the REST APIs do?", passages) == ()
    assert unmentioned_identifiers("Is IPv6 supported by MaxSessions?", passages) == ("IPv6",)


async def test_a_question_naming_an_option_no_passage_mentions_is_refused() -> None:
    question = "Which ssh_config option limits the number of sessions (MaxSessions)?"

    events = await run(composer(min_evidence=0.0), ask(question, window(SSH_CONFIG)))

    refusal = next(e for e in events if isinstance(e, Refusal))
    assert refusal.reason == "names MaxSessions, which no passage mentions"
    assert "ssh_config" in text_of(events)  # the closest document is named


async def test_the_same_question_is_answered_when_a_passage_names_the_option() -> None:
    title, text = SSH_CONFIG
    passage = text + " MaxSessions specifies the maximum number of open sessions permitted."
    question = "Which ssh_config option limits the number of sessions (MaxSessions)?"

    events = await run(composer(min_evidence=0.0), ask(question, window((title, passage))))

    assert not any(isinstance(e, Refusal) for e in events)
    assert "MaxSessions specifies" in text_of(events)


async def test_the_rule_can_be_turned_off() -> None:
    question = "Which ssh_config option limits the number of sessions (MaxSessions)?"

    events = await run(
        composer(min_evidence=0.0, refuse_unmentioned=False), ask(question, window(SSH_CONFIG))
    )

    assert not any(isinstance(e, Refusal) and "no passage mentions" in e.reason for e in events)


CRONTAB = (
    "crontab(5)",
    "Instead of the first five fields, one of eight special strings may appear: @yearly, "
    "@monthly, @weekly, @daily and @hourly run the command once a year, month, week, day or "
    "hour.",
)


async def test_a_question_naming_a_nickname_no_passage_mentions_is_refused() -> None:
    asked_reboot = await run(
        composer(min_evidence=0.0),
        ask("how do I run a cron job at boot with @reboot?", window(CRONTAB)),
    )
    asked_daily = await run(
        composer(min_evidence=0.0),
        ask("how do I run a cron job daily with @daily?", window(CRONTAB)),
    )

    refusal = asked_reboot[-1]
    assert isinstance(refusal, Refusal)
    assert refusal.reason == "names @reboot, which no passage mentions"
    assert not any(isinstance(e, Refusal) for e in asked_daily)
