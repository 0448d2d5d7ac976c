"""Vectors for the chunks of one vault index, kept current in the background.

The index's worker writes chunks (``chunks.py``) with each note; this job embeds every chunk hash
that has no vector for the configured model yet, in batches, storing them as BLOBs in the same
SQLite file (its own connection, WAL) and in an in-memory :class:`ExactVectorIndex`, with an
approximate (HNSW) index beside it from ``ann_threshold`` vectors on (``ann.py``). A restart,
a move or a sync that only touches mtimes finds every hash embedded and sends nothing.

Searches use the *serving* model: the configured one once all its vectors exist. Switching
models (``switch``) builds the new model's vectors while the old ones keep serving, then swaps
and drops the old vectors; until a model is ready, searches answer lexically.

The job's reads and writes of the store and the vectors run on its own door (one thread,
``door.py``), so the event loop never waits on the vectors' locks; searches read the vectors on
the index's read door (:meth:`nearest_chunks`).

Paid embedders first estimate tokens and cost: over ``confirm_over_usd`` the job waits for
``approve()`` (``index/confirmEmbedding`` on the wire) and reports the estimate in progress.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import importlib
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from llm_service.door import Door
from llm_service.embedders import Embedder, estimate_tokens
from llm_service.embedders.base import normalised
from llm_service.errors import LLMError
from llm_service.pricing import price_for
from plugin_bridge.vault.semantic.ann import (
    ANN_THRESHOLD,
    EXACT_FILTER,
    WIDEN_FILTER,
    ScalingVectorIndex,
)
from plugin_bridge.vault.semantic.vector_store import VectorStore
from plugin_bridge.vault.semantic.vectors import ExactVectorIndex

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from plugin_bridge.vault.lexical.index import SearchIndex
    from plugin_bridge.vault.lexical.query import Query
    from plugin_bridge.vault.lexical.reader import IndexReader

logger = logging.getLogger(__name__)

_AHEAD = ThreadPoolExecutor(1, thread_name_prefix="vector-search")
"""Runs a graph search while the searching thread reads the words (:meth:`search_ahead`)."""

Phase = Literal["loading", "embedding", "confirm", "ready", "error"]
TEXTS_PER_STEP: Final = 256
"""Chunks embedded and stored per step (one progress notification each)."""
EMBED_RETRY_SECONDS: Final = 60.0
"""After a failed step, the job tries again this much later (or at the next change)."""
QUERY_CACHE: Final = 256


@dataclass(frozen=True)
class Progress:
    """What the embedding job is doing: ``done`` of ``total`` chunks in this phase."""

    phase: Phase
    done: int
    total: int
    model: str
    estimated_tokens: int | None = None
    estimated_usd: float | None = None
    error: str | None = None


@dataclass(frozen=True)
class ChunkHit:
    """A chunk close to the query, with its note."""

    note_id: int
    path: str
    title: str
    heading: str
    text: str
    score: float
    seq: int = 0
    """The chunk's place in its note (a PDF's page - 1)."""


class SemanticIndex:
    """Embeds the chunks of ``index`` with ``embedder`` and answers vector searches."""

    def __init__(
        self,
        index: SearchIndex,
        embedder: Embedder,
        *,
        on_progress: Callable[[Progress], None] | None = None,
        on_spend: Callable[[str, int], None] | None = None,
        confirm_over_usd: float = 0.50,
        texts_per_step: int = TEXTS_PER_STEP,
        ann_threshold: int = ANN_THRESHOLD,
    ) -> None:
        self.index = index
        self.on_progress = on_progress
        self.on_spend = on_spend
        """Called with (model name, tokens) after each paid batch."""
        self.confirm_over_usd = confirm_over_usd
        self.texts_per_step = texts_per_step
        self.progress = Progress("loading", 0, 0, embedder.model_id)
        self._target = embedder
        self.ann_threshold = ann_threshold
        """Vectors from which an approximate index answers unfiltered searches."""
        self._target_vectors: ScalingVectorIndex | None = None
        self._expected = 0
        """The vectors the running job will hold when done (room is reserved for them)."""
        self._serving: tuple[Embedder, ScalingVectorIndex] | None = None
        self._approved: set[str] = set()
        self._collected = False
        """True once this run dropped the vectors of chunks gone (see VectorStore.finish)."""
        self._store = VectorStore(index.db_path)
        self._door = Door("vault-embedder")
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._query_cache: dict[tuple[str, str], npt.NDArray[np.float32]] = {}
        self.idle = asyncio.Event()
        """Set whenever the job has nothing left to embed (or waits for approval)."""

    # -- life cycle ----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the background job (after the index's first scan)."""
        if self._task is not None:
            return
        self._loop = asyncio.get_running_loop()
        await self._door.run(self._store.open)
        self.index.add_listener(self._changed)
        self._task = asyncio.create_task(self._run(), name="embedding-job")
        # numpy takes 0.1-0.3 s to import: do it while the index scans, not after
        threading.Thread(target=importlib.import_module, args=("numpy",), daemon=True).start()

    async def close(self) -> None:
        self.index.remove_listener(self._changed)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._door.run(self._shut)
        self._door.close()
        await self._target.aclose()
        if self._serving is not None and self._serving[0] is not self._target:
            await self._serving[0].aclose()

    def _shut(self) -> None:
        self._store.close()
        found = [self._target_vectors] if self._target_vectors is not None else []
        found += [self._serving[1]] if self._serving is not None else []
        for vectors in {id(v): v for v in found}.values():
            vectors.save()

    def _changed(self) -> None:
        """From the index worker's thread: chunks changed, look for new work."""
        if self._loop is not None and not self._loop.is_closed():
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._wake.set)

    # -- state ---------------------------------------------------------------------------------

    @property
    def model_id(self) -> str:
        """The configured (target) model."""
        return self._target.model_id

    @property
    def ready(self) -> bool:
        """True when a model's vectors are complete and searches can use them."""
        return self._serving is not None

    @property
    def chunks_embedded(self) -> int:
        """Vectors of the configured model held now."""
        return len(self._target_vectors) if self._target_vectors is not None else 0

    def approve(self) -> None:
        """Allow the paid embedding the job is waiting on (that job only: a later one over the
        limit asks again)."""
        self._approved.add(self._target.model_id)
        self._wake.set()

    async def wait_until_idle(self, timeout: float = 30.0) -> None:  # noqa: ASYNC109
        """Return once the index is scanned and every chunk has a vector (or the job waits for
        approval or after an error); TimeoutError otherwise."""
        deadline = time.monotonic() + timeout
        while not (
            self.index.scanned
            and self.idle.is_set()
            and not self._wake.is_set()
            and (self.ready or self.progress.phase in ("confirm", "error"))
        ):
            if time.monotonic() > deadline:
                raise TimeoutError(f"Embedding is still busy after {timeout:g} s.")
            await asyncio.sleep(0.01)

    async def switch(self, embedder: Embedder) -> None:
        """Build ``embedder``'s vectors in the background; the current ones serve until then."""
        if embedder.model_id == self._target.model_id:
            if embedder is not self._target:
                await embedder.aclose()
            return
        if self._serving is None or self._serving[0] is not self._target:
            await self._target.aclose()
        self._target = embedder
        self._target_vectors = None
        self._emit(Progress("loading", 0, 0, embedder.model_id))
        self._wake.set()

    # -- the job -------------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            self.idle.clear()
            try:
                await self._catch_up()
            except LLMError as exc:
                logger.warning("Embedding stopped: %s It resumes at the next change.", exc)
                self._emit(Progress("error", 0, 0, self.model_id, error=str(exc)))
                assert self._loop is not None
                self._loop.call_later(EMBED_RETRY_SECONDS, self._wake.set)
            except sqlite3.Error as exc:
                logger.warning("Storing vectors failed (%s); retrying at the next change.", exc)
            except Exception as exc:  # a bug must not end the job silently
                logger.exception("The embedding job failed; it resumes at the next change.")
                self._emit(Progress("error", 0, 0, self.model_id, error=type(exc).__name__))
            if not self._wake.is_set():
                self.idle.set()
            await self._wake.wait()

    async def _catch_up(self) -> None:
        if not self.index.scanned:  # the scan goes first (it answers searches); its end wakes us
            return
        target = self._target
        pending = await self._door.run(self._prepare, target)
        if pending and not await self._confirmed(target, pending):
            return
        done = 0
        for start in range(0, len(pending), self.texts_per_step):
            if target is not self._target:
                return  # switched meanwhile
            self._emit(Progress("embedding", done, len(pending), target.model_id))
            requested = pending[start : start + self.texts_per_step]
            step = await self._door.run(self._store.texts, requested)
            done += len(requested)
            if not step:  # those chunks changed meanwhile
                continue
            used = target.tokens_used
            vectors = await target.embed([text for _, text in step])
            await self._door.run(self._keep, target, [key for key, _ in step], vectors)
            if target.paid and self.on_spend is not None:
                tokens = target.tokens_used - used or estimate_tokens([t for _, t in step])
                self.on_spend(target.model, tokens)
        if target is not self._target:
            return
        self._approved.discard(target.model_id)  # an approval covers one job, not the next
        ready = await self._door.run(self._finish, target)
        if self._serving is not None and self._serving[0] is not target:
            await self._serving[0].aclose()
        self._serving = (target, ready)
        self._query_cache.clear()
        embedded = len(ready)
        self._emit(Progress("ready", embedded, embedded, target.model_id))

    # -- on the job's door -----------------------------------------------------------------------

    def _prepare(self, target: Embedder) -> list[str]:
        """The target's stored vectors loaded (once), room for the job; the hashes to embed."""
        if self._target_vectors is None:
            loaded = self._store.load(target.model_id)
            if loaded is not None:
                self._target_vectors = self._scaling(loaded, target.model_id)
                self._target_vectors.start()
        pending = self._store.pending(target.model_id)
        held = len(self._target_vectors) if self._target_vectors is not None else 0
        self._expected = held + len(pending)
        if self._target_vectors is not None:
            self._target_vectors.reserve(self._expected)
        return pending

    def _keep(self, target: Embedder, hashes: list[str], vectors: npt.NDArray[np.float32]) -> None:
        """A step's vectors stored and added to the target's index."""
        self._store.add(target.model_id, hashes, vectors)
        self._remember(target, hashes, vectors)

    def _finish(self, target: Embedder) -> ScalingVectorIndex:
        """The vectors of chunks gone dropped; the target's complete index."""
        orphans = self._store.finish(target.model_id, drop_orphans=not self._collected)
        self._collected = True
        if self._target_vectors is None:  # nothing to embed yet: an empty index of any width
            self._target_vectors = self._scaling(
                ExactVectorIndex(target.dims or 0), target.model_id
            )
        self._target_vectors.remove(orphans)
        return self._target_vectors

    def _remember(
        self, target: Embedder, hashes: list[str], vectors: npt.NDArray[np.float32]
    ) -> None:
        index = self._target_vectors
        if index is None or index.dims != vectors.shape[1]:
            emptied = index is None or len(index) == 0
            exact = ExactVectorIndex(int(vectors.shape[1]))
            exact.reserve(self._expected)  # the job's total: no growth, no second matrix
            index = self._target_vectors = self._scaling(exact, target.model_id)
            if self._serving is not None and self._serving[0] is target:
                # an empty index just gets its width; otherwise the old vectors are void
                self._serving = (target, index) if emptied else None
        index.add(hashes, vectors)

    def _scaling(self, exact: ExactVectorIndex, model: str) -> ScalingVectorIndex:
        """``exact`` with an approximate index past the threshold, saved beside the database."""
        name = hashlib.sha256(model.encode()).hexdigest()[:16]
        path = self.index.db_path.with_name(f"vectors-{name}.usearch")
        for earlier in (path.with_suffix(".hnsw"), path.with_suffix(".hnsw.keys")):
            earlier.unlink(missing_ok=True)  # hnswlib's graph, before usearch
        return ScalingVectorIndex(exact, threshold=self.ann_threshold, path=path)

    async def _confirmed(self, target: Embedder, pending: Sequence[str]) -> bool:
        if not target.paid or target.model_id in self._approved:
            return True

        tokens = 0
        for start in range(0, len(pending), self.texts_per_step):
            step = await self._door.run(
                self._store.texts, pending[start : start + self.texts_per_step]
            )
            tokens += estimate_tokens([text for _, text in step])
        price = price_for(target.model)
        usd = None if price is None else tokens * price.input / 1_000_000
        if usd is not None and usd <= self.confirm_over_usd:
            return True
        logger.warning(
            "Embedding %d chunks with %s needs about %d tokens (%s); waiting for approval.",
            len(pending),
            target.model_id,
            tokens,
            "price unknown" if usd is None else f"${usd:.2f}",
        )
        self._emit(
            Progress(
                "confirm",
                0,
                len(pending),
                target.model_id,
                estimated_tokens=tokens,
                estimated_usd=usd,
            )
        )
        return False

    def _emit(self, progress: Progress) -> None:
        self.progress = progress
        if self.on_progress is not None:
            self.on_progress(progress)

    # -- searching -----------------------------------------------------------------------------

    async def query_vector(self, text: str) -> npt.NDArray[np.float32] | None:
        """``text`` embedded by the serving model (cached), or None when none is ready."""
        serving = self._serving
        if serving is None:
            return None
        key = (serving[0].model_id, text)
        vector = self._query_cache.get(key)
        if vector is None:
            vector = await serving[0].embed_one(text)
            if len(self._query_cache) >= QUERY_CACHE:
                self._query_cache.pop(next(iter(self._query_cache)))
            self._query_cache[key] = vector
        return vector

    def vector_index(self) -> ScalingVectorIndex | None:
        """The vectors searches use now (None while none are ready)."""
        return self._serving[1] if self._serving is not None else None

    def search_ahead(
        self, vector: npt.NDArray[np.float32], k: int
    ) -> Future[list[tuple[str, float]]] | None:
        """Start the graph's unfiltered search for the ``k`` keys nearest ``vector`` in a
        thread of its own, to pass to :meth:`nearest_chunks` once the caller has searched the
        words meanwhile: the graph's search lets go of the GIL, and at 100,000 notes it is
        about a third of a hybrid search. None while the graph does not answer (exact search
        below its threshold is quick)."""
        serving = self._serving
        if serving is None or not serving[1].approximate:
            return None
        return _AHEAD.submit(serving[1].search, vector, k)

    def nearest_chunks(
        self,
        reader: IndexReader,
        vector: npt.NDArray[np.float32],
        k: int,
        within: Query | None = None,
        ahead: Future[list[tuple[str, float]]] | None = None,
    ) -> list[ChunkHit]:
        """The chunks closest to ``vector`` (only of notes that pass the filters of ``within``
        when given), best first, read by ``reader`` (on the index's read door); ``ahead``:
        the same unfiltered search, started by :meth:`search_ahead`."""
        serving = self._serving
        if serving is None:
            return []
        vectors = serving[1]
        if within is None:
            found = ahead.result() if ahead is not None else vectors.search(vector, k)
        else:  # a large filter: the graph's nearest that pass; else exactly among them all
            found = None
            if vectors.approximate and _passes_over(reader, within, EXACT_FILTER):
                passing = functools.partial(reader.filtered_among, within)
                large = functools.partial(_passes_over, reader, within, WIDEN_FILTER)
                found = vectors.search_passing(vector, k, passing, large)
            if found is None:
                found = vectors.search(vector, k, reader.filtered_chunk_hashes(within))
        if not found:
            return []
        scores = dict(found)
        hits = [
            ChunkHit(
                row.note_id, row.path, row.title, row.heading, row.text, scores[row.hash], row.seq
            )
            for row in reader.chunks(list(scores))
        ]
        hits.sort(key=lambda hit: (-hit.score, hit.path))
        return hits

    def note_vector(self, note_hashes: Sequence[str]) -> npt.NDArray[np.float32] | None:
        """The mean of a note's chunk vectors, unit length; None when it has none yet."""
        serving = self._serving
        if serving is None:
            return None

        rows = serving[1].get(note_hashes)
        if len(rows) == 0:
            return None
        mean: npt.NDArray[np.float32] = normalised(rows.mean(axis=0, keepdims=True))[0]
        return mean


def _passes_over(reader: IndexReader, within: Query, limit: int) -> bool:
    """True when the notes that pass ``within``'s filters hold more than ``limit`` chunks."""
    return reader.filtered_chunk_count(within, limit + 1) > limit
