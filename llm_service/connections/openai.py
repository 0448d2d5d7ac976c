"""The connection to OpenAI's API or an OpenAI-compatible server: the SDK client (built on first
use), the key, the base URL, the timeout, the name messages use ("LM Studio") and the one
translation of the SDK's exceptions into :class:`LLMError`, shared by the chat provider and the
embedder."""

from __future__ import annotations

import math
import os
import re
from typing import TYPE_CHECKING, Any, Final

from llm_service import lazy
from llm_service.connections.errors import (
    HINTS,
    UnreadableResponse,
    code_for,
    describe,
    error_details,
    log_unexpected,
    shorten,
    transport_code,
)
from llm_service.errors import ErrorCode, LLMError, parse_retry_after
from llm_service.profiles import PROFILES

if TYPE_CHECKING:
    import openai
    from openai import AsyncOpenAI
else:
    openai = lazy.module("openai")

OPENAI_TIMEOUT: Final = 60.0
LOCAL_PLACEHOLDER_KEY = "not-needed"
"""What the SDK is given without a key; the request goes out without an Authorization."""
_SECRET = re.compile(r"\bsk-[\w*-]{4,}")
"""Anything shaped like an OpenAI key; error messages may quote one (even masked)."""
_DETAIL_LIMIT = 160


async def _without_placeholder(request: Any) -> None:
    """An httpx request hook: drop the placeholder key's Authorization header."""
    if request.headers.get("authorization") == f"Bearer {LOCAL_PLACEHOLDER_KEY}":
        del request.headers["authorization"]


class OpenAIConnection:
    """One OpenAI client: ``OpenAIConnection(key, base_url=..., timeout=..., name=...)``; the
    key defaults to OPENAI_API_KEY, and a server at ``base_url`` needs none."""

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        timeout: float = OPENAI_TIMEOUT,
        name: str | None = None,
        key_hint: str | None = None,
    ) -> None:
        self._api_key = api_key
        self.key_hint = key_hint
        """What to do about a refused key (default: check OPENAI_API_KEY, or the API key)."""
        self.base_url = base_url
        self.timeout = timeout
        self.name = name or PROFILES["openai"].label
        self._client: AsyncOpenAI | None = None

    def client(self) -> AsyncOpenAI:
        """The SDK client, built (and the SDK imported) on first use."""
        if self._client is None:
            # OPENAI_API_KEY is for OpenAI's own API: never sent to another base_url.
            key = self._api_key or (
                os.environ.get("OPENAI_API_KEY") if self.base_url is None else None
            )
            if not key and self.base_url is None:
                raise LLMError(
                    "OpenAI API key is missing: set OPENAI_API_KEY.",
                    code="auth_error",
                    provider=self.name,
                )
            self._api_key = key
            self._client = openai.AsyncOpenAI(
                api_key=key or LOCAL_PLACEHOLDER_KEY,
                base_url=self.base_url,
                max_retries=0,  # Provider's retry policy applies, not the SDK's
                timeout=self.timeout,
                # without a key, no Authorization header at all (local servers need none)
                http_client=None
                if key
                else openai.DefaultAsyncHttpxClient(
                    event_hooks={"request": [_without_placeholder]}
                ),
            )
        return self._client

    async def aclose(self) -> None:
        """Close the client's connections; the next call opens a new client."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()

    def convert_error(self, exc: Exception, request_id: str | None = None) -> LLMError:
        """The one translation of SDK / HTTP failures; ``request_id`` for mid-stream ones."""
        status: int | None = None
        retry_after = None
        detail = ""
        code: ErrorCode
        if isinstance(exc, UnreadableResponse):
            code, detail, request_id = "invalid_response", str(exc), exc.request_id or request_id
        elif isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            kind, detail = error_details(exc.body)
            code = code_for(status, kind, detail)
            retry_after = parse_retry_after(exc.response.headers)
            request_id = exc.request_id or request_id
        elif isinstance(exc, openai.APITimeoutError):
            code = "timeout"
        elif isinstance(exc, openai.APIConnectionError):
            code = transport_code(exc.__cause__ or exc) or "network_error"
        elif isinstance(exc, openai.APIResponseValidationError):
            code = "invalid_response"
        elif isinstance(exc, openai.APIError):  # an error object inside a 200 stream
            kind, detail = error_details(exc.body)
            code = code_for(None, kind, detail or exc.message)
            if code == "unknown":
                code = "server_error"
        else:
            code = transport_code(exc) or "unknown"
        if code == "unknown":
            log_unexpected("the OpenAI SDK", exc)
        where = f" at {self.base_url}" if self.base_url and code == "network_error" else ""
        return LLMError(
            describe(
                code, self.name + where, status, self._clean(detail), self._hint(code, retry_after)
            ),
            code=code,
            provider=self.name,
            status=status,
            retry_after=retry_after,
            request_id=request_id,
        )

    def _hint(self, code: ErrorCode, retry_after: float | None) -> str:
        if code == "auth_error" and self.key_hint:
            return self.key_hint
        if code == "auth_error":
            return "check OPENAI_API_KEY" if self.base_url is None else "check the API key"
        if code == "rate_limit" and retry_after:
            return f"retry in {math.ceil(retry_after)} s"
        return HINTS[code]

    def _clean(self, detail: str) -> str:
        """The API's own words, cut to one short sentence, with keys removed."""
        text = " ".join(detail.split())
        if text.startswith("<"):  # an HTML error page (from a proxy) says nothing useful
            return ""
        if self._api_key:
            text = text.replace(self._api_key, "[redacted]")
        return shorten(_SECRET.sub("[redacted]", text), _DETAIL_LIMIT)
