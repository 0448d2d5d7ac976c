"""What a handler knows about the request it serves: the app, the client, the request id.

The context of the running request is also kept in a context variable, so that callbacks deep
inside llm_service (the tool-permission ``confirm`` callback) reach the connection that sent the
request: asyncio copies context variables into the tasks and threads a request starts.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from plugin_bridge.models import dump
from plugin_bridge.protocol import RequestId, Response

if TYPE_CHECKING:
    from pydantic import BaseModel

    from plugin_bridge.app import BridgeApp


class Peer(Protocol):
    """The client end of a connection, as handlers use it."""

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification (a no-op once the client has gone)."""

    async def request(self, method: str, params: dict[str, Any]) -> Response:
        """Send a server request and await the answer (bound it with ``asyncio.timeout``)."""


@dataclass
class RequestContext:
    """One request being served."""

    app: BridgeApp
    peer: Peer
    request_id: RequestId
    denied: set[str] = field(default_factory=set)
    """Ids of tool calls the user did not approve during this request."""

    async def notify(self, method: str, params: BaseModel) -> None:
        await self.peer.notify(method, dump(params))


current_request: ContextVar[RequestContext | None] = ContextVar("current_request", default=None)
