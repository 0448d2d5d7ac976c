"""The vault's notes as MCP resources (``note://PATH``, the path percent-encoded), and the
notes a client follows.

- ``resources/list``: the notes a page at a time (:mod:`plugin_bridge.vault.lexical.listing`),
  each with its title, MIME type and size; the cursor is the listing's.
- Following a note: the client is told when the note changes, on disk or through the server
  (a write lands on disk too), by the mechanism its protocol version has, both as the ``mcp``
  SDK implements them: ``resources/subscribe`` on a handshake-era connection (before
  2026-07-28; a ``notifications/resources/updated`` on the connection), ``subscriptions/listen``
  from 2026-07-28 (the SDK's :class:`~mcp.server.subscriptions.ListenHandler`: the same
  notification on the listen request's own stream).

A followed note is checked every :data:`POLL_SECONDS` (its size, modification time and file
id: an atomic write is a new file), by the process that serves MCP, whether it owns the vault
or forwards to its server: a handful of ``stat`` calls, only while someone follows a note.

- The list changing (:class:`ListChanges`): ``notifications/resources/list_changed``, at most
  once every :data:`LIST_CHANGED_SECONDS`, when the first indexing is done (the list gains
  titles) and when the index's notes change; on ``subscriptions/listen`` streams that asked for
  it, and on every handshake-era connection that can carry notifications and listed resources.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, unquote

import mcp_types as types
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
)
from mcp.shared.exceptions import MCPError

from plugin_bridge.vault.door import FILES
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.lexical.listing import ListedNote
from plugin_bridge.vault.paths import resolve_note

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.session import ServerSession

logger = logging.getLogger(__name__)

NOTE_SCHEME: Final = "note://"
POLL_SECONDS: Final = 0.25
"""How often a followed note is checked."""
LIST_CHANGED_SECONDS: Final = 1.0
"""The least time between two ``notifications/resources/list_changed``."""
NOTIFY_SECONDS: Final = 10.0
"""How long a connection may take to accept one; one that does not is not told again."""
Stamp = tuple[int, int, int] | None
"""A note's (modification time in ns, size, file id); None when it does not exist."""


def note_uri(path: str) -> str:
    """The resource URI of the note at ``path``: ``note://Projects/Kafka%20pipeline.md``."""
    return NOTE_SCHEME + quote(path, safe="/")


def note_path(uri: str) -> str:
    """The note path a ``note://`` URI names; MCPError (invalid params) for another URI."""
    if not uri.startswith(NOTE_SCHEME):
        raise MCPError(types.INVALID_PARAMS, f"Unknown resource {uri!r}: use note://PATH.")
    return unquote(uri.removeprefix(NOTE_SCHEME))


def mime_type(path: str) -> str:
    return "text/markdown" if path.endswith(".md") else "text/plain"


def resource(note: ListedNote) -> types.Resource:
    """A listed note as MCP lists a resource."""
    return types.Resource(
        uri=note_uri(note.path),
        name=note.path,
        title=note.title or None,
        mime_type=mime_type(note.path),
        size=note.size,
    )


