"""The provider's model list, cached in the data dir for a day (``models/list {refresh}``
asks again); stale entries still serve when the provider cannot be reached."""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Final

from llm_service.catalog import ModelInfo

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
