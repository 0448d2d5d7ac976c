"""The errors every vendor's connection shares: the HTTP status and error-type table that gives
an :class:`~llm_service.errors.LLMError` its code, the one sentence a user reads, the hint of
what to do, and transport failures judged by class name (httpx and httpx2 alike)."""

from __future__ import annotations

import json
import logging

from llm_service.errors import ErrorCode

logger = logging.getLogger(__name__)


def log_unexpected(provider: str, exc: BaseException) -> None:
    """Log, with its traceback, a failure no rule of the error table knows (code ``unknown``):
    the user reads "see the server log", and the log must then say what happened."""
    logger.error("Unexpected %s from %s", type(exc).__name__, provider, exc_info=exc)


class UnreadableResponse(Exception):
    """The API's answer does not have the API's shape; ``_convert_error`` makes it
    invalid_response (with the request id, when the response had one)."""

    def __init__(self, detail: str, request_id: str | None = None) -> None:
        super().__init__(detail)
        self.request_id = request_id


def shorten(text: str, limit: int = 200) -> str:
    """The first sentence of an API's message, on one line, without its full stop, cut."""
    sentence = " ".join(text.split()).split(". ", 1)[0].rstrip(".")
    return sentence if len(sentence) <= limit else sentence[: limit - 3] + "..."


_STATUS_CODES: dict[int, ErrorCode] = {
    400: "invalid_request",
    401: "auth_error",
    402: "quota_exceeded",  # "insufficient credits" from OpenAI-compatible APIs (OpenRouter)
    403: "auth_error",
    404: "invalid_request",
    408: "timeout",
    413: "invalid_request",
    422: "invalid_request",
    429: "rate_limit",
    529: "overloaded",
}

_BODY_TYPES: dict[str, ErrorCode] = {
    "overloaded_error": "overloaded",
    "rate_limit_error": "rate_limit",
    "insufficient_quota": "quota_exceeded",
    "authentication_error": "auth_error",
    "permission_error": "auth_error",
    "invalid_request_error": "invalid_request",
    "not_found_error": "invalid_request",
    "request_too_large": "invalid_request",
    "api_error": "server_error",
    "timeout_error": "timeout",
}


def code_for(status: int | None, error_type: str | None = None, message: str = "") -> ErrorCode:
    """The LLMError code for an HTTP status and the API's own error type.

    Quota and overload are recognised by type first; then the status decides; the type alone
    decides only for errors without one (an error event inside a 200 stream)."""
    lowered = message.lower()
    if error_type == "insufficient_quota" or "credit balance is too low" in lowered:
        return "quota_exceeded"
    server_side = status is None or status >= 500
    if error_type == "overloaded_error" or (server_side and "overloaded" in lowered):
        return "overloaded"
    if status is not None and status in _STATUS_CODES:
        return _STATUS_CODES[status]
    if status is not None and status >= 500:
        return "server_error"
    return _BODY_TYPES.get(error_type or "", "unknown")


def error_details(body: object) -> tuple[str | None, str]:
    """(error type or code, message) from an API error body in any of the usual shapes."""
    if not isinstance(body, dict):
        return None, str(body or "")
    error = body.get("error", body)
    if isinstance(error, str):
        return None, error
    if not isinstance(error, dict):
        return None, ""
    kind = error.get("code") if error.get("code") == "insufficient_quota" else error.get("type")
    return (str(kind) if kind else None), str(error.get("message") or "")


def describe(code: ErrorCode, provider: str, status: int | None, detail: str, hint: str) -> str:
    """One sentence: what happened, with the status, the API's words, and what to do."""
    what = {
        "auth_error": "rejected the API key",
        "rate_limit": "rate limit reached",
        "quota_exceeded": "quota or credit is used up",
        "overloaded": "is overloaded",
        "server_error": "had a server error",
        "invalid_request": "refused the request",
        "timeout": "did not answer in time",
        "network_error": "could not be reached",
        "invalid_response": "sent a response that could not be read",
        "cancelled": "request was cancelled",
        "unknown": "failed",
    }[code]
    status_text = f" ({status})" if status else ""
    detail_text = f": {detail.rstrip('.')}" if detail else ""
    return f"{provider} {what}{status_text}{detail_text}; {hint}."


HINTS: dict[ErrorCode, str] = {
    "auth_error": "check the API key",
    "rate_limit": "wait a moment and send the message again",
    "quota_exceeded": "add credit or raise the quota in your provider account",
    "overloaded": "try again in a minute",
    "server_error": "try again in a minute",
    "invalid_request": "check the model name and the request",
    "timeout": "try again, or raise the timeout",
    "network_error": "check your connection and the base URL",
    "invalid_response": "check that the base URL points at a compatible API",
    "cancelled": "send the message again if you still need the answer",
    "unknown": "see the server log for details",
}


def transport_code(exc: BaseException) -> ErrorCode | None:
    """The code for an httpx / httpx2 transport failure, judged by class name (both libraries
    share their exception hierarchy's names), or None when ``exc`` is not one."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if "TimeoutException" in names or isinstance(exc, TimeoutError):
        return "timeout"
    if "DecodingError" in names:
        return "invalid_response"
    if names & {"TransportError", "NetworkError", "ProtocolError"} or isinstance(
        exc, ConnectionError
    ):
        return "network_error"
    if isinstance(exc, (json.JSONDecodeError, UnicodeDecodeError)):
        return "invalid_response"
    return None
