"""Background work, run by `python manage.py worker` (django-tasks-db's task loop).

`uploads.document_schedule` enqueues these; they only call services.
"""

from __future__ import annotations

from django_tasks import task

from apps.corpus.ingestion.services import document_process


@task()
def document_process_task(document_id: int) -> None:
    result = document_process(document_id=document_id)
    for attached in result.attached:  # an e-mail's attachments, documents of their own
        document_process_task.enqueue(attached)
