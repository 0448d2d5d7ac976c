"""Who may connect to the remote listener (``serve --remote HOST:PORT``), decided here; the
HTTP guard and the WebSocket route only translate the answers.

- ``Host`` must name the listener: one of the certificate's names (a DNS-rebinding page sends
  its own), with the listener's port or none;
- a browser (any ``Origin``) only from the allowed origins: the settings' ``allowed_origins``
  and the WebViews of Obsidian's mobile apps (:data:`MOBILE_ORIGINS`);
- client keys only: the info file's token is the plugin's and the user's own on this machine,
  and is refused there like a wrong key (:data:`~.clients.REMOTE`);
- 20 failed authentications from one address within a minute and that address gets 429 with
  ``Retry-After`` until the oldest of them is a minute old; other addresses are unaffected;
- a WebSocket upgrade carries its key (``Authorization: Bearer KEY``, or the subprotocol
  ``oab.key.BASE64URL(KEY)`` beside ``oab`` where a browser cannot set headers): a keyless one
  is refused before it takes one of the :data:`MAX_SOCKETS` slots;
- connections are counted from accept, before TLS and before a key (:class:`Connections`):
  at most :func:`connection_cap` at once, so the local listeners keep :data:`LOCAL_RESERVE`
  of the process's open files whatever arrives; at most :data:`MAX_UNAUTHENTICATED` per
  address that have not shown a key; TLS and the first request head within
  :data:`HANDSHAKE_TIMEOUT` seconds.
"""

from __future__ import annotations

import base64
import collections
import logging
import math
import os
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Final

from plugin_bridge.wire.refusals import RefusalLog
from plugin_bridge.wire.security import HeaderSource

logger = logging.getLogger(__name__)

MOBILE_ORIGINS: Final = ("capacitor://localhost", "http://localhost")
"""The origins of Obsidian's mobile apps: Capacitor's WebView on iOS (``capacitor://``) and
on Android (``http://localhost``), Capacitor's defaults (capacitorjs.com, Config: server)."""
MAX_SOCKETS: Final = 64
"""WebSocket connections open at once on the remote listener (its HTTP connections are
bounded by the HTTP listener's own limits)."""
HANDSHAKE_TIMEOUT: Final = 5.0
"""Seconds a new remote connection has for its TLS handshake and its first request head."""
MAX_UNAUTHENTICATED: Final = 16
"""Connections one address holds open before any of them showed a key."""
LOCAL_RESERVE: Final = 96
"""Open files the remote listener never takes: the local listeners', the plugin's and the
index's, whatever the remote side sends."""
MIN_CONNECTIONS: Final = 16
SOCKET_PROTOCOL: Final = "oab"
"""The WebSocket subprotocol the server selects when a browser offers its key as one."""
KEY_PROTOCOL_PREFIX: Final = "oab.key."
KEYED: Final = "oab.keyed"
"""The ASGI scope key of a remote connection's ``authenticated()``: the guard calls it once a
request showed a valid key, and the connection no longer counts as keyless."""
MAX_FAILURES: Final = 20
FAILURE_WINDOW: Final = 60.0
MAX_ADDRESSES: Final = 10_000
"""Addresses followed at most (the oldest forgotten first): an attacker with many addresses
cannot grow the table without bound."""


