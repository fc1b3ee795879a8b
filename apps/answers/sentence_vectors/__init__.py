"""The extractive composer's sentence vectors, computed by a task worker after ingestion and read
by turns instead of running the model (`composing/vectors.py` is the seam they are read by)."""
