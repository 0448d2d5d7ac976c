"""What no HTTP client can make the server hold: time, connections, queued requests, requests
running at once, memory, log lines.

- :class:`HttpLimits`: the numbers (docs/http.md lists them; ``serve`` sets the timeout from
  ``http_timeout``);
- :class:`Concurrency`: requests running at once, per client (its bearer token or key) and in
  all; past either bound the request is answered 429 at once;
- :class:`Limited`: the middleware that applies them and counts requests in the memory budget
  (a response's bytes until the client has taken them: one that takes none of them for
  ``timeout`` s is dropped); refusals are logged through
  :class:`~plugin_bridge.wire.refusals.RefusalLog`.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from starlette.responses import Response

from plugin_bridge.httpapi.guard import error_body
from plugin_bridge.wire.errors import RpcError, WireCode
from plugin_bridge.wire.refusals import RefusalLog

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from plugin_bridge.wire.budget import MemoryBudget

logger = logging.getLogger(__name__)

DEFAULT_HTTP_TIMEOUT: Final = 15.0
"""Seconds a connection may stay idle, take to send a request's head, or its body."""
MAX_HEAD_BYTES: Final = 64 * 1024
"""The most a request line and headers may take together."""
MAX_PIPELINED: Final = 16
"""Requests a connection may queue behind the one being answered; one more drops it."""
MAX_PIPELINED_ALL: Final = 256
"""Requests queued that way over all connections."""
MAX_PER_CLIENT: Final = 8
"""Requests of one client (one token or key) running at once; the next one gets 429."""
MAX_REQUESTS: Final = 32
"""Requests running at once over all clients."""
MAX_CONNECTIONS: Final = 512
"""Open HTTP connections, at most (and at most a quarter of the open-file limit)."""


