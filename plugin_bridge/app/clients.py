"""Client keys: named keys for MCP clients, OpenAI clients and bots, each with a scope.

The info file's token is the plugin's and the user's own (the caller ``owner``); every other
client gets its own key (``clients add NAME``), which holds one scope:

- ``read``: search, read notes, list tools, prompts and models, run the read tools;
- ``chat``: ``read`` plus model calls, commands, and its own conversations and usage;
- ``write``: ``chat`` plus the write tools and ``note/undo`` of its own writes.

Everything else (settings, client keys, downloads, direct note writes, the audit log) is the
owner's. Only a SHA-256 of each key is kept, in ``clients.json`` in the vault's data folder
(mode 0600, replaced atomically and fsynced before a command answers), read, changed and
written under a lock (``clients.json.lock``), so commands run at once all land, with the hashes
and names of revoked keys (``revoked``, the newest :data:`REVOKED_KEPT`), so a revoked key is
told so by name. A running server keeps the keys in memory and, on its :data:`KEYS` door (one
thread, which alone touches that memory), looks at the file's identity (inode, mtime_ns, size)
once per request that names a key, reading the file again only when it changed, so a key
revoked by the CLI stops working at its next request; the owner's requests never wait on
it. Async code reaches the keys through :meth:`ClientKeys.authenticate`,
:meth:`~ClientKeys.authorize`, :meth:`~ClientKeys.caller` and :meth:`~ClientKeys.revoked_name`,
or ``execute``: one hop each. An open connection holds its key's
hash, not only its name, so a name revoked and added again does not bring the old key back, and
the connection is closed at its next call. Names are ASCII letters, digits, ``.``, ``_`` and
``-``; a key equal to the info file's token (the owner's) is refused. When each key was last
used is kept apart (``clients-used.json``, written by the server at most once a minute), so the
CLI and the server never write the same file for it.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, get_args

from llm_service.door import BlockingStore, Door
from plugin_bridge.vault.datadir import PRIVATE_FILE, private_folder
from plugin_bridge.vault.locking import held
from plugin_bridge.vault.notes.atomic import write_atomic
from plugin_bridge.wire.errors import RpcError, WireCode

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping

logger = logging.getLogger(__name__)

Scope = Literal["read", "chat", "write"]
SCOPES: Final[tuple[Scope, ...]] = get_args(Scope)


def as_scope(value: object) -> Scope:
    """``value`` as a scope; a :class:`ClientKeyError` naming the scopes when it is none."""
    for scope in SCOPES:
        if scope == value:
            return scope
    raise ClientKeyError(f"{str(value)[:40]!r} is not a scope: use one of {', '.join(SCOPES)}.")


def _seconds(value: object) -> float:
    """A time kept in the keys file (seconds since the epoch); 0 when missing or not a number."""
    return float(value) if isinstance(value, int | float) else 0.0


OWNER: Final = "owner"
"""The caller that authenticated with the info file's token."""
KEY_PREFIX: Final = "oab_"
MIN_IMPORTED_KEY: Final = 16
KEYS: Final = Door("client-keys")
"""The client keys' door: its one thread alone reads the file and touches the keys in memory."""
KEYS_FILE: Final = "clients.json"
KEYS_LOCK: Final = "clients.json.lock"
USED_FILE: Final = "clients-used.json"
USED_FLUSH_SECONDS: Final = 60.0
REVOKED_KEPT: Final = 1000
"""Revoked keys remembered (hash and name), newest first."""
NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", re.ASCII)
"""A client name, matched whole (``fullmatch``: no trailing newline slips through)."""

ANONYMOUS: Final = "anonymous"
"""The scope of a remote connection before its ``initialize``: nothing."""
_RANK: Final[dict[str, int]] = {ANONYMOUS: -1, "read": 0, "chat": 1, "write": 2, OWNER: 3}

READ_METHODS: Final = frozenset(
    {
        "initialize",
        "health",
        "vault/search",
        "vault/related",
        "vault/list",
        "note/read",
        "tools/list",
        "tools/execute",
        "prompts/list",
        "models/list",
    }
)
CHAT_METHODS: Final = frozenset({"chat/send", "chat/clear", "usage/summary"})
CHAT_PREFIXES: Final = ("command/", "conversations/")
WRITE_METHODS: Final = frozenset({"note/undo"})


class ForbiddenScope(RpcError):
    """A call outside the caller's scope (-32004, HTTP 403 ``forbidden_scope``)."""

    def __init__(self, message: str) -> None:
        super().__init__(WireCode.FORBIDDEN_SCOPE, message)


