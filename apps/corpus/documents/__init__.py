"""Reads of documents and their chunks, and the stored originals."""
