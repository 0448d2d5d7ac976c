"""Pure JSON-RPC 2.0 for one connection: frames in, events out, replies serialised. No I/O.

Feed each received frame to :meth:`Protocol.receive_text` (or ``receive_bytes`` for a binary
frame); it returns at most one event:

* :class:`Request` — run it, then answer with :meth:`Protocol.result` or :meth:`Protocol.error`;
* :class:`InboundNotification` — a client notification (no answer);
* :class:`Response` — the client's answer to one of OUR requests (:meth:`Protocol.request`);
* :class:`ErrorReply` — the frame was refused: send ``data`` as it is;
* ``None`` — nothing to do (an ignored notification, or an answer to an unknown request id).

Rules (the contract in docs/protocol.md): ``jsonrpc`` must be ``"2.0"``; ids are strings or
integers (``null``, floats and booleans are refused); ``params`` is an object or an array; batches
(JSON arrays) are refused with -32600; binary frames are refused with -32600; NaN/Infinity are not
JSON. The connection starts awaiting ``initialize``: any other request gets -32002; initialize
answered with a result makes it ready, with -32001 closes it (``close_request`` 4401), with any
other error lets the client try again. At most ``max_in_flight`` requests may be unanswered.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Any, Final, TypeAlias

from plugin_bridge import PROTOCOL_VERSION
from plugin_bridge.wire import jsontext
from plugin_bridge.wire.errors import WireCode, WireError

logger = logging.getLogger(__name__)

RequestId: TypeAlias = str | int
RawParams: TypeAlias = dict[str, Any] | list[Any] | None
"""``params`` as received: not yet validated against the method's params model."""

__all__ = ["PROTOCOL_VERSION", "Protocol"]

MAX_IN_FLIGHT: Final = 32
INITIALIZE: Final = "initialize"
_SERVER_ID_PREFIX: Final = "s"


class CloseCode(IntEnum):
    """Every WebSocket close code of the protocol, by either side (exported in the schema)."""

    NORMAL = 1000
    GOING_AWAY = 1001
    PROTOCOL_ERROR = 1002
    INVALID_DATA = 1007
    MESSAGE_TOO_BIG = 1009
    HEARTBEAT_LOST = 4000
    UNAUTHORIZED = 4401
    SERVER_UNPROVEN = 4403
    INIT_TIMEOUT = 4408
    NOT_READING = 4429


CLOSE_MEANINGS: Final[dict[CloseCode, str]] = {
    CloseCode.NORMAL: "The client stops (the plugin is unloaded or the user disconnects).",
    CloseCode.GOING_AWAY: "The server shuts down.",
    CloseCode.PROTOCOL_ERROR: "The client closes: initialize failed for another reason.",
    CloseCode.INVALID_DATA: "A text frame that is not UTF-8.",
    CloseCode.MESSAGE_TOO_BIG: "A frame over maxFrameBytes.",
    CloseCode.HEARTBEAT_LOST: (
        "The client closes: the server stopped answering pings, or the computer resumed "
        "from sleep (it reconnects)."
    ),
    CloseCode.UNAUTHORIZED: (
        "Wrong token in initialize, or the key was revoked since (the server closes after -32001)."
    ),
    CloseCode.SERVER_UNPROVEN: "The client closes: the server's proof of the token was wrong.",
    CloseCode.INIT_TIMEOUT: "No initialize in time, or within 32 frames.",
    CloseCode.NOT_READING: (
        "The client does not read its replies, or holds the most when all together are over "
        "the memory budget."
    ),
}
"""What each close code means (docs/protocol.md, "Limits and close codes")."""


class State(Enum):
    """Where a connection is in its life."""

    AWAITING_INIT = "awaiting_init"
    INITIALIZING = "initializing"
    READY = "ready"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class Request:
    """A client request that must be answered exactly once."""

    id: RequestId
    method: str
    params: RawParams


@dataclass(frozen=True, slots=True)
class InboundNotification:
    """A client notification (no id, no answer)."""

    method: str
    params: RawParams


@dataclass(frozen=True, slots=True)
class Response:
    """The client's answer to a server request; exactly one of result / error is meaningful."""

    id: RequestId
    result: Any = None
    error: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ErrorReply:
    """A refused frame: send ``data``; ``error`` says why (for logs and tests)."""

    id: RequestId | None
    error: WireError
    data: bytes


