"""The search index: embedders (and their disk cache), the dense and keyword legs."""
