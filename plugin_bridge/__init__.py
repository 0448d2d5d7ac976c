"""plugin_bridge: the localhost WebSocket JSON-RPC server an Obsidian plugin talks to.

Run it with ``obsidian-ai-bridge serve --vault PATH``; the wire contract is docs/protocol.md.
Importing this package is cheap: ``serve`` binds its port before loading pydantic, the vault
index or any provider SDK.
"""

from __future__ import annotations

DISTRIBUTION = "obsidian-ai-bridge"
PROTOCOL_VERSION = 1
"""The protocol version this server speaks (docs/protocol.md)."""


def __getattr__(name: str) -> str:
    """``__version__``: the installed distribution's version (pyproject.toml is its one source),
    read from the package metadata on first use."""
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version(DISTRIBUTION)
    except PackageNotFoundError:  # run from a checkout that was never installed
        found = "0+unknown"
    globals()["__version__"] = found
    return found
