"""A tiny scripted HTTP/1.1 server on 127.0.0.1 for testing the real SDKs against real bytes.

Each request takes the next queued :class:`Reply` (FIFO), or, when ``route`` is set, the reply
it gives for the recorded request (for clients that send several requests at once). A reply is
a status, headers and either a whole body or a list of streamed chunks (sent with chunked
transfer encoding, as real APIs stream SSE and NDJSON). Special chunk markers let a test hang
the stream until the client goes away (``HANG``) or tear the connection down (``RESET``). Every
request is recorded, and ``disconnected`` is set when a client drops a connection in the middle
of a reply.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Final

HANG: Final = object()
"""Chunk marker: stop sending and wait until the client closes the connection."""
RESET: Final = object()
"""Chunk marker (or ``Reply(reset=True)``): abort the TCP connection at this point."""


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    chunks: Iterable[Any] | None = None
    """Streamed pieces; any iterable, so a generator can stream forever."""
    reset: bool = False
    """Abort the connection as soon as the request is read, before any response byte."""

    @classmethod
    def json(cls, payload: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
        return cls(
            status,
            {"content-type": "application/json", **(headers or {})},
            json.dumps(payload).encode(),
        )

    @classmethod
    def stream(
        cls,
        chunks: Iterable[Any],
        content_type: str = "text/event-stream",
        status: int = 200,
        headers: dict[str, str] | None = None,
    ) -> Reply:
        return cls(status, {"content-type": content_type, **(headers or {})}, chunks=chunks)


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class FakeHTTPServer:
    """Serve queued replies; use as ``async with FakeHTTPServer() as server: server.url``."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.route: Callable[[Recorded], Reply] | None = None
        """When set, the reply for each request, instead of the queue."""
        self.requests: list[Recorded] = []
        self.disconnected = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def enqueue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    async def __aenter__(self) -> FakeHTTPServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            while await self._one_request(reader, writer):
                pass
        except (ConnectionError, asyncio.IncompleteReadError):
            self.disconnected.set()
        except asyncio.CancelledError:
            pass  # the server is shutting down
        finally:
            self._handlers.discard(task)
            writer.transport.abort()

    async def _one_request(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> bool:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, path, _ = request_line.split(" ", 2)
        headers = {}
        for line in header_lines:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        request = Recorded(method, path, headers, body)
        self.requests.append(request)
        reply = self._reply_for(request)
        if reply.reset:
            writer.transport.abort()
            return False
        if reply.chunks is None:
            writer.write(_head(reply, {"content-length": str(len(reply.body))}) + reply.body)
            await writer.drain()
            return True
        writer.write(_head(reply, {"transfer-encoding": "chunked"}))
        for chunk in reply.chunks:
            if chunk is HANG:
                await self._wait_for_disconnect(reader)
                return False
            if chunk is RESET:
                writer.transport.abort()
                return False
            if isinstance(chunk, (int, float)):
                await asyncio.sleep(chunk)
                continue
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    def _reply_for(self, request: Recorded) -> Reply:
        if self.route is not None:
            return self.route(request)
        if self.replies:
            return self.replies.pop(0)
        return Reply.json(
            {"error": f"fake server: no reply queued for {request.method} {request.path}"},
            status=599,
        )

    async def _wait_for_disconnect(self, reader: asyncio.StreamReader) -> None:
        while await reader.read(4096):
            pass
        self.disconnected.set()


def _head(reply: Reply, extra: dict[str, str]) -> bytes:
    lines = [f"HTTP/1.1 {reply.status} {_REASONS.get(reply.status, 'Status')}"]
    lines += [f"{k}: {v}" for k, v in {**reply.headers, **extra}.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


_REASONS = {
    200: "OK",
    302: "Found",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    413: "Payload Too Large",
    422: "Unprocessable Entity",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    529: "Overloaded",
}
