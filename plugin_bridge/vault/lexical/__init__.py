"""Lexical search: the SQLite FTS5 index, its worker and helper process, query parsing, CJK,
the watcher."""
