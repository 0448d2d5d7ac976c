"""One client connection: runs requests as tasks, cancels them, asks the client questions.

Transport-agnostic: it gets frames through :meth:`Connection.handle_frame` and sends bytes through
the ``send`` coroutine it was given (which must swallow errors of a closed transport). The JSON-RPC
rules are in :mod:`plugin_bridge.wire.protocol`; this module adds time and tasks: ``initialize``
runs inline (so a client may pipeline requests after it), every other request in its own task, so
``$/cancelRequest`` and a disconnect can cancel it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Final, Generic

from pydantic import ValidationError

from plugin_bridge.wire.context import RequestContext, S
from plugin_bridge.wire.errors import RpcError, WireCode, WireError, to_wire_error
from plugin_bridge.wire.models import CancelRequestParams
from plugin_bridge.wire.protocol import (
    INITIALIZE,
    ErrorReply,
    InboundNotification,
    Protocol,
    Request,
    RequestId,
    Response,
    State,
)
from plugin_bridge.wire.rpc import Router

logger = logging.getLogger(__name__)

CANCEL_METHOD: Final = CancelRequestParams.METHOD
OUTGOING_LIMIT: Final = 4 * 1024 * 1024
"""Past this many unsent bytes the client is not read until they drain (see the server)."""
UNSENT_COPIES: Final = 2
"""A message waiting to go out is held twice: its bytes, kept until the send returns, and the
transport's copy of what the kernel has not taken yet; the budget counts both."""
DRAIN_SECONDS: Final = 5.0
"""How long a closing connection waits for its cancelled requests to unwind."""

Send = Callable[[bytes], Awaitable[None]]


