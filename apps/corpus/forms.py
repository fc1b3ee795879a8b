"""The admin's upload form: one collection (existing or new), metadata, several files."""

from __future__ import annotations

from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db.models import QuerySet

from apps.corpus.models import Collection
from apps.corpus.parsing import supported_suffixes_text


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """A file field that cleans every selected file and returns them as a list."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(**kwargs)

    def clean(self, data: Any, initial: Any = None) -> list[UploadedFile]:
        clean_one = super().clean
        uploads = data if isinstance(data, list | tuple) else [data]
        return [clean_one(upload, initial) for upload in uploads]


class DocumentUploadForm(forms.Form):
    collection = forms.ModelChoiceField(
        queryset=Collection.objects.all(), required=False, empty_label="(new collection)"
    )
    new_collection = forms.CharField(
        max_length=200, required=False, help_text="Or name a new collection."
    )
    domain = forms.CharField(max_length=100, required=False)
    document_type = forms.CharField(max_length=100, required=False)
    # Empty files are accepted here so processing records why they failed, as the API does.
    uploads = MultipleFileField(
        label="Files",
        allow_empty_file=True,
        help_text=(
            "PDF, Word (.docx), HTML, Markdown or plain text "
            f"({supported_suffixes_text()}); several files at once."
        ),
    )

    def __init__(
        self, *args: Any, collections: QuerySet[Collection] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        if collections is not None:  # only the collections the uploader may write
            self.fields["collection"].queryset = collections  # type: ignore[attr-defined]

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        existing, new_name = cleaned.get("collection"), cleaned.get("new_collection", "").strip()
        if existing and new_name:
            raise ValidationError("Choose an existing collection or name a new one, not both.")
        if not existing and not new_name:
            raise ValidationError("Choose a collection or name a new one.")
        cleaned["new_collection"] = new_name
        return cleaned
