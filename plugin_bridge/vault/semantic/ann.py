"""Approximate nearest neighbours past a size: an HNSW graph (usearch) beside the exact index.

Below ``threshold`` vectors every search is exact (:class:`ExactVectorIndex`). From there on an
HNSW graph answers unfiltered searches once it is built: in a background thread, reading the
exact index a batch at a time, while the exact index keeps answering; changes made meanwhile
are replayed before it takes over. Edits and deletes then update both. The exact matrix stays
(``get``, filtered searches and the small sizes use it, in half precision); the graph holds its
own copy in 8 bits (half the memory of float16) and its best :data:`RERANK` candidates are scored
again from the exact matrix, so a search answers with exact scores in the exact order. A filtered
search takes the graph's nearest that pass the filter when enough do, asking it for more when a
large filter's keys lie further out (the caller searches a small filter exactly at once). The
graph is saved beside the index file with its keys, and is loaded again at the next start (what
changed in between is applied to it); one that lost more than a fifth of its entries to deletes
and edits, or of another precision, is rebuilt in the background. docs/search.md has the
measurements behind the threshold, the library and these settings.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from llm_service import lazy
from plugin_bridge.vault.semantic.vectors import ExactVectorIndex

if TYPE_CHECKING:
    import numpy as np
    from usearch import index as usearch_index

    from plugin_bridge.vault.semantic.vectors import Vectors
else:
    np = lazy.module("numpy")
    usearch_index = lazy.module("usearch.index")

logger = logging.getLogger(__name__)

ANN_THRESHOLD: Final = 300_000
"""Vectors from which the graph answers (``vector_ann_threshold`` in the settings)."""
CONNECTIVITY: Final = 16
EXPANSION_ADD: Final = 128
EXPANSION_SEARCH: Final = 4096
"""``ef`` at search time: the recall/speed trade (docs/search.md: recall@10 1.000 at 565,601
chunks of the 100,000-note benchmark vault, where 256 gave 0.78; 6 ms of CPU a query)."""
PRECISION: Final = "i8"
"""How the graph stores its vectors: a quarter of float32's memory (0.38 against 0.63 GB at
565,601 chunks for float16); the re-rank from the exact matrix gives back the recall."""
RERANK: Final = 100
"""Candidates taken from the graph, at least, and scored exactly before the best k are kept."""
REBUILD_SHARE: Final = 0.2
"""Deleted entries, as a share of the graph, that make it rebuild in the background."""
THREADS: Final = 1
"""The build shares the machine with the index and the user's apps: one core; a search on
one thread too (usearch's default, every core, made each query start threads)."""
BUILD_BATCH: Final = 10_000
"""Vectors copied from the exact index at a time while the graph is built."""
FILTER_CANDIDATES: Final = 8
"""A filtered search asks the graph for this many times the keys wanted, then filters."""
FILTER_WIDENING: Final = 4
"""When too few of the graph's candidates pass a filter, it is asked for this many times as
many (the new ones are checked), while that stays within :data:`FILTER_WIDEST`."""
FILTER_WIDEST: Final = 0.25
"""The largest share of the vectors a filtered search asks the graph for: past it, a search
of the graph costs more than scoring what the filter passes (docs/benchmarks.md)."""
EXACT_FILTER: Final = 10_000
"""A filter passing at most this many chunks is searched exactly among them: scoring them
costs less than the graph's search and checking its candidates (docs/benchmarks.md)."""
WIDEN_FILTER: Final = 40_000
"""A filter passing more chunks than this is worth asking the graph for more candidates when
its first ones pass too few; below, scoring what the filter passes costs less."""


class ScalingVectorIndex:
    """A :class:`~plugin_bridge.vault.semantic.vectors.VectorIndex`: exact search, and an HNSW
    graph for unfiltered searches once there are ``threshold`` vectors; thread-safe."""

    def __init__(
        self, exact: ExactVectorIndex, *, threshold: int = ANN_THRESHOLD, path: Path | None = None
    ) -> None:
        self.exact = exact
        self.dims = exact.dims
        self.threshold = threshold
        self.path = path
        """Where the graph is saved (``path`` and ``path.keys``); None: never saved."""
        self.loaded = False
        """True when the graph came from ``path`` at start (not built again)."""
        self._graph: Any = None
        self._ids: dict[str, int] = {}
        self._names: list[str] = []
        """The key of each graph number ("" once removed): a list, not a second dict."""
        self._deleted = 0
        self._dirty = False
        self._log: list[Sequence[str]] | None = None
        """The keys added, edited or removed while a graph is built (their vectors are read
        from the exact index when replayed: a copy of each batch would be held meanwhile)."""
        self._lock = threading.RLock()
        self._builder: threading.Thread | None = None
        self.built = threading.Event()
        """Set once a graph answers and is saved (tests and benchmarks wait on it)."""
        self.build_seconds = 0.0
        """How long the last build took (benchmarks report it)."""

    # -- the VectorIndex interface -------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.exact)

    def keys(self) -> list[str]:
        return self.exact.keys()

    @property
    def approximate(self) -> bool:
        """True when unfiltered searches use the graph."""
        return self._graph is not None and len(self.exact) >= self.threshold

    def add(self, keys: Sequence[str], vectors: Vectors) -> None:
        self.exact.add(keys, vectors)
        with self._lock:
            if self._log is not None:
                self._log.append(list(keys))
            if self._graph is not None:
                self._graph_add(keys, vectors)
        self._maybe_build()

    def remove(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        self.exact.remove(keys)
        with self._lock:
            if self._log is not None:
                self._log.append(keys)
            if self._graph is not None:
                self._graph_remove(keys)
        self._maybe_build()

    def search(
        self, query: Vectors, k: int, allowed: Collection[str] | None = None
    ) -> list[tuple[str, float]]:
        if allowed is not None or not self.approximate or k <= 0:
            return self.exact.search(query, k, allowed)

        with self._lock:
            k = min(k, len(self._ids))
            if k == 0:
                return []
            keys = self._keys(self._search(query, max(k, RERANK), EXPANSION_SEARCH))
        return self.exact.scored(query, keys)[:k]

    def search_passing(
        self,
        query: Vectors,
        k: int,
        passing: Callable[[list[str]], Collection[str]],
        widen: Callable[[], bool] | None = None,
    ) -> list[tuple[str, float]] | None:
        """The ``k`` keys closest to ``query`` among those ``passing`` keeps (it is given
        candidates, best first), from the graph: as many of its nearest as a search visits
        anyway (:data:`EXPANSION_SEARCH`, at least :data:`FILTER_CANDIDATES` × ``k``),
        filtered; while fewer than ``k`` pass and ``widen`` (asked once, then) says the filter
        is worth it, :data:`FILTER_WIDENING` times as many, up to :data:`FILTER_WIDEST` of the
        vectors (a filter's notes may all lie past the nearest few thousand: a folder in
        another language). None when the graph does not answer or too few pass even then
        (search exactly among what passes instead). A filter that keeps a good share of the
        vault is answered without listing what it keeps."""
        if not self.approximate or k <= 0:
            return None
        hits: list[tuple[str, float]] = []
        checked: set[str] = set()
        widened = False
        wanted = max(k * FILTER_CANDIDATES, EXPANSION_SEARCH)
        while True:
            with self._lock:
                total = len(self._ids)
                keys = self._keys(self._search(query, min(wanted, total), min(wanted, total)))
            fresh = [key for key in keys if key not in checked]  # a wider search finds them again
            checked.update(fresh)
            start, step = 0, k * FILTER_CANDIDATES  # the best first: often enough of them pass
            while start < len(fresh):
                batch = fresh[start : start + step]
                kept = passing(batch)
                hits += self.exact.scored(query, [key for key in batch if key in kept])
                if len(hits) >= k:
                    hits.sort(key=lambda hit: -hit[1])
                    return hits[:k]
                start, step = start + step, step * 2
            wanted *= FILTER_WIDENING
            if wanted > FILTER_WIDEST * total:
                return None
            if not widened and (widen is None or not widen()):
                return None
            widened = True

    def _search(self, query: Vectors, k: int, expansion: int) -> Any:
        graph = self._graph
        graph.expansion_search = expansion
        return graph.search(np.asarray(query, dtype=np.float32), k, threads=THREADS)

    def _keys(self, found: Any) -> list[str]:
        names = self._names
        return [names[number] for number in found.keys.tolist() if names[number]]

    def get(self, keys: Iterable[str]) -> Vectors:
        return self.exact.get(keys)

    def reserve(self, count: int) -> None:
        """Room for ``count`` vectors in the exact index (see ExactVectorIndex.reserve)."""
        self.exact.reserve(count)

    # -- life cycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Load the saved graph (applying what changed since) or build one when big enough."""
        if self.path is not None and len(self.exact) >= self.threshold:
            with contextlib.suppress(FileNotFoundError):
                self._load(self.path)
        self._maybe_build()

    def save(self) -> None:
        """Write the graph and its keys to ``path`` (atomically), if it changed."""
        with self._lock:
            if self.path is None or self._graph is None or not self._dirty:
                return
            graph, names = self._graph, self._names
            temporary = self.path.with_name(self.path.name + ".tmp")
            graph.save(str(temporary))
            keys = temporary.with_name(temporary.name + ".keys")
            keys.write_text("\n".join(names), encoding="utf-8")
            os.replace(keys, self.path.with_name(self.path.name + ".keys"))
            os.replace(temporary, self.path)
            self._dirty = False

    def wait_until_built(self, timeout: float) -> bool:
        """True once a graph answers (or the index is below the threshold)."""
        if len(self.exact) < self.threshold:
            return True
        return self.built.wait(timeout)

    # -- internals -----------------------------------------------------------------------------

    def _new_graph(self) -> Any:
        return usearch_index.Index(
            ndim=self.dims,
            metric="ip",
            dtype=PRECISION,
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )

    def _graph_add(self, keys: Sequence[str], vectors: Vectors) -> None:
        replaced = [key for key in keys if key in self._ids]
        if replaced:
            self._graph_remove(replaced)
        if not len(keys):
            return
        ids = np.arange(len(self._names), len(self._names) + len(keys), dtype=np.uint64)
        self._ids.update(zip(keys, ids.tolist(), strict=True))
        self._names += keys
        self._graph.add(ids, np.asarray(vectors, dtype=np.float32), threads=THREADS)
        self._dirty = True

    def _graph_remove(self, keys: Iterable[str]) -> None:
        gone = [self._ids.pop(key) for key in keys if key in self._ids]
        for number in gone:
            self._names[number] = ""
        if gone:
            self._graph.remove(np.array(gone, dtype=np.uint64))
        self._deleted += len(gone)
        self._dirty = self._dirty or bool(gone)

    def _maybe_build(self) -> None:
        with self._lock:
            worn = self._graph is not None and self._deleted > REBUILD_SHARE * max(
                1, len(self._ids)
            )
            wanted = len(self.exact) >= self.threshold and (self._graph is None or worn)
            if not wanted or self._builder is not None:
                return
            self._log = []
            self._builder = threading.Thread(target=self._build, name="ann-build", daemon=True)
            self._builder.start()

    def _build(self) -> None:
        started = time.perf_counter()
        try:
            graph, ids, names = self._fresh(self.exact.keys())
            with self._lock:
                previous = (self._graph, self._ids, self._names, self._deleted)
                self._graph, self._ids, self._names, self._deleted = graph, ids, names, 0
                try:
                    self._replay(self._log or [])
                except Exception:
                    self._graph, self._ids, self._names, self._deleted = previous
                    raise
                self._dirty = True
            self.build_seconds = time.perf_counter() - started
            logger.info(
                "Built the approximate vector index over %d vectors in %.1f s.",
                len(names),
                self.build_seconds,
            )
            self.save()
            self.built.set()
        except Exception:
            logger.exception("Building the approximate vector index failed; exact search stays.")
        finally:
            with self._lock:
                self._log = None
                self._builder = None

    def _replay(self, log: Iterable[Sequence[str]]) -> None:
        """The keys changed while the graph was built, as the exact index holds them now
        (each once, :data:`BUILD_BATCH` at a time)."""
        changed = list(dict.fromkeys(key for keys in log for key in keys))
        for start in range(0, len(changed), BUILD_BATCH):
            batch = changed[start : start + BUILD_BATCH]
            found, vectors = self.exact.known(batch)
            held = set(found)
            self._graph_remove([key for key in batch if key not in held])
            self._graph_add(found, vectors)

    def _fresh(self, keys: list[str]) -> tuple[Any, dict[str, int], list[str]]:
        """A graph of ``keys``' vectors, read from the exact index :data:`BUILD_BATCH` at a
        time (a copy of them all would hold every vector a third time). A key removed or
        changed meanwhile is read as it is now or skipped; the replayed log settles it."""
        graph = self._new_graph()
        ids: dict[str, int] = {}
        names: list[str] = []
        for start in range(0, len(keys), BUILD_BATCH):
            found, vectors = self.exact.known(keys[start : start + BUILD_BATCH])
            if found:
                labels = np.arange(len(names), len(names) + len(found), dtype=np.uint64)
                graph.add(labels, vectors, threads=THREADS)
                ids.update(zip(found, labels.tolist(), strict=True))
                names += found
        return graph, ids, names

    def _load(self, path: Path) -> None:
        """The saved graph, brought up to date with the exact index (rebuilt when too stale)."""
        names = path.with_name(path.name + ".keys").read_text(encoding="utf-8").split("\n")
        graph = self._new_graph()
        precision = graph.dtype
        try:
            graph.load(str(path))
        except (RuntimeError, ValueError) as exc:  # another version's file, a torn write
            logger.info("The saved approximate vector index is unreadable (%s); rebuilding.", exc)
            return
        if graph.dtype != precision:  # saved by a version that stored float16
            logger.info("The saved approximate vector index is %s; rebuilding it.", graph.dtype)
            return
        saved = {key: number for number, key in enumerate(names) if key}
        current = set(self.exact.keys())
        missing = [key for key in current if key not in saved]
        stale = [key for key in saved if key not in current]
        if len(missing) + len(stale) > REBUILD_SHARE * max(1, len(current)):
            logger.info("The saved approximate vector index is out of date; rebuilding it.")
            return
        with self._lock:
            self._graph, self._ids = graph, saved
            self._names = names
            self._deleted = len(names) - len(saved)
            if stale:
                self._graph_remove(stale)
            if missing:
                self._graph_add(missing, self.exact.get(missing))
            self.loaded = True
            self.built.set()
        logger.info("Loaded the approximate vector index (%d vectors).", len(saved))
