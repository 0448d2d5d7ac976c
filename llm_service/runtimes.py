"""Local model runtimes on this machine: Ollama and LM Studio, found by asking their HTTP APIs.

``await detect_runtimes()`` probes both at once and says, for each, whether it answers and which
models it has, whether each can use tools and whether it is an embedding model:

* Ollama (``OLLAMA_HOST``, else ``127.0.0.1:11434``): ``GET /api/tags`` lists the models, then
  ``POST /api/show`` for each (at once) gives its ``capabilities`` (``tools``, ``embedding``;
  Ollama 0.6.4 and later).
* LM Studio (``LMSTUDIO_HOST``, else ``127.0.0.1:1234``): its own ``GET /api/v0/models`` gives
  each model's ``type`` (``llm``, ``vlm``, ``embeddings``) and ``capabilities`` (``tool_use``);
  a server without that API is asked its OpenAI-compatible ``GET /v1/models`` instead.

Connections time out after :data:`RUNTIME_CONNECT_SECONDS`, so with nothing listening (or a host
that drops packets) the probe is over in well under a second. No key or token is sent: the requests
carry no credentials, and the environment's proxy and ``.netrc`` settings are not read.

Whatever listens on those ports is not trusted: an answer larger than :data:`MAX_ANSWER_BYTES`
is not read (the runtime counts as not answering), at most :data:`MAX_MODELS` models are listed
(:data:`SHOW_AT_ONCE` ``/api/show`` requests at a time), and each runtime gets
:data:`RUNTIME_SECONDS` in all (the models not described by then are listed without
capabilities).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Awaitable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import urlsplit

from llm_service import lazy
from llm_service.profiles import PROFILES, ProviderName
from llm_service.warmup import warmed

if TYPE_CHECKING:
    import httpx
else:
    httpx = lazy.module("httpx")

RuntimeKind = Literal["ollama", "lmstudio"]
RUNTIME_LABELS: Final[dict[RuntimeKind, str]] = {"ollama": "Ollama", "lmstudio": "LM Studio"}
RUNTIME_PROVIDERS: Final[dict[RuntimeKind, ProviderName]] = {
    "ollama": "ollama",
    "lmstudio": "openai",  # its OpenAI-compatible API, at its base URL
}
"""The provider that speaks to each runtime."""
DEFAULT_OLLAMA: Final = PROFILES["ollama"].default_base_url or ""
DEFAULT_LMSTUDIO: Final = "http://127.0.0.1:1234"
RUNTIME_CONNECT_SECONDS: Final = 0.25
"""A local runtime accepts a connection at once; a refused one fails at once."""
RUNTIME_READ_SECONDS: Final = 2.0
"""Once connected, how long one answer may take."""
RUNTIME_SECONDS: Final = 2.0
"""All the requests of one runtime."""
MAX_ANSWER_BYTES: Final = 1 << 20
MAX_MODELS: Final = 500
SHOW_AT_ONCE: Final = 8


@dataclass(frozen=True, slots=True)
class RuntimeModel:
    id: str
    supports_tools: bool | None
    """None: the runtime does not say."""
    embedding: bool


@dataclass(frozen=True, slots=True)
class LocalRuntime:
    """A local runtime (Ollama, LM Studio) as its HTTP API answered."""

    kind: RuntimeKind
    base_url: str
    """The address a provider is given: Ollama's root, LM Studio's OpenAI-compatible ``/v1``."""
    reachable: bool
    models: tuple[RuntimeModel, ...] = ()


def runtime_roots(environ: Mapping[str, str] | None = None) -> dict[RuntimeKind, str]:
    """Where each runtime is asked: ``OLLAMA_HOST`` / ``LMSTUDIO_HOST`` (``host:port`` or a
    URL), else the runtime's default address."""
    env = os.environ if environ is None else environ
    return {
        "ollama": _root(env.get("OLLAMA_HOST"), DEFAULT_OLLAMA),
        "lmstudio": _root(env.get("LMSTUDIO_HOST"), DEFAULT_LMSTUDIO).removesuffix("/v1"),
    }


async def detect_runtimes(roots: Mapping[RuntimeKind, str] | None = None) -> list[LocalRuntime]:
    """Ollama and LM Studio, probed at once (see the module docstring)."""
    await warmed()  # httpx may be being imported by a server's warm-up thread

    where = runtime_roots() if roots is None else roots
    timeout = httpx.Timeout(RUNTIME_READ_SECONDS, connect=RUNTIME_CONNECT_SECONDS)
    https = any(root.startswith("https:") for root in where.values())
    # Loading the CA bundle costs ~80 ms: only an https address needs it.
    async with httpx.AsyncClient(timeout=timeout, trust_env=False, verify=https) as client:
        ollama, lmstudio = await asyncio.gather(
            _ollama(client, where["ollama"]), _lmstudio(client, where["lmstudio"])
        )
    return [ollama, lmstudio]