class AuthFailures:
    """Failed authentications per client address, over a sliding minute."""

    def __init__(
        self,
        limit: int = MAX_FAILURES,
        window: float = FAILURE_WINDOW,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.window = window
        self._clock = clock
        self._failures: dict[str, collections.deque[float]] = {}

    def failed(self, address: str) -> None:
        """Count a failed authentication from ``address``."""
        times = self._failures.pop(address, None) or collections.deque(maxlen=self.limit)
        times.append(self._clock())
        self._failures[address] = times  # the most recent last
        while len(self._failures) > MAX_ADDRESSES:
            del self._failures[next(iter(self._failures))]

    def retry_after(self, address: str) -> int | None:
        """Seconds ``address`` must wait before trying again, None when it may try now."""
        times = self._failures.get(address)
        if times is None or len(times) < self.limit:
            return None
        wait = times[0] + self.window - self._clock()
        if wait <= 0:
            del self._failures[address]
            return None
        return max(1, math.ceil(wait))


def connection_cap(soft_limit: int, open_now: int) -> int:
    """Connections the remote listener holds before a WebSocket upgrade: the open files left
    under the soft limit ``soft_limit`` (``open_now`` in use) less :data:`LOCAL_RESERVE` and
    the :data:`MAX_SOCKETS` WebSocket slots, at least :data:`MIN_CONNECTIONS`."""
    return max(MIN_CONNECTIONS, soft_limit - open_now - LOCAL_RESERVE - MAX_SOCKETS)


def open_files() -> tuple[int, int]:
    """This process's soft limit on open files and how many it has open now (where the
    system does not tell: no limit known, nothing counted)."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        return 1 << 20, 0
    try:
        open_now = len(os.listdir("/proc/self/fd"))
    except OSError:
        open_now = 0
    return (soft if soft != resource.RLIM_INFINITY else 1 << 20), open_now


@dataclass
class Connections:
    """The remote listener's connections from accept to their end (or WebSocket upgrade):
    in all, and per address those that have not shown a key."""

    cap: int = MIN_CONNECTIONS
    per_address: int = MAX_UNAUTHENTICATED
    open: int = 0
    unauthenticated: dict[str, int] = field(default_factory=dict)

    def admit(self, address: str) -> str | None:
        """Count a connection just accepted from ``address``; why it is refused (counted
        nothing) when over a limit."""
        if self.open >= self.cap:
            return f"{self.cap} connections open on the remote listener"
        if self.unauthenticated.get(address, 0) >= self.per_address:
            return f"{self.per_address} connections from {address[:64]} without a key"
        self.open += 1
        self.unauthenticated[address] = self.unauthenticated.get(address, 0) + 1
        return None

    def authenticated(self, address: str) -> None:
        """A connection from ``address`` showed a valid key: it no longer counts as keyless."""
        left = self.unauthenticated.get(address, 0) - 1
        if left > 0:
            self.unauthenticated[address] = left
        else:
            self.unauthenticated.pop(address, None)

    def leave(self, address: str, *, authenticated: bool) -> None:
        self.open -= 1
        if not authenticated:
            self.authenticated(address)


def handshake_key(authorization: list[str], protocols: list[str]) -> str | None:
    """The key a WebSocket upgrade carries: ``Authorization: Bearer KEY``, else a subprotocol
    ``oab.key.BASE64URL(KEY)``; None when there is none."""
    if len(authorization) == 1:
        scheme, _, key = authorization[0].partition(" ")
        if scheme.lower() == "bearer" and key.strip():
            return key.strip()
    for offered in ",".join(protocols).split(","):
        name = offered.strip()
        if name.startswith(KEY_PROTOCOL_PREFIX):
            encoded = name.removeprefix(KEY_PROTOCOL_PREFIX)
            try:
                return base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode()
            except (ValueError, UnicodeDecodeError):
                return None
    return None


def split_host(value: str) -> tuple[str, int | None] | None:
    """A ``Host`` header's name and port (None: no port); None when it is malformed."""
    if value.startswith("["):
        name, bracket, rest = value[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port = rest[1:]
    elif value.count(":") == 1:
        name, _, port = value.partition(":")
    else:
        name, port = value, ""
    if port and not port.isdigit():
        return None
    return name.lower().rstrip("."), int(port) if port else None


def parse_listen(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::]:8443`` for IPv6) as a host and a port; ValueError with the fix."""
    parsed = split_host(value.strip())
    if parsed is None or not parsed[0] or parsed[1] is None or not 0 < parsed[1] < 65536:
        raise ValueError(
            f"'{value[:80]}' is not HOST:PORT: give an address and a port, e.g. "
            "100.64.0.5:8443, 0.0.0.0:8443 or [::]:8443"
        )
    return parsed[0], parsed[1]


def covered(names: Collection[str], host: str) -> bool:
    """True when ``host`` is one of ``names`` (``*.example.com`` covers one label)."""
    if host in names:
        return True
    first, _, rest = host.partition(".")
    return bool(first and rest) and f"*.{rest}" in names


@dataclass
class RemoteGate:
    """The remote listener's rules for a request or handshake before its key is read."""

    names: frozenset[str]
    port: int
    allowed_origins: frozenset[str]
    failures: AuthFailures = field(default_factory=AuthFailures)
    connections: Connections = field(default_factory=Connections)
    refusals: RefusalLog = field(default_factory=lambda: RefusalLog(logger, "Remote"))
    """The listener's one refusal log (its door, guard and WebSocket route): a flood of
    refusals of every kind is one line a second, with the count."""
    sockets: int = 0
    """WebSocket connections open now (:meth:`admit`, :meth:`leave`)."""

    @classmethod
    def build(cls, names: Iterable[str], port: int, origins: Iterable[str]) -> RemoteGate:
        return cls(frozenset(names), port, frozenset([*origins, *MOBILE_ORIGINS]))

    def admit(self) -> bool:
        """Count one more WebSocket connection; False (counted nothing) past
        :data:`MAX_SOCKETS`."""
        if self.sockets >= MAX_SOCKETS:
            return False
        self.sockets += 1
        return True

    def leave(self) -> None:
        self.sockets -= 1

    def refusal(self, headers: HeaderSource) -> str | None:
        """Why a request with ``headers`` is refused (403), or None."""
        origins = headers.get_all("Origin")
        if len(origins) > 1 or (origins and origins[0] not in self.allowed_origins):
            return "Origin not allowed: add it to allowed_origins in the settings file."
        hosts = headers.get_all("Host")
        parsed = split_host(hosts[0]) if len(hosts) == 1 else None
        if (
            parsed is None
            or not covered(self.names, parsed[0])
            or parsed[1] not in (None, self.port)
        ):
            return (
                "Host not allowed: connect with one of the certificate's names "
                f"({', '.join(sorted(self.names)[:8])})."
            )
        return None
