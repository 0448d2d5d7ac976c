"""Conversations: the stored transcripts (SQLite), their notes, titles, usage and budgets."""
