"""Who may connect to the remote listener (``serve --remote HOST:PORT``), decided here; the
HTTP guard and the WebSocket route only translate the answers.

- ``Host`` must name the listener: one of the certificate's names (a DNS-rebinding page sends
  its own), with the listener's port or none;
- a browser (any ``Origin``) only from the allowed origins: the settings' ``allowed_origins``
  and the WebViews of Obsidian's mobile apps (:data:`MOBILE_ORIGINS`);
- client keys only: the info file's token is the plugin's and the user's own on this machine,
  and is refused there like a wrong key (:data:`~.clients.REMOTE`);
- 20 failed authentications from one address within a minute and that address gets 429 with
  ``Retry-After`` until the oldest of them is a minute old; other addresses are unaffected.
"""

from __future__ import annotations

import collections
import math
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Final, Protocol

MOBILE_ORIGINS: Final = ("capacitor://localhost", "http://localhost")
"""The origins of Obsidian's mobile apps: Capacitor's WebView on iOS (``capacitor://``) and
on Android (``http://localhost``), Capacitor's defaults (capacitorjs.com, Config: server)."""
MAX_FAILURES: Final = 20
FAILURE_WINDOW: Final = 60.0
MAX_ADDRESSES: Final = 10_000
"""Addresses followed at most (the oldest forgotten first): an attacker with many addresses
cannot grow the table without bound."""


class HeaderSource(Protocol):
    def get_all(self, key: str) -> list[str]: ...


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

    @classmethod
    def build(cls, names: Iterable[str], port: int, origins: Iterable[str]) -> RemoteGate:
        return cls(frozenset(names), port, frozenset([*origins, *MOBILE_ORIGINS]))

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