class ClientKeyError(ValueError):
    """A client-key command that cannot be done (bad name or key, unknown or duplicate name);
    ``str()`` is the user's sentence."""


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sent a request: a client key's name and scope, or the owner."""

    name: str
    scope: str
    key_hash: str = field(default="", kw_only=True)
    """The SHA-256 of the key it authenticated with ("" for the owner): a connection stays
    tied to that key, not to a name that may be given a new one."""

    @property
    def is_owner(self) -> bool:
        return self.scope == OWNER

    def allows(self, needed: str) -> bool:
        return _RANK[self.scope] >= _RANK[needed]

    def require(self, needed: str, what: str) -> None:
        """Raise :class:`ForbiddenScope` unless this caller holds ``needed`` for ``what``."""
        if not self.allows(needed):
            raise ForbiddenScope(refusal(self, needed, what))

    @property
    def label(self) -> str:
        """How the audit and usage logs name it: ``owner`` or ``key:NAME``."""
        return OWNER if self.is_owner else f"key:{self.name}"


@dataclass(frozen=True, slots=True)
class RemotePeer(Caller):
    """A WebSocket connection on the remote listener before its ``initialize``: it may call
    nothing, only a client key authenticates it (never the info file's token), and a wrong
    one counts against its address (``failed``: :meth:`.remote.AuthFailures.failed`)."""

    failed: Callable[[str], None]


@dataclass(frozen=True, slots=True)
class AppUser(Caller):
    """A chat app's user talking to one of the bots (``[telegram]``, ``[discord]``): the
    user's id as ``name``, the bot's scope; usage, audit and conversations name it
    ``telegram:123456789``."""

    app: str

    @property
    def label(self) -> str:
        return f"{self.app}:{self.name}"


def remote_peer(address: str, failed: Callable[[str], None]) -> RemotePeer:
    return RemotePeer(address, ANONYMOUS, failed)


OWNER_CALLER: Final = Caller(OWNER, OWNER)
CALLER: Final = "oab.caller"
"""The key of an HTTP request's ASGI scope that holds its :class:`Caller` (set by the guard)."""


def refusal(caller: Caller, needed: str, what: str) -> str:
    """The one sentence of a refusal: what was asked and the scope it needs."""
    if needed == OWNER:
        return (
            f"The client key '{caller.name}' (scope {caller.scope}) cannot call {what}: it is "
            "for the info file's token only (the plugin and the user)."
        )
    return (
        f"The client key '{caller.name}' (scope {caller.scope}) cannot call {what}: it needs "
        f"a key with scope {needed}."
    )


def method_scope(method: str) -> str:
    """The least scope that may call the WebSocket method ``method``."""
    if method in READ_METHODS:
        return "read"
    if method in CHAT_METHODS or method.startswith(CHAT_PREFIXES):
        return "chat"
    if method in WRITE_METHODS:
        return "write"
    return OWNER


def audit_origin(origin: str, caller: Caller) -> str:
    """``origin`` of an audit line, with the client key (or chat app user) ``caller`` behind
    it: ``model (key:phone)``; the owner's is ``origin`` alone."""
    return origin if caller.is_owner else f"{origin} ({caller.label})"


def check_method(caller: Caller, method: str) -> None:
    """Raise :class:`ForbiddenScope` when ``caller`` may not call ``method``."""
    caller.require(method_scope(method), method)


UNDO_LOOKBACK: Final = 5000
"""Audit lines read to find whose write an undo would revert."""


def reverted_origin(entries: Iterable[Mapping[str, object]], path: str) -> str | None:
    """Who made the write that undoing ``path`` now reverts (``entries``: the audit log,
    newest first; each undo there already reverted one earlier write), None if unknown."""
    undone = 0
    for entry in entries:
        if entry.get("path") != path:
            continue
        if entry.get("action") == "undo":
            undone += 1
        elif undone:
            undone -= 1
        else:
            return str(entry.get("origin", ""))
    return None


def check_undo(caller: Caller, path: str, entries: Iterable[Mapping[str, object]]) -> None:
    """Raise :class:`ForbiddenScope` unless ``caller`` may undo the last write of ``path``: the
    owner any, a ``write`` key only its own."""
    caller.require("write", "note/undo")
    if caller.is_owner:
        return
    origin = reverted_origin(entries, path)
    if origin is None or not origin.endswith(f"({caller.label})"):
        raise ForbiddenScope(
            f"The client key '{caller.name}' may undo only its own writes, and the last write "
            f"of '{path[:80]}' is not one of them."
        )


