"""The embedder interface: texts in, unit-length float32 vectors out, in batches.

Concrete embedders only translate: ``_embed_once`` speaks the API once for one batch and
``_convert_error`` turns what the SDK raised into an :class:`LLMError`. Retries (the chat
providers' policy, from :class:`~llm_service.providers.base.Retrying`), batching, pacing and
normalisation live here. A rate limit does not fail a job: the throttle slows every batch down
and the batch is sent again, up to ``max_rate_limit_waits`` times. A slow embedder (a CPU model,
seconds per text) does not fail it either: a batch that times out is sent again as two halves,
and later batches stay that small; one text that times out doubles the request timeout, up to
:data:`MAX_TIMEOUT`.
"""

from __future__ import annotations

import asyncio
import logging
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from llm_service import lazy
from llm_service.embedders.throttle import Throttle
from llm_service.errors import LLMError
from llm_service.providers.base import Retrying

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]
else:
    np = lazy.module("numpy")

logger = logging.getLogger(__name__)
MAX_TIMEOUT = 600.0
"""Seconds one request may take at most, however slow the embedder turned out to be."""


class EmbedderOptions(TypedDict, total=False):
    """The keyword options every embedder takes."""

    base_url: str | None
    """The API's address (Ollama, an OpenAI-compatible server)."""
    max_attempts: int
    """Tries per batch for transient errors, retries included (default 3)."""
    backoff_base: float
    """Seconds of the first retry wait, doubled each retry (default 1.0)."""
    timeout: float
    """Seconds one request may take."""
    batch_size: int
    """Texts per request (default: the embedder's ``default_batch_size``)."""
    requests_per_minute: float | None
    """At most this many requests a minute (default: no limit)."""
    concurrency: int
    """At most this many requests at once (default 2)."""
    max_rate_limit_waits: int
    """A batch answered 429 more often than this fails the job (default 20)."""
    throttle: Throttle
    """Share or drive the pacing (tests); built from the two options above when absent."""


@dataclass(frozen=True, slots=True)
class Batch:
    """What one API call returned: one vector per text and the tokens the API counted."""

    vectors: Any
    """A (n, dims) array or a list of n float lists."""
    tokens: int = 0


