"""Wire models of the one-shot commands: create a note, summarize a search.

Same rules as :mod:`plugin_bridge.wire.models.base`: camelCase on the wire, params strict.
"""

from __future__ import annotations

from pydantic import Field

from plugin_bridge.wire.models.base import Params, WireModel


class CreateNoteParams(Params):
    prompt: str = Field(min_length=1, max_length=20_000)
    folder: str = Field("", max_length=1000, description="Vault-relative folder; '' = root.")


class SearchSummarizeParams(Params):
    query: str = Field(min_length=1, max_length=1000)
    limit: int = Field(5, ge=1, le=20, description="How many top notes to read.")


class SearchSummarizeResult(WireModel):
    summary: str
    sources: list[str] = Field(description="Paths of the notes given to the model and cited.")
