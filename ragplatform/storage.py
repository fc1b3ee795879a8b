"""A file storage that keeps the bytes in PostgreSQL, so a worker on another machine reads what
the web process received without a shared folder or another service.

Files stored on the local file system before this storage was configured (under MEDIA_ROOT)
are still read, found and deleted there: nothing breaks on the switch, and
`manage.py originals_move` copies them into the database once for good.
"""

from __future__ import annotations

from datetime import datetime
from typing import IO, Any

from django.conf import settings
from django.core.files.base import ContentFile, File
from django.core.files.storage import FileSystemStorage, Storage
from django.utils.deconstruct import deconstructible

from ragplatform.models import StoredFile


@deconstructible
class DatabaseStorage(Storage):
    def _local(self) -> FileSystemStorage:
        # Read at each use, so a changed MEDIA_ROOT (tests, a remote worker) takes effect.
        return FileSystemStorage(location=settings.MEDIA_ROOT)

    def _open(self, name: str, mode: str = "rb") -> File[Any]:
        if any(flag in mode for flag in "wa+"):
            raise ValueError(
                "Database-stored files are written with save(), not opened for writing"
            )
        content = StoredFile.objects.filter(name=name).values_list("content", flat=True).first()
        if content is None:
            return self._local().open(name, mode)  # FileNotFoundError when it is not there either
        return ContentFile(bytes(content), name=name)

    def _save(self, name: str, content: IO[bytes] | File[Any]) -> str:
        if hasattr(content, "seek"):
            content.seek(0)
        data = b"".join(content.chunks()) if isinstance(content, File) else content.read()
        StoredFile.objects.create(name=name, content=data, size=len(data))
        return name

    def stored(self, name: str) -> bool:
        """In the database itself (not only in the local fallback folder)."""
        return StoredFile.objects.filter(name=name).exists()

    def exists(self, name: str) -> bool:
        return self.stored(name) or self._local().exists(name)

    def delete(self, name: str) -> None:
        StoredFile.objects.filter(name=name).delete()
        self._local().delete(name)

    def size(self, name: str) -> int:
        size = StoredFile.objects.filter(name=name).values_list("size", flat=True).first()
        return self._local().size(name) if size is None else size

    def get_created_time(self, name: str) -> datetime:
        created = StoredFile.objects.filter(name=name).values_list("created_at", flat=True).first()
        return self._local().get_created_time(name) if created is None else created

    def get_modified_time(self, name: str) -> datetime:
        return self.get_created_time(name)

    def url(self, name: str | None) -> str:
        # Originals are served by views that check who may read them, never by a public URL.
        raise NotImplementedError("Database-stored files have no public URL")

    def adopt_local(self, name: str) -> bool:
        """Copy the local file `name` into the database under the same name; False when it is
        already there or not on this machine. The local copy stays (delete it once checked)."""
        local = self._local()
        if self.stored(name) or not local.exists(name):
            return False
        with local.open(name, "rb") as handle:
            data = handle.read()
        StoredFile.objects.create(name=name, content=data, size=len(data))
        return True

    def local_delete(self, name: str) -> None:
        """Remove the local copy of a file that is now in the database."""
        if self.stored(name):
            self._local().delete(name)
