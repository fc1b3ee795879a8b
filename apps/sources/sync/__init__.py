"""Running a source's sync: claiming it (leases.py), each item (items.py), the run (run.py)."""
