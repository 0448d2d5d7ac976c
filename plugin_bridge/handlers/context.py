"""The request context and router of the bridge's handlers, typed with the app's state."""

from __future__ import annotations

from typing import TypeAlias

from plugin_bridge.app.state import BridgeApp
from plugin_bridge.wire.context import RequestContext
from plugin_bridge.wire.rpc import Router

Context: TypeAlias = RequestContext[BridgeApp]
AppRouter: TypeAlias = Router[BridgeApp]
