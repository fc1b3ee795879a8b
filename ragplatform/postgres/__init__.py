"""The PostgreSQL backend for DATABASE_URL: Django's, with a pool whose check of a borrowed
connection costs no round trip unless the server has spoken (`base.pooled_connection_check`).
The embedded server's backend (`ragplatform.embedded_postgres`) builds on it."""
