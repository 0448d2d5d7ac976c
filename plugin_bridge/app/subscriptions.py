"""How many notes MCP clients may follow, decided here for every MCP transport (stdio,
``/mcp``, the legacy HTTP+SSE one): the follower (:class:`plugin_bridge.mcp.resources.NoteFollower`)
registers each stream of notifications here before it follows a URI.

A *stream* is one ``subscriptions/listen`` request (its URIs come at once) or one
handshake-era connection (``resources/subscribe`` adds its URIs one at a time). A client is a
client key's name, or the owner (the info file's token, stdio). Past a limit the request is
refused with :class:`SubscriptionRefused`, one sentence naming the limit; what was followed
before stays followed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

MAX_URIS_PER_STREAM: Final = 1_000
"""Notes one listen stream (or one connection's subscriptions) follows at most."""
MAX_STREAMS_PER_CLIENT: Final = 4
"""Streams one client holds open at once."""
MAX_STREAMS: Final = 64
"""Streams open at once, all clients together."""
MAX_URIS: Final = 20_000
"""Followed URIs, all streams together."""


class SubscriptionRefused(Exception):
    """A stream, or a URI on it, over a limit; ``str()`` is the client's sentence."""


@dataclass
class _Stream:
    client: str
    uris: int = 0


@dataclass
class Subscriptions:
    """The open streams and what each follows, against the limits of the module docstring."""

    per_stream: int = MAX_URIS_PER_STREAM
    streams_per_client: int = MAX_STREAMS_PER_CLIENT
    max_streams: int = MAX_STREAMS
    max_uris: int = MAX_URIS
    _streams: dict[object, _Stream] = field(default_factory=dict)
    _per_client: dict[str, int] = field(default_factory=dict)
    uris: int = 0
    """URIs followed now, all streams together."""

    def reserve(self, stream: object, client: str, count: int) -> None:
        """Count ``count`` more URIs on ``stream`` (opened for ``client`` if new), or raise
        :class:`SubscriptionRefused` and count nothing."""
        known = self._streams.get(stream)
        if known is None:
            if self._per_client.get(client, 0) >= self.streams_per_client:
                raise SubscriptionRefused(
                    f"This client follows notes on {self.streams_per_client} streams already: "
                    "close one (or follow more notes on one stream) first."
                )
            if len(self._streams) >= self.max_streams:
                raise SubscriptionRefused(
                    f"The server carries {self.max_streams} notification streams already: "
                    "try again later."
                )
        held = known.uris if known is not None else 0
        if held + count > self.per_stream:
            raise SubscriptionRefused(
                f"One stream follows at most {self.per_stream} notes ({held + count} asked): "
                "follow fewer, or the folder's notes through search."
            )
        if self.uris + count > self.max_uris:
            raise SubscriptionRefused(
                f"The server follows {self.max_uris} notes for its clients already: follow "
                "fewer, or try again later."
            )
        if known is None:
            known = self._streams[stream] = _Stream(client)
            self._per_client[client] = self._per_client.get(client, 0) + 1
        known.uris += count
        self.uris += count

    def release(self, stream: object, count: int) -> None:
        """``count`` URIs of ``stream`` are followed no more."""
        known = self._streams.get(stream)
        if known is None:
            return
        count = min(count, known.uris)
        known.uris -= count
        self.uris -= count

    def close(self, stream: object) -> None:
        """``stream`` is over: its URIs and its place are given back."""
        known = self._streams.pop(stream, None)
        if known is None:
            return
        self.uris -= known.uris
        left = self._per_client[known.client] - 1
        if left:
            self._per_client[known.client] = left
        else:
            del self._per_client[known.client]

    @property
    def streams(self) -> int:
        return len(self._streams)


SUBSCRIPTIONS: Final = Subscriptions()
"""This process's registry: every MCP server it builds counts against it."""