@dataclass(frozen=True, slots=True)
class CloseRequest:
    """The protocol wants the connection closed with this WebSocket close code."""

    code: int
    reason: str


InboundMessage: TypeAlias = Request | InboundNotification | Response | ErrorReply


class Protocol:
    """The state of one JSON-RPC connection; see the module docstring."""

    def __init__(self, *, max_in_flight: int = MAX_IN_FLIGHT) -> None:
        self.state = State.AWAITING_INIT
        self.close_request: CloseRequest | None = None
        self.max_in_flight = max_in_flight
        self._in_flight: set[RequestId] = set()
        self._init_id: RequestId | None = None
        self._pending: set[str] = set()
        self._next_id = 0

    @property
    def in_flight(self) -> int:
        """How many client requests are unanswered."""
        return len(self._in_flight)

    # -- incoming ---------------------------------------------------------------------------

    def receive_bytes(self, data: bytes) -> ErrorReply | None:
        """A binary frame: always refused (the connection stays open)."""
        if self.state is State.CLOSED:
            return None
        return self._refuse(
            None, WireCode.INVALID_REQUEST, "Binary frames are not supported: send JSON as text."
        )

    def receive_text(self, text: str) -> InboundMessage | None:
        """Parse one text frame into at most one event."""
        if self.state is State.CLOSED:
            return None
        try:
            message = json.loads(text, parse_constant=_reject_constant)
        except RecursionError:
            return self._refuse(None, WireCode.PARSE_ERROR, f"Parse error: {jsontext.TOO_DEEP}")
        except ValueError:
            return self._refuse(None, WireCode.PARSE_ERROR, "Parse error: the frame is not JSON.")
        if isinstance(message, list):
            return self._refuse(
                None,
                WireCode.INVALID_REQUEST,
                "Batches are not supported: send one JSON-RPC message per frame.",
            )
        if not isinstance(message, dict):
            return self._refuse(
                None, WireCode.INVALID_REQUEST, "A JSON-RPC message must be a JSON object."
            )
        if "method" in message and (refused := jsontext.refusal(message, text)) is not None:
            raw_id = message.get("id")
            reply_id = raw_id if _is_valid_id(raw_id) else None
            return self._refuse(reply_id, WireCode.INVALID_PARAMS, refused)
        return self._receive_object(message)

    def _receive_object(self, message: dict[str, Any]) -> InboundMessage | None:
        raw_id = message.get("id")
        reply_id = raw_id if _is_valid_id(raw_id) else None
        if message.get("jsonrpc") != "2.0":
            return self._refuse(reply_id, WireCode.INVALID_REQUEST, 'jsonrpc must be "2.0".')
        if "method" not in message and ("result" in message or "error" in message):
            return self._receive_response(message)
        method = message.get("method")
        if not isinstance(method, str):
            return self._refuse(
                reply_id, WireCode.INVALID_REQUEST, "A JSON-RPC request needs a string method."
            )
        params = message.get("params")
        if "params" in message and not isinstance(params, (dict, list)):
            return self._refuse(
                reply_id, WireCode.INVALID_REQUEST, "params must be an object or an array."
            )
        if "id" not in message:
            if self.state is not State.READY:
                logger.debug("ignoring notification %.60s before initialize", method)
                return None
            return InboundNotification(method, params)
        if reply_id is None:
            return self._refuse(
                None, WireCode.INVALID_REQUEST, "id must be a string or an integer."
            )
        return self._receive_request(reply_id, method, params)

    def _receive_request(
        self, request_id: RequestId, method: str, params: RawParams
    ) -> InboundMessage:
        if request_id in self._in_flight:
            return self._refuse(
                request_id,
                WireCode.INVALID_REQUEST,
                "This id belongs to a request still in flight: use a new id.",
            )
        if self.state is State.AWAITING_INIT and method != INITIALIZE:
            return self._refuse(
                request_id, WireCode.NOT_INITIALIZED, "Not initialized: send initialize first."
            )
        if self.state is State.INITIALIZING:
            return self._refuse(
                request_id,
                WireCode.NOT_INITIALIZED,
                "Not initialized yet: wait for the initialize reply.",
            )
        if self.state is State.READY and method == INITIALIZE:
            return self._refuse(
                request_id, WireCode.INVALID_REQUEST, "Already initialized on this connection."
            )
        if len(self._in_flight) >= self.max_in_flight:
            return self._refuse(
                request_id,
                WireCode.TOO_MANY_REQUESTS,
                f"Too many requests in flight (limit {self.max_in_flight}): "
                "wait for replies before sending more.",
            )
        if method == INITIALIZE:
            self.state = State.INITIALIZING
            self._init_id = request_id
        self._in_flight.add(request_id)
        return Request(request_id, method, params)

    def _receive_response(self, message: dict[str, Any]) -> Response | None:
        response_id = message.get("id")
        error = message.get("error")
        well_formed = (
            isinstance(response_id, str)
            and ("result" in message) != ("error" in message)
            and (error is None or isinstance(error, dict))
        )
        if not well_formed:
            logger.info("ignoring a malformed response from the client")
            return None
        assert isinstance(response_id, str)
        if response_id not in self._pending:
            logger.info("ignoring a response to unknown request id %.40r", response_id)
            return None
        self._pending.discard(response_id)
        return Response(response_id, message.get("result"), error)

    # -- outgoing ---------------------------------------------------------------------------

    def result(self, request_id: RequestId, result: Any) -> bytes:
        """The reply to request ``request_id``; an unserialisable result becomes -32603."""
        try:
            data = _encode({"jsonrpc": "2.0", "id": request_id, "result": result})
        except (TypeError, ValueError):
            logger.error("result of request %r is not JSON-serialisable", request_id)
            return self.error(request_id, WireError(WireCode.INTERNAL_ERROR, "Internal error."))
        self._finish(request_id)
        if request_id == self._init_id:
            self.state = State.READY
            self._init_id = None
        return data

    def error(self, request_id: RequestId, error: WireError) -> bytes:
        """The error reply to request ``request_id``."""
        self._finish(request_id)
        if error.code == WireCode.UNAUTHORIZED:  # a wrong token, or a key revoked since
            self._init_id = None if request_id == self._init_id else self._init_id
            self.close(CloseRequest(CloseCode.UNAUTHORIZED, "unauthorized"))
        elif request_id == self._init_id:
            self._init_id = None
            self.state = State.AWAITING_INIT
        return _encode({"jsonrpc": "2.0", "id": request_id, "error": error.to_json()})

    def notification(self, method: str, params: dict[str, Any]) -> bytes:
        """A server notification."""
        return _encode({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict[str, Any]) -> tuple[str, bytes]:
        """A server request to the client: its id (for matching the Response) and its bytes."""
        self._next_id += 1
        request_id = f"{_SERVER_ID_PREFIX}{self._next_id}"
        self._pending.add(request_id)
        return request_id, _encode(
            {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        )

    def forget(self, request_id: str) -> None:
        """Stop waiting for an answer to our request (timed out); a late answer is ignored."""
        self._pending.discard(request_id)

    def close(self, request: CloseRequest | None = None) -> None:
        """The connection is over (or should be closed with ``request``)."""
        self.state = State.CLOSED
        if request is not None and self.close_request is None:
            self.close_request = request

    # -- helpers ----------------------------------------------------------------------------

    def _finish(self, request_id: RequestId) -> None:
        if request_id not in self._in_flight:
            raise ValueError(f"request {request_id!r} is not in flight (answered twice?)")
        self._in_flight.discard(request_id)

    def _refuse(self, request_id: RequestId | None, code: WireCode, message: str) -> ErrorReply:
        error = WireError(int(code), message)
        logger.debug("refused a frame: %s", message)
        data = _encode({"jsonrpc": "2.0", "id": request_id, "error": error.to_json()})
        return ErrorReply(request_id, error, data)


def _is_valid_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _encode(message: dict[str, Any]) -> bytes:
    """Compact UTF-8 JSON; text with lone surrogates is sent \\u-escaped instead of failing."""
    text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(message, separators=(",", ":"), allow_nan=False).encode("ascii")
