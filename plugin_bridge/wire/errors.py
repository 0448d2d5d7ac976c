"""Wire error codes and the one function that turns exceptions into JSON-RPC errors.

Exception tree (what handlers raise; everything else becomes -32603)::

    Exception
    ├── RpcError                a refusal with its own wire code (bad params, no provider, ...)
    │   └── ToolDeniedError     tools/execute stopped at a call the user did not approve
    ├── VaultError              plugin_bridge.vault: mapped by ``.code`` (-32020 ... -32025)
    ├── LLMError                llm_service: -32010 with ``data: {code, retryable, retryAfter}``
    └── pydantic ValidationError   -32602 naming the field

:func:`to_wire_error` is the only place that decides what a WebSocket client sees for an
exception, :func:`to_http_error` what an HTTP client sees (docs/http.md).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Final

from llm_service import lazy
from llm_service.errors import LLMError
from plugin_bridge.vault.errors import NO_HANDLES, OUT_OF_HANDLES, VaultError

if TYPE_CHECKING:
    import pydantic
else:
    pydantic = lazy.module("pydantic")

logger = logging.getLogger(__name__)


class WireCode(IntEnum):
    """Every error code the bridge sends."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    UNAUTHORIZED = -32001
    NOT_INITIALIZED = -32002
    TOO_MANY_REQUESTS = -32003
    FORBIDDEN_SCOPE = -32004
    PROVIDER_ERROR = -32010
    NO_PROVIDER = -32011
    BUDGET_EXCEEDED = -32012
    NOTE_NOT_FOUND = -32020
    NOTE_EXISTS = -32021
    NOTE_CONFLICT = -32022
    FORBIDDEN_PATH = -32023
    NOTE_UNREADABLE = -32024
    NOTE_WRITE_FAILED = -32025
    TOOL_DENIED = -32030
    CANCELLED = -32800


ERROR_MEANINGS: Final[dict[WireCode, str]] = {
    WireCode.PARSE_ERROR: "The frame is not valid JSON.",
    WireCode.INVALID_REQUEST: (
        "Not a valid JSON-RPC 2.0 request: batch, binary frame, bad id, missing method, or "
        "initialize sent twice."
    ),
    WireCode.METHOD_NOT_FOUND: "No such method.",
    WireCode.INVALID_PARAMS: (
        "Params fail the method's schema (the message names the field), an unknown "
        "conversationId, or an unsupported protocolVersion."
    ),
    WireCode.INTERNAL_ERROR: "A bug in the bridge; details are in the server log only.",
    WireCode.UNAUTHORIZED: "Wrong token in initialize; the server then closes with 4401.",
    WireCode.NOT_INITIALIZED: "A request other than initialize came first.",
    WireCode.TOO_MANY_REQUESTS: (
        "More than 32 requests in flight on this connection; or the server's memory budget is "
        "used up and this connection holds at least its share of it (after a wait of up to 2 s "
        "for room): data: {reason: busy}."
    ),
    WireCode.FORBIDDEN_SCOPE: (
        "forbidden_scope: the client key's scope does not allow this call; the message names "
        "the scope it needs (or says it is for the info file's token only)."
    ),
    WireCode.PROVIDER_ERROR: (
        "The model provider failed after retries; data: {code, retryable, retryAfter}."
    ),
    WireCode.NO_PROVIDER: "No model provider is configured; the message says what to set.",
    WireCode.BUDGET_EXCEEDED: (
        "A daily or monthly budget is used up; nothing was sent to the provider; "
        "data: {period, spentUsd, budgetUsd}."
    ),
    WireCode.NOTE_NOT_FOUND: "The note does not exist.",
    WireCode.NOTE_EXISTS: "The note already exists (pass overwrite: true to replace it).",
    WireCode.NOTE_CONFLICT: (
        "The note changed since it was read, or since the user approved the write."
    ),
    WireCode.FORBIDDEN_PATH: (
        "The path is absolute, leaves the vault, is in a system folder or has a wrong type."
    ),
    WireCode.NOTE_UNREADABLE: "The note is too large (> 5 MiB) or not text; data: {reason}.",
    WireCode.NOTE_WRITE_FAILED: (
        "The disk is full, the folder read-only or not writable, or the server is out of file "
        "handles: the note is unchanged."
    ),
    WireCode.TOOL_DENIED: (
        "A tool call was not approved; data: {index, name, results} (calls run before it)."
    ),
    WireCode.CANCELLED: "The request was cancelled with $/cancelRequest.",
}

_VAULT_CODES: Final[dict[str, WireCode]] = {
    "not_found": WireCode.NOTE_NOT_FOUND,
    "exists": WireCode.NOTE_EXISTS,
    "conflict": WireCode.NOTE_CONFLICT,
    "forbidden_path": WireCode.FORBIDDEN_PATH,
    "too_large": WireCode.NOTE_UNREADABLE,
    "not_text": WireCode.NOTE_UNREADABLE,
    "invalid_edit": WireCode.INVALID_PARAMS,
    "invalid_query": WireCode.INVALID_PARAMS,
    "no_such_heading": WireCode.INVALID_PARAMS,
    "write_failed": WireCode.NOTE_WRITE_FAILED,
    "no_file_handles": WireCode.NOTE_WRITE_FAILED,
}

MAX_FIELD_ERRORS: Final = 3
"""At most this many field problems are listed in one -32602 message."""


