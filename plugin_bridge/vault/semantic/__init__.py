"""Semantic search: chunks, the background embedding job, vectors, hybrid search, related
notes."""