class Embedder(Retrying):
    """Turns texts into vectors with one model. ``model_id`` names the model for the index
    ("ollama:nomic-embed-text"); ``dims`` is known after the first call (or from the model)."""

    kind: str = "embedder"
    """The prefix of ``model_id`` and of ``serve --embedder`` ("ollama", "openai", ...)."""
    default_batch_size: int = 64
    default_timeout: float = 60.0
    paid: bool = False
    """True when each token costs money (the bridge asks before embedding a whole vault)."""

    def __init__(self, model: str, **options: Unpack[EmbedderOptions]) -> None:
        super().__init__(options.get("max_attempts", 3), options.get("backoff_base", 1.0))
        if not model:
            raise ValueError("An embedder needs a model name")
        self.model = model
        self.base_url = options.get("base_url")
        self.timeout = options.get("timeout", self.default_timeout)
        self.batch_size = max(1, options.get("batch_size", self.default_batch_size))
        self.max_rate_limit_waits = options.get("max_rate_limit_waits", 20)
        self.throttle = options.get("throttle") or Throttle(
            options.get("requests_per_minute"), options.get("concurrency", 2)
        )
        self.dims: int | None = None
        self.tokens_used = 0
        """Tokens the API counted over this embedder's life (0 where it counts none)."""

    @property
    def model_id(self) -> str:
        return f"{self.kind}:{self.model}"

    # -- what subclasses implement -------------------------------------------------------------

    @abstractmethod
    async def _embed_once(self, texts: list[str]) -> Batch:
        """One API call for one batch; may raise SDK exceptions."""

    async def aclose(self) -> None:
        """Release the client's connections."""

    # -- public API ----------------------------------------------------------------------------

    async def embed(self, texts: Sequence[str]) -> Vectors:
        """One unit-length float32 row per text, in order; batches run as the throttle allows."""
        items = list(texts)
        batches = [items[i : i + self.batch_size] for i in range(0, len(items), self.batch_size)]
        try:
            async with asyncio.TaskGroup() as group:  # one batch failing cancels the others
                tasks = [group.create_task(self._embed_batch(batch)) for batch in batches]
        except ExceptionGroup as failed:
            raise failed.exceptions[0] from None  # the first failure, as a plain LLMError
        results = [task.result() for task in tasks]
        if not results:
            return np.zeros((0, self.dims or 0), dtype=np.float32)
        return np.vstack(results)

    async def embed_one(self, text: str) -> Vectors:
        """The vector of one text (a 1-d array)."""
        vectors = await self.embed([text])
        row: Vectors = vectors[0]
        return row

    # -- internals -----------------------------------------------------------------------------

    async def _embed_batch(self, batch: list[str]) -> Vectors:
        """One batch, halved (and later batches made smaller) while it times out."""
        try:
            return await self._embed_paced(batch)
        except LLMError as exc:
            if exc.code != "timeout" or (len(batch) == 1 and self.timeout >= MAX_TIMEOUT):
                raise
        if len(batch) == 1:
            self.timeout = min(MAX_TIMEOUT, self.timeout * 2)
            logger.info("%s timed out on one text; waiting up to %gs.", self.name, self.timeout)
            return await self._embed_batch(batch)
        half = len(batch) // 2
        self.batch_size = min(self.batch_size, half)
        logger.info("%s timed out on %d texts; sending %d at a time.", self.name, len(batch), half)
        return np.vstack(
            [await self._embed_batch(batch[:half]), await self._embed_batch(batch[half:])]
        )

    async def _embed_paced(self, batch: list[str]) -> Vectors:
        waits = 0
        while True:
            async with self.throttle.slot():
                try:
                    result = await self._with_retries(
                        lambda: self._translated(self._embed_once(batch))
                    )
                except LLMError as exc:
                    if exc.code != "rate_limit" or waits >= self.max_rate_limit_waits:
                        raise
                    waits += 1
                    pause = self.throttle.rate_limited(exc.retry_after)
                    logger.info(
                        "%s rate limit reached; slowing the embedding job (pause %.1fs).",
                        self.name,
                        pause,
                    )
                    continue
            self.throttle.succeeded()
            self.tokens_used += result.tokens
            return self._unit_rows(result.vectors, len(batch))

    def _unit_rows(self, raw: Any, expected: int) -> Vectors:
        try:
            vectors = np.asarray(raw, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise self._unreadable("vectors are not lists of numbers") from exc
        if vectors.ndim != 2 or vectors.shape[0] != expected or vectors.shape[1] == 0:
            raise self._unreadable(f"expected {expected} vectors, got shape {vectors.shape}")
        if self.dims is None:
            self.dims = int(vectors.shape[1])
        elif vectors.shape[1] != self.dims:
            raise self._unreadable(f"vectors of {vectors.shape[1]} dimensions, not {self.dims}")
        return normalised(vectors)

    def _unreadable(self, detail: str) -> LLMError:
        return LLMError(
            f"{self.name} sent embeddings that could not be read ({detail}); check that the "
            "model is an embedding model.",
            code="invalid_response",
            provider=self.name,
        )

    def _worth_retrying(self, exc: BaseException) -> bool:
        """Rate limits and timeouts are not retried as they are: the throttle slows the whole job
        down, and a batch that timed out is halved (``_embed_batch``)."""
        if isinstance(exc, LLMError) and exc.code in ("rate_limit", "timeout"):
            return False
        return super()._worth_retrying(exc)


def normalised(vectors: Vectors) -> Vectors:
    """``vectors`` scaled to unit length row by row (all-zero rows stay zero), as float32."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: Vectors = (vectors / norms).astype(np.float32, copy=False)
    return unit


def estimate_tokens(texts: Sequence[str]) -> int:
    """A rough token count before a paid embed: ~4 characters a token for Latin text, one a
    character for CJK and other non-ASCII text (the usual tokenizers split those finely)."""
    total = 0
    for text in texts:
        ascii_chars = sum(1 for ch in text if ch < "\x80")
        total += ascii_chars // 4 + (len(text) - ascii_chars) + 1
    return total
