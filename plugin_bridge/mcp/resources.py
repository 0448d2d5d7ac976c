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
- The list changing (:class:`ListChanges`): ``notifications/resources/list_changed``, at most
  once every :data:`LIST_CHANGED_SECONDS`, when the first indexing is done (the list gains
  titles) and when the index's notes change; on ``subscriptions/listen`` streams that asked for
  it, and on every handshake-era connection that can carry notifications and listed resources.

How many notes are followed, per stream, per client and in all, is bounded by
:mod:`plugin_bridge.app.subscriptions` (a refusal is an invalid-params error with its sentence).
Where this process owns the vault, the index's change feed says which notes changed (each
change is looked up among the followed URIs: no scan of the subscriptions); where it forwards
to the vault's server, the followed notes are checked every :data:`POLL_SECONDS` off the event
loop (size, modification time and file id: an atomic write is a new file).
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol
from urllib.parse import quote, unquote

import mcp_types as types
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
)
from mcp.shared.exceptions import MCPError

from plugin_bridge.app.clients import OWNER
from plugin_bridge.app.subscriptions import SUBSCRIPTIONS, SubscriptionRefused, Subscriptions
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


class ChangeFeed(Protocol):
    """The index's change feed (``SearchIndex.add_change_listener``)."""

    def add_change_listener(self, callback: Callable[[list[str]], None]) -> None: ...

    def remove_change_listener(self, callback: Callable[[list[str]], None]) -> None: ...


class NoteFollower:
    """Who follows which note (``note://`` URI), and what tells them of changes."""

    def __init__(
        self,
        root: Path,
        *,
        interval: float = POLL_SECONDS,
        changes: ChangeFeed | None = None,
        subscriptions: Subscriptions = SUBSCRIPTIONS,
        client_of: Callable[[ServerRequestContext[Any]], str] = lambda ctx: OWNER,
    ) -> None:
        self.root = root
        self.interval = interval
        self.subscriptions = subscriptions
        self.client_of = client_of
        """The client behind a request (a key's name, or the owner): its streams count
        together."""
        self.listen = _FollowingListen(self, InMemorySubscriptionBus())
        self._count: dict[str, int] = {}
        """How many listen streams and sessions follow each URI."""
        self._by_path: dict[str, set[str]] = {}
        """The followed URIs of each note path (a path may be written more than one way)."""
        self._sessions: dict[str, dict[object, ServerSession]] = {}
        """Handshake-era subscribers of each URI, by their connection."""
        self._stamps: dict[str, Stamp] = {}
        self._task: asyncio.Task[None] | None = None
        self._changes = changes
        self._pending: set[str] = set()
        self._loop: asyncio.AbstractEventLoop | None = None

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
            try:
                self.subscriptions.reserve(connection, self.client_of(ctx), 1)
            except SubscriptionRefused as exc:
                raise MCPError(types.INVALID_PARAMS, str(exc)) from exc
            self.follow(uri)
        sessions[connection] = ctx.session
        return types.EmptyResult()

    async def unsubscribe(
        self, ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        connection = _connection(ctx.session)
        if self._sessions.get(uri, {}).pop(connection, None) is not None:
            self.subscriptions.release(connection, 1)
            self.unfollow(uri)
        return types.EmptyResult()

    def follow(self, uri: str) -> None:
        self._count[uri] = self._count.get(uri, 0) + 1
        if self._count[uri] > 1:
            return
        self._by_path.setdefault(_key(uri), set()).add(uri)
        if self._changes is not None:
            self._listen_to_feed(self._changes)
            return
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
        same = self._by_path.get(_key(uri))
        if same is not None:
            same.discard(uri)
            if not same:
                del self._by_path[_key(uri)]

    def _listen_to_feed(self, changes: ChangeFeed) -> None:
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            changes.add_change_listener(self._feed)

    def _feed(self, paths: list[str]) -> None:
        """The index changed ``paths`` (called in its worker thread)."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._noted, paths)

    def _noted(self, paths: list[str]) -> None:
        """Each changed path looked up among the followed ones: O(changes), not O(follows)."""
        followed = [uri for path in paths for uri in self._by_path.get(path, ())]
        if not followed:
            return
        self._pending.update(followed)
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._tell(), name="mcp note follower")

    async def _tell(self) -> None:
        while self._pending:
            uri = self._pending.pop()
            if uri in self._count:
                await self._changed(uri)

    async def _watch(self) -> None:
        """Check the followed notes until nobody follows one (where there is no feed)."""
        while self._count:
            await asyncio.sleep(self.interval)
            changed = await FILES.run(self._changed_stamps, dict(self._stamps))
            for uri, stamp in changed:
                if uri in self._stamps:
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
                    self.subscriptions.release(connection, 1)
                    self.unfollow(uri)

    def _changed_stamps(self, stamps: dict[str, Stamp]) -> list[tuple[str, Stamp]]:
        """The followed notes whose stamp is no longer ``stamps``' (in a worker thread)."""
        now = ((uri, self._stamp(uri)) for uri in stamps)
        return [(uri, stamp) for uri, stamp in now if stamp != stamps[uri]]

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
    """The SDK's ``subscriptions/listen`` handler, counting the notes each stream follows
    (refused past the limits before the SDK sees the URIs)."""

    def __init__(self, follower: NoteFollower, bus: InMemorySubscriptionBus) -> None:
        self.follower = follower
        self.bus = bus
        self.handler = ListenHandler(bus)

    async def __call__(
        self, ctx: ServerRequestContext[Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        asked = list(dict.fromkeys(params.notifications.resource_subscriptions or ()))
        stream = object()
        subscriptions = self.follower.subscriptions
        try:
            subscriptions.reserve(stream, self.follower.client_of(ctx), len(asked))
        except SubscriptionRefused as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from exc
        uris = [uri for uri in asked if uri.startswith(NOTE_SCHEME)]
        for uri in uris:
            self.follower.follow(uri)
        try:
            return await self.handler(ctx, params)
        finally:
            for uri in uris:
                self.follower.unfollow(uri)
            subscriptions.close(stream)


def _key(uri: str) -> str:
    """The note path a followed URI names, as the index's change feed names it."""
    return unquote(uri.removeprefix(NOTE_SCHEME)).strip("/")


def _connection(session: ServerSession) -> object:
    """The connection a request's session belongs to (the SDK makes a session per request)."""
    connection: object = session._connection
    return connection
