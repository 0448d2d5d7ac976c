"""Chat apps as one more transport: a shared core (conversation per chat, streaming by edits,
approvals by buttons, splitting, commands, allow-list, never answered twice) and thin Telegram
and Discord adapters (docs/architecture.md)."""
