"""The exceptions of ``llm_service``.

Exception tree::

    Exception
    ├── LLMError          every provider failure, after retries; ``.code`` says which
    │                     (``auth_error``, ``rate_limit``, ``quota_exceeded``, ``overloaded``,
    │                     ``server_error``, ``network_error``, ``timeout``, ``invalid_request``,
    │                     ``invalid_response``, ``cancelled``, ``unknown``)
    └── ValueError
        └── UnknownProviderError   a provider name or model spec names no provider
                                   (``make_provider("mistral:x")``)

Configuration mistakes made by the programmer (a bad tool schema, say) raise ``ValueError``.
``asyncio.CancelledError`` is never wrapped: a cancelled task stays cancelled.

Each provider module turns its SDK's exceptions into an ``LLMError`` in exactly one function.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

ErrorCode = Literal[
    "auth_error",
    "rate_limit",
    "quota_exceeded",
    "overloaded",
    "server_error",
    "network_error",
    "timeout",
    "invalid_request",
    "invalid_response",
    "cancelled",
    "unknown",
]

ERROR_CODES: Final[frozenset[str]] = frozenset(get_args(ErrorCode))
RETRYABLE_CODES: Final[frozenset[str]] = frozenset(
    {"rate_limit", "overloaded", "server_error", "network_error", "timeout"}
)


class LLMError(Exception):
    """A provider call failed; ``str(error)`` is one sentence a user can act on."""

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode,
        provider: str = "",
        retryable: bool | None = None,
        retry_after: float | None = None,
        status: int | None = None,
        request_id: str | None = None,
    ) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown LLMError code {code!r}")
        if request_id and request_id not in message:
            message = f"{message.rstrip('.')} (request id {request_id})."
        super().__init__(message)
        self.message = message
        self.code: ErrorCode = code
        self.provider = provider
        self.retryable = code in RETRYABLE_CODES if retryable is None else retryable
        self.retry_after = retry_after
        self.status = status
        self.request_id = request_id

    def __repr__(self) -> str:
        return (
            f"LLMError(code={self.code!r}, status={self.status!r}, retryable={self.retryable!r}, "
            f"retry_after={self.retry_after!r}, request_id={self.request_id!r}, "
            f"message={self.message!r})"
        )


class UnknownProviderError(ValueError):
    """A spec or name that is not one of ``llm_service.PROVIDER_NAMES``; ``str(error)`` is one
    sentence naming the accepted forms."""


def parse_retry_after(headers: object) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds) headers, if any."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    raw_ms = get("retry-after-ms")
    if raw_ms is not None:
        try:
            return max(float(raw_ms) / 1000.0, 0.0)
        except (TypeError, ValueError):
            pass
    raw = get("retry-after")
    if raw is not None:
        try:
            return max(float(raw), 0.0)
        except (TypeError, ValueError):
            return _parse_http_date(str(raw))
    return None


def _parse_http_date(value: str) -> float | None:
    from datetime import UTC, datetime
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - datetime.now(UTC)).total_seconds(), 0.0)
