"""plugin_bridge: the localhost WebSocket JSON-RPC server an Obsidian plugin talks to.

Run it with ``python -m plugin_bridge serve --vault PATH``; the wire contract is docs/protocol.md.
Importing this package is cheap: ``serve`` binds its port before loading pydantic, the vault
index or any provider SDK.
"""

from __future__ import annotations

__version__ = "0.1.0"
PROTOCOL_VERSION = 1
"""The protocol version this server speaks (docs/protocol.md)."""