@dataclass(frozen=True, slots=True)
class WireError:
    """The ``error`` member of a JSON-RPC response."""

    code: int
    message: str
    data: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class RpcError(Exception):
    """A request refused with a specific wire code; ``str(error)`` is the client's sentence."""

    def __init__(self, code: WireCode, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class ToolDeniedError(RpcError):
    """tools/execute stopped at call ``index``: the user (or its permission) did not allow it."""

    def __init__(
        self, index: int, name: str, results: list[dict[str, Any]], *, reason: str | None = None
    ) -> None:
        """``reason``: why it may not run, when a setting decides (naming the setting)."""
        refused = f"was refused: {reason}" if reason else "was not approved"
        super().__init__(
            WireCode.TOOL_DENIED,
            f"Tool call {index} ('{name}') {refused}; the calls after it were not run.",
            {"index": index, "name": name, "results": results},
        )


class ModelNotFound(RpcError):
    """A client named a model its provider does not list (HTTP 404 ``model_not_found``)."""

    def __init__(self, message: str) -> None:
        super().__init__(WireCode.INVALID_PARAMS, message)


def to_wire_error(exc: BaseException) -> WireError:
    """What the client sees for ``exc``; unexpected exceptions are logged and never leaked."""
    if isinstance(exc, RpcError):
        return WireError(int(exc.code), exc.message, exc.data)
    if isinstance(exc, VaultError):
        data: dict[str, Any] = {"reason": exc.code}
        if exc.path is not None:
            data["path"] = exc.path
        return WireError(int(_VAULT_CODES[exc.code]), exc.message, data)
    if isinstance(exc, LLMError):
        return WireError(
            int(WireCode.PROVIDER_ERROR),
            str(exc),
            {"code": exc.code, "retryable": exc.retryable, "retryAfter": exc.retry_after},
        )
    if isinstance(exc, pydantic.ValidationError):
        return WireError(int(WireCode.INVALID_PARAMS), invalid_params_message(exc))
    if isinstance(exc, OSError) and exc.errno in OUT_OF_HANDLES:
        return WireError(
            int(WireCode.NOTE_WRITE_FAILED),
            f"The request could not be done and nothing was changed: {NO_HANDLES}.",
            {"reason": "no_file_handles"},
        )
    logger.error("internal error while handling a request", exc_info=exc)
    return WireError(int(WireCode.INTERNAL_ERROR), "Internal error.")


@dataclass(frozen=True, slots=True)
class HttpError:
    """An HTTP API error: the status, the code (``auth_failed``, ``budget_exceeded``,
    ``rate_limit``, ``api_error``, ``invalid_request``, ``model_not_found``, ``tool_denied``,
    ``too_large``, ``internal_error``) and one sentence; ``retry_after`` seconds for a 429 when
    the provider said."""

    status: int
    code: str
    message: str
    retry_after: float | None = None
    data: dict[str, Any] | None = None


_HTTP_RPC: Final[dict[WireCode, tuple[int, str]]] = {
    WireCode.BUDGET_EXCEEDED: (402, "budget_exceeded"),
    WireCode.TOOL_DENIED: (403, "tool_denied"),
    WireCode.FORBIDDEN_SCOPE: (403, "forbidden_scope"),
    WireCode.INVALID_PARAMS: (400, "invalid_request"),
    WireCode.NO_PROVIDER: (400, "invalid_request"),
    WireCode.TOO_MANY_REQUESTS: (503, "busy"),
}
_HTTP_LLM: Final[dict[str, tuple[int, str]]] = {
    "auth_error": (401, "auth_failed"),
    "quota_exceeded": (402, "budget_exceeded"),
    "rate_limit": (429, "rate_limit"),
}
_HTTP_KEPT: Final[dict[int, str]] = {
    400: "invalid_request",
    401: "auth_failed",
    403: "auth_failed",
    404: "model_not_found",
    422: "invalid_request",
}
"""A provider's refusals whose status an HTTP client gets as it is (retrying cannot help)."""


def to_http_error(exc: BaseException) -> HttpError:
    """What an HTTP client sees for ``exc``: the provider's refusals keep their meaning (a
    used-up quota 402, a rate limit 429, its 400, 401, 403, 404 and 422 as they are, another
    refused key 401), every other provider failure is 502; a model no provider lists is 404;
    unexpected exceptions are logged and never leaked (500)."""
    if isinstance(exc, LLMError):
        if exc.code not in ("quota_exceeded", "rate_limit") and exc.status in _HTTP_KEPT:
            return HttpError(exc.status, _HTTP_KEPT[exc.status], str(exc))
        status, code = _HTTP_LLM.get(exc.code, (502, "api_error"))
        return HttpError(status, code, str(exc), exc.retry_after)
    if isinstance(exc, ModelNotFound):
        return HttpError(404, "model_not_found", exc.message)
    if isinstance(exc, RpcError) and exc.code in _HTTP_RPC:
        status, code = _HTTP_RPC[exc.code]
        retry = 1.0 if exc.code is WireCode.TOO_MANY_REQUESTS else None
        return HttpError(status, code, exc.message, retry, data=exc.data)
    if isinstance(exc, pydantic.ValidationError):
        return HttpError(400, "invalid_request", f"Invalid body: {field_problems(exc)}.")
    logger.error("internal error while handling an HTTP request", exc_info=exc)
    return HttpError(500, "internal_error", "Internal error.")


def invalid_params_message(exc: Any) -> str:
    """The -32602 sentence for a pydantic ``ValidationError``."""
    return f"Invalid params: {field_problems(exc)}."


def field_problems(exc: Any) -> str:
    """The failing fields of a pydantic ``ValidationError`` and why, e.g. ``'limit': ...``."""
    problems = []
    for error in exc.errors(include_url=False)[:MAX_FIELD_ERRORS]:
        field = ".".join(str(part) for part in error["loc"]) or "params"
        problems.append(f"'{field}': {error['msg'].rstrip('.')}")
    more = exc.error_count() - len(problems)
    suffix = f" (and {more} more)" if more > 0 else ""
    return "; ".join(problems) + suffix