class Connection(Generic[S]):
    """The server side of one client connection: ``router``'s methods, served with ``app``."""

    def __init__(
        self,
        router: Router[S],
        app: S,
        send: Send,
        *,
        peer_name: str = "client",
        account: Callable[[int], None] | None = None,
        reserve: Callable[[int], Awaitable[bool]] | None = None,
    ) -> None:
        self.router = router
        self.app = app
        self.protocol = Protocol()
        self.peer_name = peer_name
        self._transport_send = send
        self._account = account
        """Told of every change of ``outgoing`` (the server's budget over all connections)."""
        self._reserve = reserve
        """Asked before a reply being built is counted, and with 0 before a request runs
        (False: the budget refuses it, after a bounded wait for room)."""
        self._building: dict[RequestId, int] = {}
        """Bytes of replies being built, per request (counted in the budget until sent)."""
        self.outgoing = 0
        """Bytes handed to ``send`` whose sending has not finished (a client that does not read
        keeps them here); the server stops reading this client while it is over its bound."""
        self._drained = asyncio.Event()
        self._drained.set()
        self._over_limit = asyncio.Event()
        self._tasks: dict[RequestId, asyncio.Task[None]] = {}
        self._cancel_requested: set[RequestId] = set()
        self._started: set[RequestId] = set()
        self._waiting: dict[str, asyncio.Future[Response]] = {}
        self._closing = False
        self.client: str | None = None
        """The name the client gave in its initialize, once that succeeded."""
        self.caller: Any = None
        """Who the client authenticated as in its initialize (see ``RequestContext.caller``)."""

    async def _send(self, data: bytes) -> None:
        self.outgoing += len(data)
        self._drained.clear()
        if self.outgoing > OUTGOING_LIMIT:
            self._over_limit.set()
        held = UNSENT_COPIES * len(data)
        if self._account is not None:
            self._account(held)
        try:
            await self._transport_send(data)
        finally:
            if self._account is not None:
                self._account(-held)
            self.outgoing -= len(data)
            if self.outgoing <= OUTGOING_LIMIT:
                self._over_limit.clear()
            if self.outgoing == 0:
                self._drained.set()

    async def hold(self, request_id: RequestId, size: int) -> None:
        """Count ``size`` bytes of the reply ``request_id`` is building against the server's
        budget, until the reply is handed to the transport; RpcError -32003 ``busy`` when
        the budget is used up and this client holds at least its share (after a bounded
        wait for room)."""
        if self._reserve is None:
            return
        if not await self._reserve(size):
            raise _busy()
        self._building[request_id] = self._building.get(request_id, 0) + size

    def _built(self, request_id: RequestId) -> None:
        """The reply of ``request_id`` is built (or abandoned): its bytes no longer count as
        being built (:meth:`_send` counts them from here while they wait to go out)."""
        size = self._building.pop(request_id, 0)
        if size and self._account is not None:
            self._account(-size)

    async def drained(self) -> None:
        """Return once everything sent so far has gone out."""
        await self._drained.wait()

    async def over_limit(self) -> None:
        """Return once more than :data:`OUTGOING_LIMIT` bytes wait to be sent."""
        await self._over_limit.wait()

    @property
    def closed(self) -> bool:
        return self._closing

    @property
    def ready(self) -> bool:
        return self.protocol.state is State.READY

    async def handle_frame(self, frame: str | bytes) -> None:
        """Process one received frame."""
        event = (
            self.protocol.receive_bytes(frame)
            if isinstance(frame, bytes)
            else self.protocol.receive_text(frame)
        )
        if event is None:
            return
        if isinstance(event, ErrorReply):
            await self._send(event.data)
        elif isinstance(event, Response):
            waiter = self._waiting.get(str(event.id))
            if waiter is not None and not waiter.done():
                waiter.set_result(event)
        elif isinstance(event, InboundNotification):
            await self._handle_notification(event)
        elif event.method == INITIALIZE:
            await self._serve(event)
        else:
            task = asyncio.create_task(self._serve(event), name=f"rpc {event.method}")
            self._tasks[event.id] = task

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        if not self._closing:
            await self._send(self.protocol.notification(method, params))

    async def request(self, method: str, params: dict[str, Any]) -> Response:
        request_id, data = self.protocol.request(method, params)
        waiter: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = waiter
        try:
            await self._send(data)
            return await waiter
        finally:
            self._waiting.pop(request_id, None)
            self.protocol.forget(request_id)

    async def connection_lost(self) -> None:
        """The client is gone (or the server stops): cancel everything still running."""
        self._closing = True
        self.protocol.close()
        for waiter in self._waiting.values():
            waiter.cancel()
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=DRAIN_SECONDS)
            if pending:
                logger.warning(
                    "%d requests did not stop within %.0f s", len(pending), DRAIN_SECONDS
                )

    async def _handle_notification(self, event: InboundNotification) -> None:
        if event.method != CANCEL_METHOD:
            logger.debug("ignoring notification %.60s", event.method)
            return
        try:
            target = CancelRequestParams.model_validate(
                event.params, by_alias=True, by_name=False
            ).id
        except ValidationError:
            logger.debug("ignoring a malformed $/cancelRequest")
            return
        task = self._tasks.get(target)
        if task is None or task.done():
            logger.debug("$/cancelRequest for a request that is not running")
            return
        if target in self._started:
            self._cancel_requested.add(target)
            task.cancel()  # _run answers it -32800
            return
        # Not started yet (pipelined right behind its request): it never runs, and is answered
        # now, so a request and its cancel do not hold a place among the requests in flight.
        task.cancel()
        del self._tasks[target]
        await self._send(self._cancelled(target))

    async def _serve(self, request: Request) -> None:
        """Run one request and send its answer (a cancel that came before it started has
        answered it already: see :meth:`_handle_notification`)."""
        self._started.add(request.id)
        try:
            data = await self._run(request)
        finally:
            self._started.discard(request.id)
            self._tasks.pop(request.id, None)
            self._cancel_requested.discard(request.id)
            self._built(request.id)
        await self._send(data)

    async def _run(self, request: Request) -> bytes:
        ctx = RequestContext(
            self.app, self, request.id, self.router.names, client=self.client, caller=self.caller
        )
        logger.debug("%s: request %r %s", self.peer_name, request.id, request.method)
        try:
            if self._reserve is not None and not await self._reserve(0):
                raise _busy()  # its replies so far are unread: do not start more work
            result = await self.router.dispatch(ctx, request.method, request.params)
        except asyncio.CancelledError:
            if self._closing or request.id not in self._cancel_requested:
                raise
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            return self._cancelled(request.id)
        except Exception as exc:
            return self.protocol.error(request.id, to_wire_error(exc))
        if request.method == INITIALIZE:
            self.client = _client_name(request.params)
            self.caller = ctx.caller
        return self.protocol.result(request.id, result)

    def _cancelled(self, request_id: RequestId) -> bytes:
        return self.protocol.error(
            request_id, WireError(int(WireCode.CANCELLED), "Request cancelled.")
        )


def _busy() -> RpcError:
    return RpcError(
        WireCode.TOO_MANY_REQUESTS,
        "The server is holding too many replies you have not read yet: read them, then try again.",
        {"reason": "busy"},
    )


def _client_name(params: object) -> str | None:
    """``client.name`` of initialize params the handler accepted."""
    client = params.get("client") if isinstance(params, dict) else None
    name = client.get("name") if isinstance(client, dict) else None
    return name if isinstance(name, str) else None