CHAT_ROUTES: Final = frozenset({"/v1/models", "/v1/chat/completions", "/chat", "/chat/stream"})
"""The model's routes: all of ``/v1`` (its model list offers only ids a ``chat`` key can send),
``/chat`` and ``/chat/stream``."""


def http_scope(path: str) -> str:
    """The least scope for an HTTP route: the model's routes need ``chat``, the rest ``read``
    (the write tools behind ``/mcp`` and ``/api/local-llm/*`` are checked per call)."""
    return "chat" if path.rstrip("/") in CHAT_ROUTES else "read"


@dataclass(frozen=True, slots=True)
class ClientRecord:
    """One stored key: never the key, only its hash."""

    name: str
    scope: Scope
    created: float
    last_used: float | None = None


def new_key() -> str:
    """A new client key: ``oab_`` and 43 characters of ``[A-Za-z0-9_-]`` (32 random bytes)."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class ClientKeys(BlockingStore):
    """The vault's client keys (the file of the module docstring), read again when it changed.
    Its async methods hop once to the :data:`KEYS` door; the others block (the CLI calls them,
    async code through ``execute``)."""

    door = KEYS

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / KEYS_FILE
        self.used_path = data_dir / USED_FILE
        self._seen: tuple[int, int, int] | None = None
        self._by_hash: dict[str, tuple[str, Scope]] = {}
        self._records: dict[str, dict[str, object]] = {}
        self._revoked: list[dict[str, object]] = []
        self._revoked_by_hash: dict[str, str] = {}
        self._used: dict[str, float] = self._read_used()
        self._used_flushed = time.monotonic()

    # -- from async code: one hop each -------------------------------------------------------

    async def authenticate(
        self, token: str, owner_token: str, peer: object = None
    ) -> Caller | None:
        """The owner for the info file's token (no hop), a client for its key, else None; on
        the remote listener (``peer`` a :class:`RemotePeer`) client keys only, and a failure
        is counted against the peer's address."""
        if not isinstance(peer, RemotePeer) and hmac.compare_digest(
            token.encode(), owner_token.encode()
        ):
            return OWNER_CALLER
        caller = await self.caller(token)
        if caller is None and isinstance(peer, RemotePeer):
            peer.failed(peer.name)
        return caller

    async def caller(self, token: str) -> Caller | None:
        """:meth:`identify` on the door."""
        return await self.execute(lambda keys: keys.identify(token))

    async def revoked_name(self, token: str) -> str | None:
        """:meth:`revoked` on the door."""
        return await self.execute(lambda keys: keys.revoked(token))

    async def authorize(self, caller: Caller, method: str) -> None:
        """Raise unless ``caller`` may call ``method`` now: a revoked key (even on a connection
        it opened before) is refused as a wrong token, a call outside its scope -32004. The
        owner's calls never hop."""
        if not caller.is_owner and not await self.execute(lambda keys: keys.holds(caller)):
            raise RpcError(
                WireCode.UNAUTHORIZED,
                f"The client key '{caller.name}' was revoked: ask the vault's owner for a new one.",
            )
        check_method(caller, method)

    # -- reading (blocking) ------------------------------------------------------------------

    def _identity(self) -> tuple[int, int, int] | None:
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return None
        return stat.st_ino, stat.st_mtime_ns, stat.st_size

    def _load(self) -> None:
        identity = self._identity()
        if identity == self._seen and (identity is not None or not self._records):
            return
        records: dict[str, dict[str, object]] = {}
        revoked: list[dict[str, object]] = []
        if identity is not None:
            try:
                raw = json.loads(self.path.read_text(encoding="utf-8"))
                records = {
                    str(item["name"]): dict(item)
                    for item in raw.get("clients", [])
                    if isinstance(item, dict) and item.get("scope") in SCOPES
                }
                revoked = [
                    dict(item)
                    for item in raw.get("revoked", [])
                    if isinstance(item, dict) and {"name", "hash"} <= item.keys()
                ]
            except (OSError, ValueError, KeyError, AttributeError) as exc:
                logger.error("the client keys file %s cannot be read (%s)", self.path, exc)
        self._records = records
        self._revoked = revoked
        self._revoked_by_hash = {str(item["hash"]): str(item["name"]) for item in revoked}
        self._by_hash = {
            str(item["hash"]): (name, as_scope(item["scope"])) for name, item in records.items()
        }
        self._seen = identity

    def identify(self, token: str) -> Caller | None:
        """The caller whose key ``token`` is, or None (an unknown or revoked key)."""
        self._load()
        found = self._by_hash.get(_digest(token))
        if found is None:
            return None
        name, scope = found
        self._used[name] = time.time()
        if time.monotonic() - self._used_flushed > USED_FLUSH_SECONDS:
            self.flush_used()
        return Caller(name, scope, key_hash=_digest(token))

    def revoked(self, token: str) -> str | None:
        """The name of the revoked key ``token`` is, or None (a live or unknown key)."""
        self._load()
        return self._revoked_by_hash.get(_digest(token))

    def holds(self, caller: Caller) -> bool:
        """Whether ``caller``'s key is still on file as it was when it authenticated (the same
        name, scope and hash): a key revoked, or revoked and added again, is not."""
        self._load()
        record = self._records.get(caller.name)
        return (
            record is not None
            and record.get("scope") == caller.scope
            and record.get("hash") == caller.key_hash
        )

    def list(self) -> list[ClientRecord]:
        self._load()
        used = {**self._read_used(), **self._used}
        return [
            ClientRecord(
                name, as_scope(item["scope"]), _seconds(item.get("created")), used.get(name)
            )
            for name, item in sorted(self._records.items())
        ]

    def _read_used(self) -> dict[str, float]:
        try:
            raw = json.loads(self.used_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return {str(k): float(v) for k, v in raw.items()} if isinstance(raw, dict) else {}

    def flush_used(self) -> None:
        """Save when each key was last used (the server calls it at most once a minute)."""
        self._used_flushed = time.monotonic()
        if not self._used:
            return
        merged = {**self._read_used(), **self._used}
        try:
            write_atomic(
                self.used_path, json.dumps(merged).encode(), mode=PRIVATE_FILE, private=True
            )
        except OSError as exc:
            logger.warning("cannot save when client keys were last used (%s)", exc)

    # -- changing --------------------------------------------------------------------------

    def add(
        self, name: str, scope: Scope = "chat", key: str | None = None, *, owner_token: str = ""
    ) -> str:
        """Store a new key named ``name`` (``key`` imports an existing token, never
        ``owner_token``, the info file's); the key, which is not kept anywhere: the caller
        shows it once."""
        if not NAME_PATTERN.fullmatch(name):
            raise ClientKeyError(
                f"{name[:80]!r} is not a client name: use 1 to 64 letters, digits, '.', '_' "
                "or '-', starting with a letter or digit."
            )
        if scope not in SCOPES:
            raise ClientKeyError(f"Unknown scope '{scope}': use one of {', '.join(SCOPES)}.")
        if key is not None and (len(key) < MIN_IMPORTED_KEY or not key.isprintable()):
            raise ClientKeyError(
                f"An imported key must have at least {MIN_IMPORTED_KEY} printable characters."
            )
        if key is not None and owner_token and hmac.compare_digest(key, owner_token):
            raise ClientKeyError(
                "That key is the server's own token (its info file's): a client needs a key of "
                "its own, so leave out --key to get a new one."
            )
        key = key if key is not None else new_key()
        with self._changing():
            if name in self._records:
                raise ClientKeyError(
                    f"A client named '{name}' exists already: revoke it first or choose "
                    "another name."
                )
            if _digest(key) in self._by_hash:
                raise ClientKeyError("That key belongs to another client already: use another.")
            record = {"name": name, "scope": scope, "hash": _digest(key), "created": time.time()}
            self._revoked = [item for item in self._revoked if item["hash"] != record["hash"]]
            self._save({**self._records, name: record})
        return key

    def revoke(self, name: str) -> None:
        """Remove ``name``'s key; it stops working at its next request."""
        with self._changing():
            if name not in self._records:
                raise ClientKeyError(f"No client is named '{name[:80]}': see 'clients list'.")
            gone = {"name": name, "hash": self._records[name]["hash"], "revoked": time.time()}
            self._revoked = [gone, *self._revoked][:REVOKED_KEPT]
            self._save({k: v for k, v in self._records.items() if k != name})
        self._used.pop(name, None)

    @contextlib.contextmanager
    def _changing(self) -> Iterator[None]:
        """Hold the keys file's lock, with the file read afresh: a read, change and write
        that no other process interleaves."""
        private_folder(self.path.parent)
        with held(self.path.with_name(KEYS_LOCK)):
            self._seen = None
            self._load()
            yield

    def _save(self, records: dict[str, dict[str, object]]) -> None:
        content = {"clients": list(records.values()), "revoked": self._revoked}
        data = json.dumps(content, indent=1).encode()
        write_atomic(self.path, data, mode=PRIVATE_FILE, private=True)
        self._seen = None
        self._load()
