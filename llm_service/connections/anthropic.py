"""The connection to Anthropic's API: the SDK client (built on first use), the key, the base URL,
the timeout and the one translation of the SDK's exceptions into :class:`LLMError`. A chat
provider owns one, or shares one given to it (the bridge gives every purpose that runs on
Anthropic the same connection)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Final

from llm_service import lazy
from llm_service.connections.errors import (
    HINTS,
    UnreadableResponse,
    code_for,
    describe,
    log_unexpected,
    shorten,
    transport_code,
)
from llm_service.errors import ErrorCode, LLMError, parse_retry_after
from llm_service.profiles import PROFILES

if TYPE_CHECKING:
    import anthropic
    from anthropic import APIStatusError, AsyncAnthropic
else:
    anthropic = lazy.module("anthropic")

_PROFILE: Final = PROFILES["anthropic"]
MISSING_KEY: Final = f"{_PROFILE.label} API key is missing: set {_PROFILE.key_variable}."
ANTHROPIC_TIMEOUT: Final = 60.0
_SPEND_LIMIT_CODES: Final = frozenset(
    {"enforced_spend_limit_reached", "contract_spend_limit_reached"}
)
"""``error.details.error_code`` of a 429 that no wait will fix (a spend limit, not a rate)."""


class AnthropicConnection:
    """One Anthropic client: ``AnthropicConnection(key, base_url=..., timeout=...)``; the key
    defaults to ANTHROPIC_API_KEY (the SDK reads it)."""

    name = _PROFILE.label

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        timeout: float = ANTHROPIC_TIMEOUT,
        key_hint: str | None = None,
    ) -> None:
        self._api_key = api_key
        self.key_hint = key_hint
        """What to do about a refused key (default: check ANTHROPIC_API_KEY)."""
        self.base_url = base_url
        self.timeout = timeout
        self._client: AsyncAnthropic | None = None

    def client(self) -> AsyncAnthropic:
        """The SDK client, built on first use; without any credential, LLMError(auth_error)."""
        if self._client is None:
            client = anthropic.AsyncAnthropic(
                api_key=self._api_key, base_url=self.base_url, max_retries=0, timeout=self.timeout
            )
            if client.api_key is None and client.auth_token is None and client.credentials is None:
                raise LLMError(MISSING_KEY, code="auth_error", provider=self.name)
            self._client = client
        return self._client

    async def aclose(self) -> None:
        """Close the client's connections; the next call opens a new client."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    def convert_error(self, exc: Exception) -> LLMError:
        if isinstance(exc, anthropic.APIStatusError):
            return self._api_error(exc)
        detail, request_id = "", None
        code: ErrorCode
        if isinstance(exc, UnreadableResponse):
            code, detail, request_id = "invalid_response", str(exc), exc.request_id
        elif isinstance(exc, anthropic.APITimeoutError):
            code = "timeout"
        elif isinstance(exc, anthropic.APIConnectionError):
            code = transport_code(exc.__cause__ or exc) or "network_error"
        elif isinstance(exc, anthropic.APIResponseValidationError):
            code = "invalid_response"
        elif isinstance(exc, anthropic.CredentialsError):
            code, detail = "auth_error", shorten(str(exc))
        else:
            code = transport_code(exc) or "unknown"
        if code == "unknown":
            log_unexpected("the Anthropic SDK", exc)
        who = self.name
        if code == "network_error":
            url = (
                self._client.base_url if self._client else self.base_url or _PROFILE.default_origin
            )
            who = f"{self.name} at {url}"
        return LLMError(
            describe(code, who, None, detail, self._hint(code, None, None)),
            code=code,
            provider=self.name,
            request_id=request_id,
        )

    def _api_error(self, exc: APIStatusError) -> LLMError:
        """An HTTP error status, or an ``event: error`` inside a 200 stream (no error status)."""
        status = exc.status_code if exc.status_code >= 400 else None
        code: ErrorCode
        if status == 402 or exc.error_code in _SPEND_LIMIT_CODES:
            code = "quota_exceeded"
        else:
            code = code_for(status, exc.type, exc.api_message or "")
        retry_after = parse_retry_after(exc.response.headers)
        detail = shorten(exc.api_message or "")
        if status is None:
            detail = f"the answer broke off ({detail or exc.type or 'error event'})"
        return LLMError(
            describe(code, self.name, status, detail, self._hint(code, status, retry_after)),
            code=code,
            provider=self.name,
            status=status,
            retry_after=retry_after,
            request_id=exc.request_id,
        )

    def _hint(self, code: ErrorCode, status: int | None, retry_after: float | None) -> str:
        if code == "auth_error" and status == 403:
            return "check in the Claude Console that this API key may use the model"
        if code == "auth_error":
            return self.key_hint or "check ANTHROPIC_API_KEY"
        if code == "rate_limit" and retry_after:
            return f"retry in {math.ceil(retry_after)} s"
        if code == "quota_exceeded":
            return "add credit or raise the spend limit in the Claude Console"
        if code == "timeout" and status is None:
            return f"try again, or raise the timeout ({self.timeout:g} s)"
        return HINTS[code]
