"""What ingestion tells the apps built on corpus, which it never imports.

`chunks_swapped` is sent once a document's new chunks are stored and searchable (after the swap's
transaction; inside a caller's own transaction, its receivers should wait for that commit).
Answers listens to compute, in a task worker, the vectors its composer reads: a receiver must
only enqueue work, never delay the document.
"""

from __future__ import annotations

from django.dispatch import Signal

# Sent with `document_id` (int) and `sender` the Document class.
chunks_swapped = Signal()
