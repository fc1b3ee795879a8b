"""The admin's upload form: one collection (existing or new), metadata, several files."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from django import forms
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db.models import QuerySet
from django.http import QueryDict
from django.template.defaultfilters import filesizeformat

from apps.corpus.models import Collection, KeptUpload
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
        required=False,  # files kept from a previous try may be all there is
        allow_empty_file=True,
        help_text=(
            "PDF, Word (.docx), HTML, Markdown or plain text "
            f"({supported_suffixes_text()}); several files at once."
        ),
    )

    kept = forms.MultipleChoiceField(
        label="Kept files",
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=(
            "Chosen before the error above and kept on the server, so there is no need to "
            "choose them again; untick a file to leave it out."
        ),
    )

    def __init__(
        self,
        *args: Any,
        collections: QuerySet[Collection] | None = None,
        kept: Sequence[KeptUpload] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        if collections is not None:  # only the collections the uploader may write
            self.fields["collection"].queryset = collections  # type: ignore[attr-defined]
        self.kept_offer(kept)

    def kept_offer(self, kept: Sequence[KeptUpload], *, chosen: Sequence[str] = ()) -> None:
        """Offer these kept files (only the uploader's own); `chosen` ones are shown ticked."""
        self.kept_uploads = list(kept)
        field = cast(forms.MultipleChoiceField, self.fields["kept"])
        # Hidden (an empty row) until there is something kept to show.
        field.widget = forms.CheckboxSelectMultiple() if kept else forms.MultipleHiddenInput()
        field.choices = [
            (str(k.token), f"{k.filename} ({filesizeformat(k.size_bytes)})") for k in kept
        ]
        if chosen and self.is_bound:
            data = self.posted().copy()
            data.setlist(self.add_prefix("kept"), list(chosen))
            self.data = data

    def posted(self) -> QueryDict:
        return cast(QueryDict, self.data)

    def kept_ticked(self) -> set[str]:
        """The kept files still ticked in the submitted form."""
        return set(self.posted().getlist(self.add_prefix("kept")))

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        if not cleaned.get("uploads") and not cleaned.get("kept") and "uploads" not in self.errors:
            self.add_error("uploads", "Choose at least one file.")
        existing, new_name = cleaned.get("collection"), cleaned.get("new_collection", "").strip()
        if existing and new_name:
            raise ValidationError("Choose an existing collection or name a new one, not both.")
        if not existing and not new_name:
            raise ValidationError("Choose a collection or name a new one.")
        cleaned["new_collection"] = new_name
        return cleaned
