"""The vault layer: safe note I/O, the live search index, and the model's vault tools.

Knows nothing of WebSockets; the bridge calls it. Importing the package is cheap: each name below
loads its module (SQLite index, tool registry) on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plugin_bridge.vault.errors import VaultError
    from plugin_bridge.vault.index import SearchHit, SearchIndex, SearchResults
    from plugin_bridge.vault.notes import NoteContent, NoteInfo, NoteStore, WriteResult
    from plugin_bridge.vault.tools import (
        VAULT_TOOL_NAMES,
        ToolTarget,
        preview_tool_call,
        register_vault_tools,
    )
    from plugin_bridge.vault.vault import Vault

_LAZY = {
    "VaultError": "plugin_bridge.vault.errors",
    "SearchHit": "plugin_bridge.vault.index",
    "SearchIndex": "plugin_bridge.vault.index",
    "SearchResults": "plugin_bridge.vault.index",
    "NoteContent": "plugin_bridge.vault.notes",
    "NoteInfo": "plugin_bridge.vault.notes",
    "NoteStore": "plugin_bridge.vault.notes",
    "WriteResult": "plugin_bridge.vault.notes",
    "VAULT_TOOL_NAMES": "plugin_bridge.vault.tools",
    "ToolTarget": "plugin_bridge.vault.tools",
    "preview_tool_call": "plugin_bridge.vault.tools",
    "register_vault_tools": "plugin_bridge.vault.tools",
    "Vault": "plugin_bridge.vault.vault",
}

__all__ = [
    "VAULT_TOOL_NAMES",
    "NoteContent",
    "NoteInfo",
    "NoteStore",
    "SearchHit",
    "SearchIndex",
    "SearchResults",
    "ToolTarget",
    "Vault",
    "VaultError",
    "WriteResult",
    "preview_tool_call",
    "register_vault_tools",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
