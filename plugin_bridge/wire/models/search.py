"""Wire models of search: vault/search, vault/related, index/progress, index/confirmEmbedding.

Same rules as :mod:`plugin_bridge.wire.models.base`: camelCase on the wire, params strict.
"""

from __future__ import annotations

from typing import ClassVar, Final, Literal

from pydantic import Field

from plugin_bridge.wire.models.base import ClientRequest, Empty, Notification, Params, WireModel

SearchMode = Literal["lexical", "semantic", "hybrid"]


MatchSide = Literal["lexical", "semantic"]


def _lexical() -> list[MatchSide]:
    return ["lexical"]


class SearchParams(Params):
    query: str = Field(
        max_length=1000,
        description='Words rank, "a phrase" is exact, prefix*; Obsidian\'s operators filter: '
        "-word, a OR b, (groups), file:, path:, tag:, content:, [property], [property:value], "
        "line:(…), section:(…).",
    )
    limit: int = Field(10, ge=1, le=50)
    mode: SearchMode | None = Field(
        None,
        description="Default: hybrid when vectors are ready, else lexical (also when semantic "
        "or hybrid is asked for before vectors exist).",
    )
    folder: str | None = Field(None, max_length=1000, description="Only notes inside it.")
    tag: str | None = Field(None, max_length=200, description="Only notes with it (or nested).")


class SearchHitModel(WireModel):
    path: str
    title: str
    score: float = Field(description="Higher is better (comparable within one answer only).")
    snippet: str = Field(
        description="Lexical: matched text, the matches wrapped in **…**; found by vectors: "
        "the best chunk, after its heading path."
    )
    matched_by: list[MatchSide] = Field(
        default_factory=_lexical, description="Which search found this note."
    )
    page: int | None = Field(
        None,
        ge=1,
        description="A PDF's page (1-based) the snippet is from: open it as [[file.pdf#page=N]]; "
        "null for notes.",
    )
    heading: str | None = Field(
        None,
        description="The heading path the snippet is under, e.g. 'Setup > Linux' (note/read "
        "takes it as heading to read just that part); null above the first heading and for PDFs.",
    )


class SearchResult(WireModel):
    results: list[SearchHitModel]
    took_ms: float
    pending: int = Field(description="Files not indexed yet (results may be partial).")
    mode: SearchMode = Field("lexical", description="The mode that answered.")


class RelatedParams(Params):
    path: str = Field(max_length=1000, description="Vault-relative path of the note.")
    limit: int = Field(10, ge=1, le=50)


class RelatedNote(WireModel):
    path: str
    title: str
    score: float = Field(description="Cosine similarity to the note, -1..1; higher is closer.")
    links_to: bool = Field(description="The note asked about links to this one.")
    linked_from: bool = Field(description="This one links to the note asked about.")
    snippet: str = Field("", description="The start of its closest chunk (at most 300 characters).")
    heading: str = Field("", description="Its closest chunk's heading path ('A > B'; '': none).")
    shared_links: list[str] = Field(
        default_factory=list,
        description="Link targets both notes hold (in lower case, as written: name or path).",
    )
    shared_tags: list[str] = Field(
        default_factory=list, description="Tags both notes carry (in lower case, without #)."
    )


class RelatedResult(WireModel):
    results: list[RelatedNote]
    ready: bool = Field(description="False: no vectors yet (no embedder, or still embedding).")


class IndexProgress(Notification):
    """Sent to every client while the embedding job runs."""

    METHOD: ClassVar[str] = "index/progress"

    phase: Literal["loading", "embedding", "confirm", "ready", "error"] = Field(
        description="confirm: waiting for index/confirmEmbedding (a paid embed over the limit)."
    )
    done: int
    total: int
    model: str
    estimated_tokens: int | None = Field(None, description="With phase confirm.")
    estimated_usd: float | None = Field(None, description="With phase confirm; null: unknown.")
    error: str | None = Field(None, description="With phase error: one sentence.")
    unreadable_pdfs: int = Field(
        0, description="PDFs not indexed: encrypted, damaged or over the size limit (pdf_max_mb)."
    )


class ConfirmEmbeddingResult(WireModel):
    waiting: bool = Field(description="True when a paid embed was waiting and now runs.")


VAULT_SEARCH: Final = ClientRequest("vault/search", SearchParams, SearchResult)
VAULT_RELATED: Final = ClientRequest("vault/related", RelatedParams, RelatedResult)
INDEX_CONFIRM_EMBEDDING: Final = ClientRequest(
    "index/confirmEmbedding", Empty, ConfirmEmbeddingResult
)
