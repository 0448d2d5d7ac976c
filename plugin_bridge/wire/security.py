"""Who may talk to the bridge: loopback binds only, and the WebSocket handshake checks.

A web page in the user's browser can open ``ws://127.0.0.1:PORT`` too, so the handshake refuses
(HTTP 403) an ``Origin`` header that is not in the allowlist (non-browser clients send none),
and a ``Host`` header that is not ``127.0.0.1:PORT``, ``localhost:PORT`` or ``[::1]:PORT`` (a
DNS-rebinding page would send its own host name). The token check comes after, in
``initialize``. A client that sends a ``nonce`` in the URL gets :func:`server_proof` of it as
the first frame, so it can tell the real server from an impostor before it sends the token.
"""

from __future__ import annotations

import asyncio
import base64
import errno
import hashlib
import hmac
import ipaddress
import logging
import os
import re
import socket
import time
from collections.abc import Callable, Collection
from typing import Any, Final, Protocol
from urllib.parse import parse_qs, urlsplit

logger = logging.getLogger(__name__)

DEFAULT_ALLOWED_ORIGINS: Final = ("app://obsidian.md",)
BACKLOG: Final = 128
_NONCE: Final = re.compile(r"[A-Za-z0-9_-]{22,128}")
"""A nonce: base64url without padding, 16 to 96 bytes (the plugin sends 32: 43 characters)."""


class HeaderSource(Protocol):
    def get_all(self, key: str) -> list[str]: ...


def is_loopback_host(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses (127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def bind_host(host: str) -> str:
    """The address to bind for ``host``: ``localhost`` means 127.0.0.1 (one socket, one port)."""
    return "127.0.0.1" if host.lower() == "localhost" else host.strip("[]")


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0 = a free one)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=BACKLOG)
    return ListeningSocket(sock.family, sock.type, sock.proto, fileno=sock.detach())


OUT_OF_HANDLES_MESSAGE: Final = "socket.accept() out of system resource"
"""What asyncio reports (with a traceback, once per retry) when accept() fails with EMFILE."""


class ListeningSocket(socket.socket):
    """A listening socket that runs out of file handles quietly: the first accept() failing
    with EMFILE or ENFILE logs one line and lets asyncio pause accepting (it retries a second
    later); the other attempts of the same round stop at once instead of failing again, and a
    success after the shortage logs one line more. (asyncio's own report of the failure is
    left out by :func:`quiet_accept_errors`.)"""

    _short_since: float | None = None
    _paused_until = 0.0

    def accept(self) -> tuple[socket.socket, Any]:
        now = time.monotonic()
        if now < self._paused_until:
            raise ConnectionAbortedError("accepting is paused: out of file handles")
        try:
            accepted = super().accept()
        except OSError as exc:
            if exc.errno not in (errno.EMFILE, errno.ENFILE):
                raise
            self._paused_until = now + ACCEPT_PAUSE
            if self._short_since is None:
                self._short_since = now
                logger.warning(
                    "Out of file handles (%s): new connections wait until some close; "
                    "close idle clients or raise the limit (ulimit -n).",
                    os.strerror(exc.errno),
                )
            raise
        if self._short_since is not None:
            logger.warning(
                "Accepting connections again after %.0f s without file handles.",
                now - self._short_since,
            )
            self._short_since = None
        return accepted


ACCEPT_PAUSE: Final = 0.5
"""After EMFILE, the rest of asyncio's accept round stops at once (it retries after 1 s)."""


def quiet_accept_errors(loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
    """Leave asyncio's report of accept() out of file handles to :class:`ListeningSocket`'s
    one line (asyncio logs a traceback for every retry); returns what undoes it."""
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if context.get("message") == OUT_OF_HANDLES_MESSAGE:
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
    return lambda: loop.set_exception_handler(previous)


def ws_url(host: str, port: int) -> str:
    """``ws://host:port`` with IPv6 addresses bracketed."""
    shown = f"[{host}]" if ":" in host else host
    return f"ws://{shown}:{port}"


def http_url(host: str, port: int) -> str:
    """``http://host:port`` with IPv6 addresses bracketed (the HTTP API's address)."""
    return "http" + ws_url(host, port).removeprefix("ws")


def allowed_hosts(port: int) -> frozenset[str]:
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"})


def check_handshake(
    headers: HeaderSource, port: int, allowed_origins: Collection[str]
) -> str | None:
    """Why the handshake must be refused, or None to accept it."""
    origins = headers.get_all("Origin")
    if len(origins) > 1 or (origins and origins[0] not in allowed_origins):
        return "Origin not allowed.\n"
    hosts = headers.get_all("Host")
    if len(hosts) != 1 or hosts[0].lower() not in allowed_hosts(port):
        return "Host not allowed: connect to 127.0.0.1, localhost or [::1].\n"
    return None


class BadNonce(ValueError):
    """The handshake URL's ``nonce`` is not one nonce of 22-128 base64url characters."""


def nonce_of(path: str) -> str | None:
    """The ``nonce`` query parameter of a handshake request path, None when there is none;
    :class:`BadNonce` when it is malformed or given twice."""
    values = parse_qs(urlsplit(path).query, keep_blank_values=True).get("nonce")
    if values is None:
        return None
    if len(values) != 1 or not _NONCE.fullmatch(values[0]):
        raise BadNonce("nonce must be given once, as 22 to 128 base64url characters.\n")
    return values[0]


def server_proof(token: str, nonce: str) -> str:
    """base64url (no padding) of HMAC-SHA256(key = token's UTF-8 bytes, message = nonce's
    UTF-8 bytes): what ``$/serverProof`` carries (docs/protocol.md, Connecting)."""
    digest = hmac.digest(token.encode("utf-8"), nonce.encode("utf-8"), hashlib.sha256)
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
