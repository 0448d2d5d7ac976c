"""What a key or a server gives access to: :func:`validate_key` and :func:`discover_models`
(blocking, as documented for the library's users), and :func:`avalidate_key` and
:func:`adiscover_models` for code that runs in an event loop.

Model lists are cached for a day in ``models.json`` in the user's cache folder (platformdirs),
or in ``cache_dir`` (the bridge passes its data folder); ``refresh`` asks again. Stale entries
still serve when the provider cannot be reached, and the built-in catalog when nothing is cached.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

from platformdirs import user_cache_dir

from llm_service.catalog import ModelInfo, catalog
from llm_service.door import BlockingStore
from llm_service.errors import LLMError
from llm_service.factory import make_provider

if TYPE_CHECKING:
    from llm_service.profiles import ProviderName
    from llm_service.providers.base import Provider

Source = Literal["api", "cache", "catalog"]
Found = TypeVar("Found")

MODELS_CACHE_FILE: Final = "models.json"
TTL_SECONDS: Final = 24 * 3600.0


class ModelCache(BlockingStore):
    """Model lists by provider key (provider name and base URL) in ``<data dir>/models.json``."""

    def __init__(self, data_dir: Path, *, ttl: float = TTL_SECONDS) -> None:
        self.path = data_dir / MODELS_CACHE_FILE
        self.ttl = ttl

    def get(self, key: str, *, fresh_only: bool = True) -> list[ModelInfo] | None:
        """The cached list for ``key``; None when absent (or older than the TTL, unless
        ``fresh_only`` is False)."""
        entry = self._read().get(key)
        if not isinstance(entry, dict):
            return None
        if fresh_only and time.time() - float(entry.get("fetchedAt", 0)) > self.ttl:
            return None
        try:
            return [ModelInfo(**model) for model in entry["models"]]
        except (KeyError, TypeError):
            return None

    def put(self, key: str, models: list[ModelInfo]) -> None:
        entries = self._read()
        entries[key] = {"fetchedAt": time.time(), "models": [asdict(m) for m in models]}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temp = self.path.with_suffix(".tmp")
        temp.write_text(json.dumps(entries), encoding="utf-8")
        temp.replace(self.path)

    def _read(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}


async def known_models(
    provider: Provider, provider_name: str | None, cache: ModelCache, *, refresh: bool = False
) -> tuple[list[ModelInfo], Source]:
    """The provider's models and where they came from: the cache while it is fresh (unless
    ``refresh``), else the provider (then cached); when the provider cannot be reached, the
    last list however old, else the built-in catalog. Other provider errors raise LLMError."""
    key = f"{provider_name}:{provider.base_url or ''}"
    models = None if refresh else await cache.execute(lambda cache: cache.get(key))
    if models is not None:
        return models, "cache"
    try:
        models = await provider.list_models()
    except LLMError as exc:
        if exc.code not in ("network_error", "timeout"):
            raise
        models = await cache.execute(lambda cache: cache.get(key, fresh_only=False))
        if models is None:
            return catalog(provider_name or ""), "catalog"
        return models, "cache"
    await cache.execute(lambda cache: cache.put(key, models))
    return models, "api"


def default_cache_dir() -> Path:
    """Where model lists are cached unless ``cache_dir`` is given (the user's cache folder)."""
    return Path(user_cache_dir("llm-service"))


async def adiscover_models(
    provider: ProviderName | str,
    key: str | None = None,
    *,
    base_url: str | None = None,
    refresh: bool = False,
    cache_dir: Path | None = None,
) -> list[ModelInfo]:
    """The models ``provider`` ("anthropic", "openai", "ollama") serves for ``key`` (default:
    the SDK's environment variable) at ``base_url`` (default: the API's usual address), with
    context window, output limit, tool support and prices where known. Cached for 24 hours
    (see the module docstring); an unreachable provider gives the last list or the catalog;
    any other failure raises LLMError."""
    built = make_provider(provider, api_key=key, base_url=base_url)
    try:
        models, _ = await known_models(
            built, provider, ModelCache(cache_dir or default_cache_dir()), refresh=refresh
        )
    finally:
        await built.aclose()
    return models


async def avalidate_key(
    provider: ProviderName | str, key: str | None, *, base_url: str | None = None
) -> bool:
    """Whether ``provider`` accepts ``key`` (at ``base_url``), by one cheap call (the models
    list): False when it refuses the key; other failures (unreachable, overloaded) raise
    LLMError, since they say nothing about the key."""
    built = make_provider(provider, api_key=key, base_url=base_url)
    try:
        await built.validate_key()
    except LLMError as exc:
        if exc.code == "auth_error":
            return False
        raise
    finally:
        await built.aclose()
    return True


def discover_models(
    provider: ProviderName | str,
    key: str | None = None,
    *,
    base_url: str | None = None,
    refresh: bool = False,
    cache_dir: Path | None = None,
) -> list[ModelInfo]:
    """:func:`adiscover_models`, blocking until the list is there."""
    return _blocking(
        adiscover_models(provider, key, base_url=base_url, refresh=refresh, cache_dir=cache_dir)
    )


def validate_key(
    provider: ProviderName | str, key: str | None, *, base_url: str | None = None
) -> bool:
    """:func:`avalidate_key`, blocking until the provider has answered."""
    return _blocking(avalidate_key(provider, key, base_url=base_url))


def _blocking(call: Coroutine[Any, Any, Found]) -> Found:
    """Run ``call`` to its end: on a loop of its own, or, when this thread already runs one
    (a notebook, an async app), on a loop in another thread while this one waits."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(call)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, call).result()
