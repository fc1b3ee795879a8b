"""The REST API over a user's own conversations and turns, the collections they can read and
the non-streaming answer endpoint (DRF; schema at /api/schema/)."""