class NoteFollower:
    """Who follows which note (``note://`` URI), and the task that tells them of changes."""

    def __init__(self, root: Path, *, interval: float = POLL_SECONDS) -> None:
        self.root = root
        self.interval = interval
        self.listen = _FollowingListen(self, InMemorySubscriptionBus())
        self._count: dict[str, int] = {}
        """How many listen streams and sessions follow each URI."""
        self._sessions: dict[str, dict[object, ServerSession]] = {}
        """Handshake-era subscribers of each URI, by their connection."""
        self._stamps: dict[str, Stamp] = {}
        self._task: asyncio.Task[None] | None = None

    async def subscribe(
        self, ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        """``resources/subscribe``: this connection follows the note (handshake era)."""
        uri = str(params.uri)
        try:
            resolve_note(self.root, note_path(uri))
        except VaultError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from exc
        connection = _connection(ctx.session)
        if not getattr(connection, "has_standalone_channel", True):
            raise MCPError(
                types.INVALID_REQUEST,
                "This connection cannot carry notifications (stateless HTTP): follow notes "
                "with subscriptions/listen (protocol 2026-07-28), or over stdio.",
            )
        sessions = self._sessions.setdefault(uri, {})
        if connection not in sessions:
            self.follow(uri)
        sessions[connection] = ctx.session
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        if self._sessions.get(uri, {}).pop(_connection(ctx.session), None) is not None:
            self.unfollow(uri)
        return types.EmptyResult()

    def follow(self, uri: str) -> None:
        self._count[uri] = self._count.get(uri, 0) + 1
        if self._count[uri] == 1:
            self._stamps[uri] = self._stamp(uri)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._watch(), name="mcp note follower")

    def unfollow(self, uri: str) -> None:
        left = self._count.get(uri, 0) - 1
        if left > 0:
            self._count[uri] = left
            return
        self._count.pop(uri, None)
        self._stamps.pop(uri, None)
        self._sessions.pop(uri, None)

    async def _watch(self) -> None:
        """Check the followed notes until nobody follows one."""
        while self._count:
            await asyncio.sleep(self.interval)
            uris = list(self._count)
            stamps = await FILES.run(self._stamps_of, uris)
            for uri, stamp in zip(uris, stamps, strict=True):
                if uri in self._stamps and self._stamps[uri] != stamp:
                    self._stamps[uri] = stamp
                    await self._changed(uri)

    async def _changed(self, uri: str) -> None:
        await self.listen.bus.publish(ResourceUpdated(uri=uri))
        for connection, session in list(self._sessions.get(uri, {}).items()):
            try:
                await session.send_resource_updated(uri)
            except Exception:  # the client went away: it follows nothing any more
                logger.debug("a subscriber of %s is gone", uri, exc_info=True)
                if self._sessions.get(uri, {}).pop(connection, None) is not None:
                    self.unfollow(uri)

    def _stamps_of(self, uris: list[str]) -> list[Stamp]:
        return [self._stamp(uri) for uri in uris]

    def _stamp(self, uri: str) -> Stamp:
        try:
            info = os.stat(resolve_note(self.root, note_path(uri)))
        except (OSError, VaultError, MCPError):
            return None
        return info.st_mtime_ns, info.st_size, info.st_ino


class ListChanges:
    """Who is told that ``resources/list`` changed, and the telling (see the module
    docstring). :meth:`changed` may be called from any thread."""

    def __init__(self, bus: InMemorySubscriptionBus) -> None:
        self.bus = bus
        self._sessions: dict[object, ServerSession] = {}
        self._loop = asyncio.get_running_loop()
        self._task: asyncio.Task[None] | None = None
        self._again = False

    def listed(self, session: ServerSession) -> None:
        """A handshake-era connection listed the resources: tell it of changes."""
        connection = _connection(session)
        if getattr(connection, "has_standalone_channel", True):
            self._sessions[connection] = session

    def changed(self) -> None:
        """The list changed: tell everyone once the current pause is over."""
        self._loop.call_soon_threadsafe(self._soon)

    def _soon(self) -> None:
        if self._task is None or self._task.done():
            self._task = self._loop.create_task(self._tell(), name="mcp list changed")
        else:
            self._again = True  # told at the end of the pause

    async def _tell_one(self, connection: object, session: ServerSession) -> None:
        try:
            async with asyncio.timeout(NOTIFY_SECONDS):
                await session.send_resource_list_changed()
        except Exception:  # the client went away, or reads nothing: not told again
            logger.debug("a resources/list reader is gone", exc_info=True)
            self._sessions.pop(connection, None)

    async def _tell(self) -> None:
        while True:
            await self.bus.publish(ResourcesListChanged())
            await asyncio.gather(*(self._tell_one(*item) for item in self._sessions.items()))
            await asyncio.sleep(LIST_CHANGED_SECONDS)
            if not self._again:
                return
            self._again = False


class _FollowingListen:
    """The SDK's ``subscriptions/listen`` handler, counting the notes each stream follows."""

    def __init__(self, follower: NoteFollower, bus: InMemorySubscriptionBus) -> None:
        self.follower = follower
        self.bus = bus
        self.handler = ListenHandler(bus)

    async def __call__(
        self, ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        uris = [
            uri
            for uri in dict.fromkeys(params.notifications.resource_subscriptions or ())
            if uri.startswith(NOTE_SCHEME)
        ]
        for uri in uris:
            self.follower.follow(uri)
        try:
            return await self.handler(ctx, params)
        finally:
            for uri in uris:
                self.follower.unfollow(uri)


def _connection(session: ServerSession) -> object:
    """The connection a request's session belongs to (the SDK makes a session per request)."""
    connection: object = session._connection
    return connection
