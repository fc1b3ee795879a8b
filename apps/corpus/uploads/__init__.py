"""Files arriving by hand: batches from the admin, the API and `manage.py ingest`; their size and rate guard, target collection, and kept uploads."""
