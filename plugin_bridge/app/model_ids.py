"""Which listed id a client's model id is, as the providers themselves read ids they do not list.

- An id the list holds is itself.
- An untagged Ollama name is its ``:latest`` (``llama3.2`` is ``llama3.2:latest``).
- An Anthropic alias is its newest dated id: ``claude-sonnet-4-5`` is
  ``claude-sonnet-4-5-20250929``; ``claude-sonnet-4-0`` and ``claude-sonnet-4`` are
  ``claude-sonnet-4-20250514``; ``claude-3-7-sonnet-latest`` is ``claude-3-7-sonnet-20250219``.
  The alias must be the dated id's whole stem: ``claude-sonnet-4`` is never
  ``claude-sonnet-4-5-…``.

:func:`close_ids` gives the listed ids nearest a missing one, for the refusal's sentence.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import TYPE_CHECKING, Final

from llm_service import lazy

if TYPE_CHECKING:
    from rapidfuzz import fuzz as rapidfuzz_fuzz
    from rapidfuzz import process as rapidfuzz_process
else:
    rapidfuzz_fuzz = lazy.module("rapidfuzz.fuzz")
    rapidfuzz_process = lazy.module("rapidfuzz.process")

DATED: Final = re.compile(r"^(?P<stem>.+)-(?P<date>\d{8})$")
"""A dated model id (Anthropic's ``ID-YYYYMMDD``)."""
ALIAS_ENDINGS: Final = ("-latest", "-0")
"""What an alias may add to its dated id's stem (``claude-sonnet-4-0``, ``…-latest``)."""
CLOSE_IDS: Final = 5
"""The most close ids a refusal names."""
CLOSE_SCORE: Final = 60.0
"""The least similarity (rapidfuzz ``WRatio``, 0 to 100) of an id a refusal names."""


def listed_id(model: str, ids: Collection[str]) -> str | None:
    """The id of ``ids`` that ``model`` is (see the module docstring), or None."""
    if model in ids:
        return model
    name = model.rsplit("/", 1)[-1]
    if ":" not in name and f"{model}:latest" in ids:
        return f"{model}:latest"
    stems = {model, *(model.removesuffix(end) for end in ALIAS_ENDINGS if model.endswith(end))}
    dated = [
        (m["date"], listed) for listed in ids if (m := DATED.match(listed)) and m["stem"] in stems
    ]
    return max(dated)[1] if dated else None


def close_ids(model: str, ids: Collection[str], limit: int = CLOSE_IDS) -> list[str]:
    """Up to ``limit`` ids of ``ids`` that look like ``model``, the closest first."""
    matches = rapidfuzz_process.extract(
        model, list(ids), scorer=rapidfuzz_fuzz.WRatio, score_cutoff=CLOSE_SCORE, limit=limit
    )
    return [match for match, _score, _index in matches]
