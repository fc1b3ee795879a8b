"""The documents REST API."""
