"""One turn, end to end: entry, speculate, route, retrieve, compose, record (docs/architecture.md)."""
