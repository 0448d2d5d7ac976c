"""A small asyncio client for the bridge protocol (used by ``chat`` and by tests).

``client = await BridgeClient.connect(url, token)`` opens the WebSocket and sends ``initialize``;
``await client.call(HEALTH, Empty())`` returns the method's result model (any ``ClientRequest``
of ``wire/models``), ``await client.request(method, params)`` the raw JSON result; both raise
:class:`RpcCallError` for an error answer. Notifications go to ``on_notification(method,
params)``; server requests (``tool/confirm``) to ``await on_request(method, params)``, whose
return value is the result.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from plugin_bridge import __version__
from plugin_bridge.wire.models import (
    SESSION_INITIALIZE,
    ClientInfo,
    ClientRequest,
    InitializeParams,
    InitializeResult,
)
from plugin_bridge.wire.models.base import ParamsT, ResultT
from plugin_bridge.wire.protocol import PROTOCOL_VERSION
from plugin_bridge.wire.transport import MAX_FRAME_BYTES, quiet_websockets_logger

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

logger = logging.getLogger(__name__)

NotificationHandler = Callable[[str, dict[str, Any]], None]
RequestHandler = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


class RpcCallError(Exception):
    """The server answered a request with an error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A request sent and not yet answered."""

    id: int
    reply: asyncio.Future[Any]


class BridgeClient:
    """One connection to the bridge; see the module docstring."""

    def __init__(
        self,
        ws: ClientConnection,
        *,
        on_notification: NotificationHandler | None = None,
        on_request: RequestHandler | None = None,
    ) -> None:
        self.ws = ws
        self.on_notification = on_notification
        self.on_request = on_request
        self.initialize_result: InitializeResult | None = None
        """The server's answer to ``initialize`` (set by :meth:`connect`)."""
        self._ids = itertools.count(1)
        self._calls: dict[int, asyncio.Future[Any]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(
        cls,
        url: str,
        token: str,
        *,
        client_name: str = "plugin_bridge.wire.client",
        on_notification: NotificationHandler | None = None,
        on_request: RequestHandler | None = None,
    ) -> BridgeClient:
        """Connect to ``url`` and initialize with ``token``."""
        from websockets.asyncio.client import connect

        ws = await connect(
            url, max_size=MAX_FRAME_BYTES, logger=quiet_websockets_logger("plugin_bridge.ws")
        )
        client = cls(ws, on_notification=on_notification, on_request=on_request)
        try:
            client.initialize_result = await client.call(
                SESSION_INITIALIZE,
                InitializeParams(
                    token=token,
                    protocol_version=PROTOCOL_VERSION,
                    client=ClientInfo(name=client_name, version=__version__),
                ),
            )
        except BaseException:
            await client.close()
            raise
        return client

    async def call(self, request: ClientRequest[ParamsT, ResultT], params: ParamsT) -> ResultT:
        """Send ``request`` with ``params`` and await its result, as its result model."""
        return request.parse(await self.request(request.method, wire_params(params)))

    async def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Send a request and await its raw (JSON) result."""
        return await (await self.begin(method, params)).reply

    async def begin(self, method: str, params: dict[str, Any] | None = None) -> PendingCall:
        """Send a request; await ``.reply`` later (or cancel it with :meth:`cancel`).
        ConnectionError once the connection is closed."""
        request_id = next(self._ids)
        reply: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._calls[request_id] = reply
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        from websockets.exceptions import ConnectionClosed

        try:
            await self.ws.send(json.dumps(message, ensure_ascii=False))
        except ConnectionClosed as exc:  # as a call in flight learns it: ConnectionError
            self._calls.pop(request_id, None)
            raise ConnectionError(f"connection closed ({self.ws.close_code})") from exc
        return PendingCall(request_id, reply)

    async def cancel(self, request_id: int) -> None:
        """Ask the server to cancel a request (it then fails with -32800)."""
        await self.ws.send(
            json.dumps(
                {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": request_id}}
            )
        )

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader

    async def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            async for frame in self.ws:
                self._dispatch(json.loads(frame))
        except ConnectionClosed:
            pass
        finally:
            gone = ConnectionError(f"connection closed ({self.ws.close_code})")
            for reply in self._calls.values():
                if not reply.done():
                    reply.set_exception(gone)

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" not in message:
            request_id = message.get("id")
            reply = self._calls.pop(request_id, None) if isinstance(request_id, int) else None
            if reply is None or reply.done():
                return
            error = message.get("error")
            if error is not None:
                reply.set_exception(
                    RpcCallError(error["code"], error["message"], error.get("data"))
                )
            else:
                reply.set_result(message.get("result"))
        elif "id" in message:
            task = asyncio.create_task(self._answer(message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        elif self.on_notification is not None:
            self.on_notification(message["method"], message.get("params") or {})

    async def _answer(self, message: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if self.on_request is None:
            reply["error"] = {"code": -32601, "message": "This client answers no requests."}
        else:
            try:
                reply["result"] = await self.on_request(
                    message["method"], message.get("params") or {}
                )
            except Exception as exc:
                logger.warning("answering %s failed: %s", message["method"], exc)
                reply["error"] = {"code": -32603, "message": "The client failed to answer."}
        await self.ws.send(json.dumps(reply, ensure_ascii=False))


def wire_params(params: BaseModel) -> dict[str, Any]:
    """``params`` as sent: camelCase, only the fields the caller set (the server fills in
    the defaults)."""
    return params.model_dump(mode="json", by_alias=True, exclude_unset=True)
