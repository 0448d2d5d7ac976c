"""Who may talk to the bridge: loopback binds only, and the WebSocket handshake checks.

A web page in the user's browser can open ``ws://127.0.0.1:PORT`` too, so the handshake refuses
(HTTP 403) an ``Origin`` header that is not in the allowlist (non-browser clients send none),
and a ``Host`` header that is not ``127.0.0.1:PORT``, ``localhost:PORT`` or ``[::1]:PORT`` (a
DNS-rebinding page would send its own host name). The token check comes after, in
``initialize``.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Collection
from typing import Final, Protocol

DEFAULT_ALLOWED_ORIGINS: Final = ("app://obsidian.md",)
BACKLOG: Final = 128


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
    return socket.create_server((host, port), family=family, backlog=BACKLOG)


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
