"""One turn, end to end: speculate, route, retrieve, compose, record (DESIGN.md, "One turn")."""
