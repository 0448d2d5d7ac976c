"""Messages and tool specs the provider tests share."""

from __future__ import annotations

from llm_service import Message, ToolSpec

HELLO = [Message.user("hello")]
SEARCH = ToolSpec(
    "search_notes",
    "Search the vault",
    {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)
READ = ToolSpec(
    "read_note", "Read a note", {"type": "object", "properties": {"path": {"type": "string"}}}
)