async def _ollama(client: httpx.AsyncClient, root: str) -> LocalRuntime:
    deadline = asyncio.get_running_loop().time() + RUNTIME_SECONDS
    listed = await _within(deadline, _get_json(client, f"{root}/api/tags"))
    entries = listed.get("models") if isinstance(listed, dict) else None
    if not isinstance(entries, list):
        return LocalRuntime("ollama", root, reachable=False)
    names = [str(e["name"]) for e in entries if isinstance(e, dict) and e.get("name")]
    names = names[:MAX_MODELS]
    at_once = asyncio.Semaphore(SHOW_AT_ONCE)
    shows = [asyncio.ensure_future(_ollama_show(client, root, n, at_once)) for n in names]
    if shows:
        await asyncio.wait(shows, timeout=max(deadline - asyncio.get_running_loop().time(), 0))
    for show in shows:
        show.cancel()
    shown = [
        show.result() if show.done() and not show.cancelled() else _undescribed(name)
        for name, show in zip(names, shows, strict=True)
    ]
    return LocalRuntime("ollama", root, reachable=True, models=tuple(shown))


async def _ollama_show(
    client: httpx.AsyncClient, root: str, name: str, at_once: asyncio.Semaphore
) -> RuntimeModel:
    async with at_once:
        shown = await _answer(client, "POST", f"{root}/api/show", {"model": name})
    capabilities = shown.get("capabilities") if isinstance(shown, dict) else None
    if not isinstance(capabilities, list):
        return _undescribed(name)
    return RuntimeModel(name, "tools" in capabilities, "embedding" in capabilities)


def _undescribed(name: str) -> RuntimeModel:
    """A model whose runtime did not say what it can do."""
    return RuntimeModel(name, None, _named_embedding(name))


async def _lmstudio(client: httpx.AsyncClient, root: str) -> LocalRuntime:
    base_url = f"{root}/v1"
    deadline = asyncio.get_running_loop().time() + RUNTIME_SECONDS
    native = await _within(deadline, _get_json(client, f"{root}/api/v0/models"))
    entries = native.get("data") if isinstance(native, dict) else None
    if isinstance(entries, list):
        models = [_lmstudio_model(e) for e in entries if isinstance(e, dict) and "id" in e]
        return LocalRuntime("lmstudio", base_url, reachable=True, models=tuple(models[:MAX_MODELS]))
    compatible = await _within(deadline, _get_json(client, f"{base_url}/models"))
    entries = compatible.get("data") if isinstance(compatible, dict) else None
    if not isinstance(entries, list):
        return LocalRuntime("lmstudio", base_url, reachable=False)
    ids = [str(e["id"]) for e in entries if isinstance(e, dict) and "id" in e]
    named = tuple(_undescribed(i) for i in ids[:MAX_MODELS])
    return LocalRuntime("lmstudio", base_url, reachable=True, models=named)


async def _within(deadline: float, answer: Awaitable[Any]) -> Any:
    """``answer``, or None when it is not there by ``deadline`` (loop time)."""
    try:
        async with asyncio.timeout_at(deadline):
            return await answer
    except TimeoutError:
        return None


def _lmstudio_model(entry: dict[str, Any]) -> RuntimeModel:
    capabilities = entry.get("capabilities")
    tools = "tool_use" in capabilities if isinstance(capabilities, list) else None
    return RuntimeModel(str(entry["id"]), tools, entry.get("type") == "embeddings")


async def _get_json(client: httpx.AsyncClient, url: str) -> Any:
    """The JSON body of a 200 answer; None when nothing answers or the answer is not that."""
    return await _answer(client, "GET", url)


async def _answer(client: httpx.AsyncClient, method: str, url: str, body: Any = None) -> Any:
    """The JSON body of a 200 answer of at most MAX_ANSWER_BYTES; None when nothing answers,
    the answer is larger or is not JSON."""
    try:
        async with client.stream(method, url, json=body) as response:
            if response.status_code != 200:
                return None
            declared = response.headers.get("content-length", "0")
            if not declared.isdigit() or int(declared) > MAX_ANSWER_BYTES:
                return None
            data = bytearray()
            async for chunk in response.aiter_bytes():
                data += chunk
                if len(data) > MAX_ANSWER_BYTES:
                    return None
        return json.loads(data)
    except (httpx.HTTPError, ValueError, RecursionError):
        return None


def _named_embedding(model: str) -> bool:
    return "embed" in model.lower()


def _root(given: str | None, default: str) -> str:
    """``given`` as a URL root: a URL, or ``host[:port]`` with the default's port when it names
    none (as Ollama reads ``OLLAMA_HOST``)."""
    if not given or not given.strip():
        return default
    url = given.strip().rstrip("/")
    if "://" in url:
        return url
    parts = urlsplit(f"http://{url}")
    if parts.port is None and parts.hostname:
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        parts = parts._replace(netloc=f"{host}:{urlsplit(default).port}")
    return parts.geturl()