def connection_cap(ceiling: int = MAX_CONNECTIONS) -> int:
    """At most ``ceiling`` connections, and at most a quarter of the process's open-file limit
    (macOS gives 256): the rest stay for notes, the index and the plugin's WebSocket."""
    try:
        import resource
    except ImportError:  # Windows: no such limit per process
        return ceiling
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return ceiling
    return max(8, min(ceiling, soft // 4))


@dataclass(frozen=True)
class HttpLimits:
    """Every HTTP bound in one place (tests make them small)."""

    timeout: float = DEFAULT_HTTP_TIMEOUT
    max_head_bytes: int = MAX_HEAD_BYTES
    max_pipelined: int = MAX_PIPELINED
    max_pipelined_all: int = MAX_PIPELINED_ALL
    max_per_client: int = MAX_PER_CLIENT
    max_requests: int = MAX_REQUESTS
    max_connections: int = field(default_factory=connection_cap)


class Busy(Exception):
    """Too many requests of this client, or of all clients, are running (429)."""


class Concurrency:
    """Requests running, per client and in all."""

    def __init__(self, per_client: int, total: int) -> None:
        self.per_client = per_client
        self.limit = total
        self.running: Counter[str] = Counter()
        self.total = 0

    def enter(self, client: str) -> None:
        """Count one more request of ``client``; :class:`Busy` past a bound."""
        if self.total >= self.limit:
            raise Busy("The server is answering too many HTTP requests: try again in a moment.")
        if self.running[client] >= self.per_client:
            raise Busy(
                f"More than {self.per_client} of your requests are running at once: wait for "
                "one to finish."
            )
        self.running[client] += 1
        self.total += 1

    def leave(self, client: str) -> None:
        self.total -= 1
        self.running[client] -= 1
        if self.running[client] <= 0:
            del self.running[client]


def client_of(authorization: bytes) -> str:
    """A client's identity: a digest of the credential it sent (never the credential)."""
    return hashlib.blake2b(authorization, digest_size=8).hexdigest()


OVER_BUDGET: Final = (
    "The server is holding too much data for its clients, most of it yours: try again in a moment."
)
DROP_KEY: Final = "plugin_bridge.drop"
"""The key, in the request scope's ``state``, of the listener's ``drop(why)``: closes the
request's connection at once."""
DRAIN_KEY: Final = "plugin_bridge.drained"
"""The key, in the request scope's ``state``, of the listener's ``drained()``: returns once the
connection's unsent bytes are down to its low-water mark (the client took the rest), or the
connection is gone."""


class Limited:
    """The ASGI middleware (behind the guard: every request it sees carries a valid token) that
    bounds requests running at once (:class:`Concurrency`, 429) and counts in the server's
    memory budget what each request makes the server hold: its body while it runs (past the
    budget: 503 ``busy``), and each response chunk until the client takes it (a client that
    reads nothing is dropped when it holds the most over the budget, and whatever the budget
    when it has taken nothing for ``stall`` seconds: an SSE stream it does not read)."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        budget: MemoryBudget | None,
        concurrency: Concurrency,
        stall: float = DEFAULT_HTTP_TIMEOUT,
    ) -> None:
        self.app = app
        self.budget = budget
        self.concurrency = concurrency
        self.stall = stall
        self.log = RefusalLog(logger)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        credential = next((v for k, v in scope["headers"] if k == b"authorization"), b"")
        client = client_of(credential)
        try:
            self.concurrency.enter(client)
        except Busy as exc:
            await self._refuse(scope, receive, send, 429, str(exc))
            return
        state = scope.get("state", {})
        watched = self._watched(send, state.get(DROP_KEY), state.get(DRAIN_KEY))
        try:
            if self.budget is None:
                await self.app(scope, receive, watched)
            else:
                await self._counted(scope, receive, watched, self.budget)
        finally:
            self.concurrency.leave(client)

    def _watched(
        self,
        send: Send,
        drop: Callable[[str], None] | None,
        drained: Callable[[], Awaitable[None]] | None,
    ) -> Send:
        """``send`` that returns once the client has taken the bytes (so the budget counts
        them until then), and drops the connection of a client that takes none of them for
        ``stall`` seconds."""

        async def watched(message: Message) -> None:
            try:
                async with asyncio.timeout(self.stall):
                    await send(message)
                    if drained is not None and message.get("body"):
                        await drained()
            except TimeoutError:
                if drop is not None:  # later sends of this response go nowhere
                    drop(f"the client read none of its answer for {self.stall:g} s")

        return watched

    async def _counted(
        self, scope: Scope, receive: Receive, send: Send, budget: MemoryBudget
    ) -> None:
        holder = object()
        drop = scope.get("state", {}).get(DROP_KEY)
        budget.join(
            holder, lambda: drop("it holds the most over the memory budget") if drop else None
        )
        body = 0
        started = False

        async def counted_receive() -> Message:
            nonlocal body
            message = await receive()
            size = len(message.get("body", b""))
            if size and not budget.hold(holder, size):
                raise RpcError(WireCode.TOO_MANY_REQUESTS, OVER_BUDGET, {"reason": "busy"})
            body += size
            return message

        async def counted_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            size = len(message.get("body", b""))
            budget.change(holder, size)
            try:
                await send(message)
            finally:
                budget.change(holder, -size)

        try:
            await self.app(scope, counted_receive, counted_send)
        except RpcError as exc:
            if started or exc.code is not WireCode.TOO_MANY_REQUESTS:
                raise
            await self._refuse(scope, receive, send, 503, OVER_BUDGET)
        finally:
            budget.change(holder, -body)
            budget.forget(holder)

    async def _refuse(
        self, scope: Scope, receive: Receive, send: Send, status: int, message: str
    ) -> None:
        path: str = scope["path"]
        self.log.refused(f"refused a request to {path[:100]}: {message}")
        body = error_body(path, status, "busy", message)
        response = Response(body, status, {"retry-after": "1"}, "application/json")
        await response(scope, receive, send)
