"""What an upload request must pass before its files are submitted: size and rate.

The API and the admin upload page both call these; the byte counting itself happens while
the body is read (`ragplatform.request_limits`).
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.http import HttpRequest
from django.template.defaultfilters import filesizeformat

from ragplatform.errors import FailureCode
from ragplatform.rate_limits import rate_take
from ragplatform.request_limits import content_length_over, upload_refusal

# One file plus the form fields that travel with it.
_API_FIELDS_ALLOWANCE = 1024 * 1024
UPLOAD_WINDOW = dt.timedelta(hours=1)


class UploadRefused(Exception):
    """Why an upload was refused; its HTTP status is its code's (`HTTP_STATUS`)."""

    def __init__(self, message: str, *, code: FailureCode) -> None:
        super().__init__(message)
        self.code = code


def single_upload_declared_check(*, request: HttpRequest) -> None:
    """The API takes one file: refuse from Content-Length alone, before anything is read."""
    if content_length_over(request.META, settings.RAG_MAX_UPLOAD_BYTES + _API_FIELDS_ALLOWANCE):
        limit = filesizeformat(settings.RAG_MAX_UPLOAD_BYTES)
        raise UploadRefused(
            f"The upload is larger than the limit of {limit}", code=FailureCode.FILE_TOO_LARGE
        )


def upload_read_check(*, request: HttpRequest) -> None:
    """After parsing: refuse if the upload handler stopped reading a file at the limit."""
    if reason := upload_refusal(request):
        raise UploadRefused(reason, code=FailureCode.FILE_TOO_LARGE)


def upload_quota_take(*, user_id: int, files: int) -> None:
    """Count `files` uploads against the user's RAG_UPLOADS_PER_HOUR, or refuse them all."""
    limit = settings.RAG_UPLOADS_PER_HOUR
    if not rate_take(key=f"uploads:{user_id}", amount=files, limit=limit, window=UPLOAD_WINDOW):
        raise UploadRefused(
            f"At most {limit} uploaded files an hour; please try again later.",
            code=FailureCode.RATE_LIMITED,
        )
