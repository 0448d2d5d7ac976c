"""Local model runtimes on this machine: Ollama and LM Studio, found by asking their HTTP APIs.

``await detect_runtimes()`` probes both at once and says, for each, whether it answers and which
models it has, whether each can use tools and whether it is an embedding model:

* Ollama (``OLLAMA_HOST``, else ``127.0.0.1:11434``): ``GET /api/tags`` lists the models, then
  ``POST /api/show`` for each (at once) gives its ``capabilities`` (``tools``, ``embedding``;
  Ollama 0.6.4 and later).
* LM Studio (``LMSTUDIO_HOST``, else ``127.0.0.1:1234``): its own ``GET /api/v0/models`` gives
  each model's ``type`` (``llm``, ``vlm``, ``embeddings``) and ``capabilities`` (``tool_use``);
  a server without that API is asked its OpenAI-compatible ``GET /v1/models`` instead.

Connections time out after :data:`CONNECT_SECONDS`, so with nothing listening (or a host that
drops packets) the probe is over in well under a second. No key or token is sent: the requests
carry no credentials, and the environment's proxy and ``.netrc`` settings are not read.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    import httpx

RuntimeKind = Literal["ollama", "lmstudio"]
DEFAULT_OLLAMA: Final = "http://127.0.0.1:11434"
DEFAULT_LMSTUDIO: Final = "http://127.0.0.1:1234"
CONNECT_SECONDS: Final = 0.25
"""A local runtime accepts a connection at once; a refused one fails at once."""
READ_SECONDS: Final = 3.0
"""Once connected, how long one answer may take."""


@dataclass(frozen=True, slots=True)
class RuntimeModel:
    id: str
    supports_tools: bool | None
    """None: the runtime does not say."""
    embedding: bool


@dataclass(frozen=True, slots=True)
class Runtime:
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


async def detect_runtimes(roots: Mapping[RuntimeKind, str] | None = None) -> list[Runtime]:
    """Ollama and LM Studio, probed at once (see the module docstring)."""
    import httpx

    where = runtime_roots() if roots is None else roots
    timeout = httpx.Timeout(READ_SECONDS, connect=CONNECT_SECONDS)
    https = any(root.startswith("https:") for root in where.values())
    # Loading the CA bundle costs ~80 ms: only an https address needs it.
    async with httpx.AsyncClient(timeout=timeout, trust_env=False, verify=https) as client:
        ollama, lmstudio = await asyncio.gather(
            _ollama(client, where["ollama"]), _lmstudio(client, where["lmstudio"])
        )
    return [ollama, lmstudio]


async def _ollama(client: httpx.AsyncClient, root: str) -> Runtime:
    listed = await _get_json(client, f"{root}/api/tags")
    entries = listed.get("models") if isinstance(listed, dict) else None
    if not isinstance(entries, list):
        return Runtime("ollama", root, reachable=False)
    names = [str(e["name"]) for e in entries if isinstance(e, dict) and e.get("name")]
    shown = await asyncio.gather(*(_ollama_show(client, root, name) for name in names))
    return Runtime("ollama", root, reachable=True, models=tuple(shown))


async def _ollama_show(client: httpx.AsyncClient, root: str, name: str) -> RuntimeModel:
    import httpx

    try:
        response = await client.post(f"{root}/api/show", json={"model": name})
        shown = response.json() if response.status_code == 200 else {}
    except (httpx.HTTPError, ValueError):
        shown = {}
    capabilities = shown.get("capabilities") if isinstance(shown, dict) else None
    if not isinstance(capabilities, list):
        return RuntimeModel(name, None, _named_embedding(name))
    return RuntimeModel(name, "tools" in capabilities, "embedding" in capabilities)


async def _lmstudio(client: httpx.AsyncClient, root: str) -> Runtime:
    base_url = f"{root}/v1"
    native = await _get_json(client, f"{root}/api/v0/models")
    entries = native.get("data") if isinstance(native, dict) else None
    if isinstance(entries, list):
        models = [_lmstudio_model(e) for e in entries if isinstance(e, dict) and "id" in e]
        return Runtime("lmstudio", base_url, reachable=True, models=tuple(models))
    compatible = await _get_json(client, f"{base_url}/models")
    entries = compatible.get("data") if isinstance(compatible, dict) else None
    if not isinstance(entries, list):
        return Runtime("lmstudio", base_url, reachable=False)
    ids = [str(e["id"]) for e in entries if isinstance(e, dict) and "id" in e]
    named = tuple(RuntimeModel(i, None, _named_embedding(i)) for i in ids)
    return Runtime("lmstudio", base_url, reachable=True, models=named)


def _lmstudio_model(entry: dict[str, Any]) -> RuntimeModel:
    capabilities = entry.get("capabilities")
    tools = "tool_use" in capabilities if isinstance(capabilities, list) else None
    return RuntimeModel(str(entry["id"]), tools, entry.get("type") == "embeddings")


async def _get_json(client: httpx.AsyncClient, url: str) -> Any:
    """The JSON body of a 200 answer; None when nothing answers or the answer is not that."""
    import httpx

    try:
        response = await client.get(url)
        return response.json() if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        return None


def _named_embedding(model: str) -> bool:
    return "embed" in model.lower()


def _root(given: str | None, default: str) -> str:
    """``given`` as a URL root: a URL, or ``host[:port]`` with the default's port when it names
    none (as Ollama reads ``OLLAMA_HOST``)."""
    from urllib.parse import urlsplit

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
