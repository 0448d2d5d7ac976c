"""Wire models of the one-shot commands: create a note, summarize a search, rewrite text.

Same rules as :mod:`plugin_bridge.wire.models.base`: camelCase on the wire, params strict.
"""

from __future__ import annotations

from typing import Final

from pydantic import Field

from plugin_bridge.wire.models.base import ClientRequest, Params, WireModel
from plugin_bridge.wire.models.chat import UsageModel
from plugin_bridge.wire.models.vault import NoteWriteResult


class CreateNoteParams(Params):
    prompt: str = Field(min_length=1, max_length=20_000)
    folder: str = Field("", max_length=1000, description="Vault-relative folder; '' = root.")


class SearchSummarizeParams(Params):
    query: str = Field(min_length=1, max_length=1000)
    limit: int = Field(5, ge=1, le=20, description="How many top notes to read.")


class SearchSummarizeResult(WireModel):
    summary: str
    sources: list[str] = Field(description="Paths of the notes given to the model and cited.")


class RewriteParams(Params):
    text: str = Field(
        max_length=100_000,
        description="The selection to rewrite; empty: write new text at the cursor.",
    )
    instruction: str = Field(
        min_length=1, max_length=2000, description='What to do: "shorter", "fix grammar"…'
    )
    before: str | None = Field(
        None, max_length=100_000, description="Text before the selection or cursor (context)."
    )
    after: str | None = Field(
        None, max_length=100_000, description="Text after the selection or cursor (context)."
    )


class RewriteResult(WireModel):
    text: str = Field(description="The new text (the chat/delta notifications concatenated).")
    usage: UsageModel
    cost_usd: float | None = Field(description="Null when the model's price is unknown.")


COMMAND_CREATE_NOTE: Final = ClientRequest("command/createNote", CreateNoteParams, NoteWriteResult)
COMMAND_SEARCH_SUMMARIZE: Final = ClientRequest(
    "command/searchSummarize", SearchSummarizeParams, SearchSummarizeResult
)
COMMAND_REWRITE: Final = ClientRequest("command/rewrite", RewriteParams, RewriteResult)
