"""Post-turn work runs in a db_worker, so the answer never waits for it."""

from __future__ import annotations

import logging

from django_tasks import task

from apps.analytics.services import post_turn_run
from apps.answers.providers.configured import chat_model_configured
from apps.corpus.embedders import default_embedder

logger = logging.getLogger(__name__)


@task()
def post_turn_task(turn_id: int) -> None:
    try:
        post_turn_run(turn_id=turn_id, embedder=default_embedder(), chat=chat_model_configured())
    except Exception:
        # Loud, and contained: the answer is already stored and must stay untouched.
        logger.exception("Post-turn step failed for turn %s", turn_id)
