"""The checks every HTTP request passes before any route sees it, as one ASGI middleware:

1. Origin and Host, by the WebSocket's own rules
   (:func:`plugin_bridge.wire.security.check_handshake`): 403;
2. ``Authorization: Bearer <token>``, the info file's token or a client key: 401 (one sentence
   for every 401, :func:`auth_failed`, naming a revoked key's name); a route
   outside the key's scope: 403 ``forbidden_scope`` (the caller is left in the scope under
   :data:`CALLER` for the routes);
3. the body's size, at most :data:`MAX_BODY_BYTES` (by Content-Length, and counted while it is
   read: past it the guard answers 413 itself and the route hears that the client is gone).

Refusals on ``/v1/*`` keep OpenAI's error shape ``{"error": {"message", "type", "code"}}``, so
an OpenAI client library shows the message; every other route answers
``{"error": CODE, "message": ...}``.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING, Any, Final

from plugin_bridge.app.clients import (
    CALLER,
    OWNER_CALLER,
    Caller,
    ForbiddenScope,
    http_scope,
)
from plugin_bridge.app.remote import KEYED, RemoteGate, handshake_key
from plugin_bridge.wire.errors import WireCode
from plugin_bridge.wire.refusals import RefusalLog
from plugin_bridge.wire.security import check_handshake
from plugin_bridge.wire.transport import MAX_FRAME_BYTES

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger(__name__)

MAX_BODY_BYTES: Final = MAX_FRAME_BYTES
"""The largest request body (4 MiB, the WebSocket's frame limit)."""

OPENAI_TYPES: Final = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "insufficient_quota",
    403: "permission_error",
    404: "not_found_error",
    413: "invalid_request_error",
    429: "rate_limit_error",
    502: "api_error",
}
"""OpenAI's error ``type`` for each status the bridge answers on ``/v1/*``."""
_RPC_CODES: Final = {401: WireCode.UNAUTHORIZED}
"""The JSON-RPC error code of a refusal on ``/mcp`` (any other: invalid request)."""


def error_body(
    path: str, status: int, code: str, message: str, data: dict[str, Any] | None = None
) -> bytes:
    """The JSON error body for ``path``: OpenAI's shape under ``/v1/``, else the bridge's
    (with ``data``'s fields beside, e.g. a refused tool call's index)."""
    if path.startswith("/v1/"):
        kind = OPENAI_TYPES.get(status, "api_error")
        payload: object = {"error": {"message": message, "type": kind, "code": code}}
    elif path == "/mcp" or path.startswith("/mcp/"):  # an MCP client reads JSON-RPC errors
        rpc = {"code": int(_RPC_CODES.get(status, WireCode.INVALID_REQUEST)), "message": message}
        payload = {"jsonrpc": "2.0", "id": None, "error": {**rpc, "data": {"error": code}}}
    else:
        payload = {**(data or {}), "error": code, "message": message}
    return json.dumps(payload).encode()


class _ScopeHeaders:
    """An ASGI scope's headers as :class:`plugin_bridge.wire.security.HeaderSource`."""

    def __init__(self, raw: list[tuple[bytes, bytes]]) -> None:
        self.raw = raw

    def get_all(self, key: str) -> list[str]:
        name = key.lower().encode("latin-1")
        return [value.decode("latin-1") for header, value in self.raw if header == name]


