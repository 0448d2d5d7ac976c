"""What the HTTP routes share: the bridge and the vault tools over HTTP.

Every model call of ``/v1/chat/completions`` and ``/chat`` is the application's
:meth:`~plugin_bridge.app.assistant.Assistant.ask` (or ``ask_events``) with purpose ``http``:
the routes only translate bodies into its calls and its answers into OpenAI's shapes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from plugin_bridge.app.clients import Caller
    from plugin_bridge.app.state import BridgeApp
    from plugin_bridge.app.tools import Tools

PURPOSE: Final = "http"
"""The purpose every HTTP model call is recorded under."""


class HttpChat:
    """The HTTP API's state: the bridge it serves."""

    def __init__(self, bridge: BridgeApp) -> None:
        self.bridge = bridge

    def tools(self, caller: Caller) -> Tools:
        """The vault tools as ``caller`` uses them over HTTP (see ``ToolAccess.over_http``)."""
        return self.bridge.access.over_http(caller)
