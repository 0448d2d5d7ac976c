"""The vault as an MCP server: ``obsidian-ai-bridge mcp`` over stdio (:mod:`plugin_bridge.cli.mcp`)
and ``/mcp`` over streamable HTTP on the bridge's HTTP listener (:func:`streamable_http_app`).

Both offer the model's own vault tools (:mod:`plugin_bridge.mcp.tools`); the SDK is imported
only when one of them is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from plugin_bridge.app.state import BridgeApp
    from plugin_bridge.mcp.server import McpHttpApp


def streamable_http_app(app: BridgeApp, *, allow_writes: bool = False) -> McpHttpApp:
    """The ASGI app of ``/mcp`` for the server of ``app``: its vault's tools, the writes only
    with ``allow_writes``. Mount it behind the listener's bearer-token check, and call its
    ``aclose()`` when the listener stops."""
    from plugin_bridge.mcp.server import McpHttpApp, build_server
    from plugin_bridge.mcp.tools import LocalTools

    tools = LocalTools(app.vault, allow_writes=allow_writes)
    return McpHttpApp(build_server(tools, app.vault.name))
