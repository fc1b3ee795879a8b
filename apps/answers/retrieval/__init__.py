"""Retrieval: dense + keyword legs, fusion, optional rerank, HyDE, multi-hop, context building."""
