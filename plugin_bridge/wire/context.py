"""What a handler knows about the request it serves: the app state, the client, the request id.

``RequestContext`` is generic in the state the server was given (the bridge's
:class:`~plugin_bridge.app.state.BridgeApp`), so the wire layer never imports the application.
It is handed to the handler as its first argument, never kept in a context variable: what a
run needs (its caller, its connection) is passed on from it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from plugin_bridge.wire.models import Notification, dump
from plugin_bridge.wire.protocol import RequestId, Response

S = TypeVar("S")
"""The state a server hands its handlers (``ctx.app``): the wire's one type variable for it."""


class Peer(Protocol):
    """The client end of a connection, as handlers use it."""

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Send a notification (a no-op once the client has gone)."""

    async def request(self, method: str, params: dict[str, Any]) -> Response:
        """Send a server request and await the answer (bound it with ``asyncio.timeout``)."""

    @property
    def closed(self) -> bool:
        """True once the client has gone."""

    async def hold(self, request_id: RequestId, size: int) -> None:
        """Count ``size`` bytes of ``request_id``'s reply being built against the server's
        memory budget (RpcError -32003 ``busy`` when it refuses)."""


@dataclass
class RequestContext(Generic[S]):
    """One request being served."""

    app: S
    peer: Peer
    request_id: RequestId
    methods: Collection[str] = ()
    """The names of every method the server answers (``initialize`` lists them)."""
    client: str | None = None
    """The client's name from its initialize (``client.name``), e.g. ``ai-bridge-assistant``."""
    caller: Any = None
    """Who the connection authenticated as (the app's type: a client key or the owner); set
    by the ``initialize`` handler, then carried by every request of the connection."""

    async def notify(self, notification: Notification) -> None:
        """Send ``notification`` (its model says its method) to this request's client."""
        await self.peer.notify(notification.METHOD, dump(notification))

    async def hold(self, size: int) -> None:
        """This request's reply holds ``size`` more bytes from now until it is sent: counted
        in the server's memory budget, which may keep it waiting for room, or refuse it
        (-32003, ``data.reason`` busy)."""
        await self.peer.hold(self.request_id, size)
