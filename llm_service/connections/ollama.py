"""The connection to Ollama: the httpx client (imported on first use), the base URL, the
timeout, the decoding of its JSON answers and the one translation of its errors into
:class:`LLMError`, shared by the chat provider and the embedder."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Final

from llm_service import lazy
from llm_service.connections.errors import (
    HINTS,
    code_for,
    describe,
    error_details,
    log_unexpected,
    transport_code,
)
from llm_service.errors import ErrorCode, LLMError, parse_retry_after
from llm_service.profiles import PROFILES

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy.module("httpx")

_MISSING_MODEL = re.compile(r"""model ["']([^"']+)["'] not found""")
"""Ollama's 404 texts: ``model 'x' not found`` and ``model "x" not found, try pulling it first``."""
OLLAMA_TIMEOUT: Final = 120.0
"""A model may have to load first."""


class OllamaError(Exception):
    """An error Ollama (or a proxy in front of it) reported; ``status`` is None mid-stream."""

    def __init__(
        self,
        detail: str,
        status: int | None = None,
        *,
        kind: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status
        self.kind = kind
        self.retry_after = retry_after


class OllamaResponseError(Exception):
    """Ollama's answer was not its API's JSON (a wrong base URL, a cut-off or garbled stream)."""


class OllamaConnection:
    """One Ollama HTTP client: ``OllamaConnection(base_url, timeout=...)``, the local Ollama
    when ``base_url`` is None."""

    name = PROFILES["ollama"].label

    def __init__(self, base_url: str | None = None, *, timeout: float = OLLAMA_TIMEOUT) -> None:
        self.base_url: str = (base_url or PROFILES["ollama"].default_base_url or "").rstrip("/")
        self.timeout = timeout
        self._client: httpx.AsyncClient | None = None

    def http(self) -> httpx.AsyncClient:
        """The HTTP client, built (and httpx imported) on first use."""
        if self._client is None:
            self._client = httpx.AsyncClient(base_url=self.base_url, timeout=self.timeout)
        return self._client

    async def aclose(self) -> None:
        """Close the pooled HTTP connections; the next call opens new ones."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.aclose()

    def convert_error(self, exc: Exception) -> LLMError:
        if isinstance(exc, OllamaError):
            return self._api_error(exc)
        if isinstance(exc, OllamaResponseError):
            message = (
                f"Ollama sent a response that could not be read ({exc}); "
                f"check that {self.base_url} is an Ollama server."
            )
            return LLMError(message, code="invalid_response", provider=self.name)
        code = transport_code(exc) or "unknown"
        if code == "unknown":
            log_unexpected("Ollama's client", exc)
        if code == "network_error":
            message = self._network_message(exc)
        elif code == "timeout":
            message = (
                f"Ollama did not answer within {self.timeout:g} s; try again, or raise the "
                "timeout for slow or still-loading models."
            )
        else:
            message = describe(code, self.name, None, type(exc).__name__, HINTS[code])
        return LLMError(message, code=code, provider=self.name)

    def _api_error(self, exc: OllamaError) -> LLMError:
        code = _api_code(exc)
        hint = HINTS[code]
        missing = _MISSING_MODEL.search(exc.detail)
        if code == "invalid_request" and missing:
            hint = f"download it with `ollama pull {missing.group(1)}`"
        elif code == "auth_error":
            hint = "sign in with `ollama signin` for cloud models, or check the proxy's credentials"
        elif code == "rate_limit" and exc.retry_after is not None:
            hint = f"retry in {exc.retry_after:g} s"
        return LLMError(
            describe(code, self.name, exc.status, exc.detail, hint),
            code=code,
            provider=self.name,
            status=exc.status,
            retry_after=exc.retry_after,
        )

    def _network_message(self, exc: Exception) -> str:
        if isinstance(exc, (httpx.ConnectError, ConnectionRefusedError)):
            return (
                f"Ollama is not reachable at {self.base_url}: start it with "
                f"`{PROFILES['ollama'].start_command}`."
            )
        return (
            f"Ollama at {self.base_url} dropped the connection; check that it is still "
            "running and send the message again."
        )


def _api_code(exc: OllamaError) -> ErrorCode:
    """The code for an error Ollama reported: the shared status table plus Ollama's own words."""
    server_side = exc.status is None or exc.status >= 500
    if exc.status == 499:  # Ollama's "request canceled"
        return "cancelled"
    if exc.status == 402:  # Ollama cloud's usage limit
        return "quota_exceeded"
    if server_side and "server busy" in exc.detail.lower():  # OLLAMA_MAX_QUEUE is full
        return "overloaded"
    code = code_for(exc.status, exc.kind, exc.detail)
    return "server_error" if code == "unknown" and exc.status is None else code


def decode_json(status: int, raw: bytes, headers: object = None) -> dict[str, Any]:
    """One JSON object from Ollama; an error status or an ``error`` field raises OllamaError."""
    retry_after = parse_retry_after(headers)
    try:
        value = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        if status >= 400:
            text = raw.decode(errors="replace").strip().split("\n", 1)[0][:200]
            raise OllamaError(text, status, retry_after=retry_after) from exc
        raise OllamaResponseError("a line is not JSON") from exc
    if isinstance(value, dict) and "error" in value:
        kind, detail = error_details(value)
        raise OllamaError(
            detail, status if status >= 400 else None, kind=kind, retry_after=retry_after
        )
    if status >= 400:
        raise OllamaError("", status, retry_after=retry_after)
    if not isinstance(value, dict):
        raise OllamaResponseError(f"expected a JSON object, got {type(value).__name__}")
    return value