class Guard:
    """The ASGI middleware of the module docstring, in front of the whole HTTP app."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str,
        port: int,
        allowed_origins: Collection[str],
        max_body: int = MAX_BODY_BYTES,
        identify: Callable[[str], Awaitable[Caller | None]],
        revoked: Callable[[str], Awaitable[str | None]],
        remote: RemoteGate | None = None,
    ) -> None:
        self.app = app
        self.remote = remote
        """The remote listener's rules (None: the loopback listener's)."""
        self.identify = identify
        """The caller a client key names (None: not a key), one hop to the keys' door."""
        self.revoked = revoked
        """The name of a revoked client key (None: not one), one hop to the keys' door."""
        self.expected = f"Bearer {token}".encode()
        self.port = port
        self.allowed_origins = frozenset(allowed_origins)
        self.max_body = max_body
        self.refusals = RefusalLog(logger) if remote is None else remote.refusals
        """Refused requests, logged at most once a second with their count."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and self.remote is not None:
            denied = self._remote_refusal(scope) or await self._keyless_upgrade(scope)
            if denied is not None:
                await _respond(send, *denied, kind="websocket.http")
                return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        headers = _ScopeHeaders(scope["headers"])
        denied = self._remote_refusal(scope) if self.remote is not None else None
        if denied is not None:
            await _respond(send, *denied)
            return
        checked = await self._refusal(headers, _address(scope))
        refusal = checked if not isinstance(checked, Caller) else _scope_refusal(checked, path)
        scope[CALLER] = checked
        if isinstance(checked, Caller):
            keyed = scope.get("state", {}).get(KEYED)  # set by the remote listener's door
            if keyed is not None:
                keyed()  # the remote connection no longer counts as keyless
        if refusal is not None:
            status, code, message = refusal
            self.refusals.refused(f"refused a request to {path[:100]}: {message}")
            await _respond(send, status, error_body(path, status, code, message))
            return
        started = refused = False
        received = 0

        async def counted_receive() -> Message:
            nonlocal received, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body:
                    # Answered here, whatever the app makes of the end of its body (the MCP
                    # SDK turns an error raised by ``receive`` into a 500): 413, then the app
                    # hears that the client is gone and its own answer goes nowhere.
                    refused = True
                    if not started:
                        await _respond(send, 413, error_body(path, 413, *self._too_large()))
                    return {"type": "http.disconnect"}
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            if refused:
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        await self.app(scope, counted_receive, watched_send)

    def _remote_refusal(self, scope: Scope) -> tuple[int, bytes, int | None] | None:
        """The remote listener's refusal before the key is read: 429 for an address with too
        many failed authentications, 403 for a Host or Origin it does not take."""
        assert self.remote is not None
        path: str = scope["path"]
        wait = self.remote.failures.retry_after(_address(scope))
        if wait is not None:
            message = f"Too many failed authentications: try again in {wait} s."
            self.refusals.refused(f"refused a request to {path[:100]}: {message}")
            return 429, error_body(path, 429, "rate_limited", message), wait
        reason = self.remote.refusal(_ScopeHeaders(scope["headers"]))
        if reason is None:
            return None
        self.refusals.refused(f"refused a request to {path[:100]}: {reason}")
        return 403, error_body(path, 403, "forbidden", reason), None

    async def _keyless_upgrade(self, scope: Scope) -> tuple[int, bytes, int | None] | None:
        """401 for a remote WebSocket upgrade without a valid client key (before it takes a
        slot); a wrong key counts against its address."""
        headers = _ScopeHeaders(scope["headers"])
        key = handshake_key(
            headers.get_all("authorization"), headers.get_all("sec-websocket-protocol")
        )
        if key is not None and await self.identify(key) is not None:
            return None
        assert self.remote is not None
        self.remote.failures.failed(_address(scope))
        message = (
            "A client key is required to open the WebSocket here: send 'Authorization: Bearer "
            "KEY' (or offer the subprotocols 'oab' and 'oab.key.' + base64url(KEY))."
        )
        self.refusals.refused(f"refused a WebSocket upgrade: {message}")
        return 401, error_body(scope["path"], 401, "auth_failed", message), None

    async def _refusal(self, headers: _ScopeHeaders, address: str) -> tuple[int, str, str] | Caller:
        if self.remote is None:
            reason = check_handshake(headers, self.port, self.allowed_origins)
            if reason is not None:
                return 403, "forbidden", reason.strip()
        given = headers.get_all("authorization")
        bearer = _bearer(given[0].encode("latin-1")) if len(given) == 1 else b""
        key = bearer.removeprefix(b"Bearer ").decode("latin-1")
        caller = (
            OWNER_CALLER
            if self.remote is None and hmac.compare_digest(bearer, self.expected)
            else await self.identify(key)
            if bearer.startswith(b"Bearer ")
            else None
        )
        if caller is None:
            if self.remote is not None:
                self.remote.failures.failed(address)
            name = await self.revoked(key) if bearer.startswith(b"Bearer ") else None
            return 401, "auth_failed", auth_failed(name)
        lengths = headers.get_all("content-length")
        if lengths and (not lengths[0].isdigit() or int(lengths[0]) > self.max_body):
            return 413, *self._too_large()
        return caller

    def _too_large(self) -> tuple[str, str]:
        return (
            "too_large",
            f"The request body is larger than {self.max_body // (1024 * 1024)} MiB: send less.",
        )


def auth_failed(revoked: str | None = None) -> str:
    """The sentence of every HTTP 401, loopback and remote (never naming the info file, whose
    token is not for clients); ``revoked``: the name of the revoked key that was sent."""
    if revoked is not None:
        return (
            f"Authentication failed: missing or wrong client key (the key '{revoked}' was "
            "revoked): ask the vault's owner for a new one ('clients add')."
        )
    return (
        "Authentication failed: missing or wrong client key: send 'Authorization: Bearer KEY' "
        "with a key from 'clients add'."
    )


def _scope_refusal(caller: Caller, path: str) -> tuple[int, str, str] | None:
    try:
        caller.require(http_scope(path), path[:100])
    except ForbiddenScope as exc:
        return 403, "forbidden_scope", exc.message
    return None


def _bearer(value: bytes) -> bytes:
    """``Bearer <token>`` with the scheme's case normalised (RFC 9110: case-insensitive)."""
    scheme, _, rest = value.partition(b" ")
    return b"Bearer " + rest if scheme.lower() == b"bearer" else value


def _address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else ""


async def _respond(
    send: Send, status: int, body: bytes, retry_after: int | None = None, kind: str = "http"
) -> None:
    """Answer ``status`` with ``body`` (``kind`` ``websocket.http``: a refused handshake)."""
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:  # RFC 9110: a 401 names the scheme it wants
        headers.append((b"www-authenticate", b'Bearer realm="obsidian-ai-bridge"'))
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    await send({"type": f"{kind}.response.start", "status": status, "headers": headers})
    await send({"type": f"{kind}.response.body", "body": body})
