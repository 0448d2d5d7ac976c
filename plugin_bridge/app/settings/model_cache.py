"""The provider's model list, cached in the data dir for a day (``models/list {refresh}`` and
``models --refresh`` ask again); stale entries still serve when the provider cannot be reached,
and the built-in catalog when nothing is cached."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from llm_service.catalog import ModelInfo

if TYPE_CHECKING:
    from llm_service import Provider

Source = Literal["api", "cache", "catalog"]

FILE_NAME: Final = "models.json"
TTL_SECONDS: Final = 24 * 3600.0


class ModelCache:
    """Model lists by provider key (provider name and base URL) in ``<data dir>/models.json``."""

    def __init__(self, data_dir: Path, *, ttl: float = TTL_SECONDS) -> None:
        self.path = data_dir / FILE_NAME
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
    from llm_service import LLMError
    from llm_service.catalog import catalog

    key = f"{provider_name}:{provider.base_url or ''}"
    models = None if refresh else await asyncio.to_thread(cache.get, key)
    if models is not None:
        return models, "cache"
    try:
        models = await provider.list_models()
    except LLMError as exc:
        if exc.code not in ("network_error", "timeout"):
            raise
        models = await asyncio.to_thread(cache.get, key, fresh_only=False)
        if models is None:
            return catalog(provider_name or ""), "catalog"
        return models, "cache"
    await asyncio.to_thread(cache.put, key, models)
    return models, "api"
