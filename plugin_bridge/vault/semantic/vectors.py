"""Exact nearest-neighbour search over unit vectors in memory, behind a small interface.

:class:`VectorIndex` is what semantic search needs; :class:`ExactVectorIndex` answers it by
scoring every vector, held once in half precision (usearch's exact search: SIMD kernels for
float16; docs/search.md says up to where that stays fast, from a measurement). An approximate
index can replace it behind the same four methods.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from llm_service import lazy

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from usearch import index as usearch_index

    Vectors = npt.NDArray[np.float32]
    HalfVectors = npt.NDArray[np.float16]
else:
    np = lazy.module("numpy")
    usearch_index = lazy.module("usearch.index")


BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def single_threaded_blas() -> None:
    """Ask numpy's BLAS for one thread (call before numpy is imported; a value the user set
    wins). One query is a matrix-vector product bound by memory bandwidth: extra threads do not
    speed it up, and on a busy machine they made it 16 ms instead of 0.3 ms (docs/search.md)."""
    for name in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(name, "1")


class VectorIndex(Protocol):
    """Unit vectors by key (a chunk hash); scores are cosine similarities."""

    dims: int

    def __len__(self) -> int: ...

    def add(self, keys: Sequence[str], vectors: Vectors) -> None:
        """Insert or replace the vector of each key."""

    def remove(self, keys: Iterable[str]) -> None:
        """Forget these keys (unknown keys are ignored)."""

    def search(
        self, query: Vectors, k: int, allowed: Collection[str] | None = None
    ) -> list[tuple[str, float]]:
        """The ``k`` keys closest to ``query`` (only ``allowed`` ones when given), best first."""

    def get(self, keys: Iterable[str]) -> Vectors:
        """The vectors of the known ``keys`` among these, one row each."""


class ExactVectorIndex:
    """Every vector in one float16 matrix (grown by a quarter, or reserved ahead); thread-safe.
    Half precision halves the memory; a score moves by about 0.001, the ranking by ties."""

    def __init__(self, dims: int) -> None:
        self.dims = dims
        self._matrix: HalfVectors = np.zeros((0, dims), dtype=np.float16)
        self._keys: list[str] = []
        self._rows: dict[str, int] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._keys)

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._keys)

    def add(self, keys: Sequence[str], vectors: Vectors) -> None:
        if len(keys) != len(vectors) or (len(keys) and vectors.shape[1] != self.dims):
            raise ValueError(f"expected {len(keys)} vectors of {self.dims} dimensions")
        with self._lock:
            fits = len(keys) <= len(self._matrix)
            if not self._keys and not fits and len(set(keys)) == len(keys):  # a load: no loop
                self._matrix = np.asarray(vectors, dtype=np.float16)
                self._keys = list(keys)
                self._rows = {key: row for row, key in enumerate(self._keys)}
                return
            for key, vector in zip(keys, vectors, strict=True):
                row = self._rows.get(key)
                if row is None:
                    row = len(self._keys)
                    if row == len(self._matrix):  # grow by a quarter: memory over copies
                        self._grow(max(1024, row + row // 4))
                    self._keys.append(key)
                    self._rows[key] = row
                self._matrix[row] = vector

    def reserve(self, count: int) -> None:
        """Room for ``count`` vectors, allocated now (pages are taken only as rows are written):
        an index that grows to a known size never holds an old and a new matrix at once."""
        with self._lock:
            if count > len(self._matrix):
                self._grow(count)

    def _grow(self, rows: int) -> None:
        grown = np.zeros((rows, self.dims), dtype=np.float16)
        grown[: len(self._keys)] = self._matrix[: len(self._keys)]
        self._matrix = grown

    def remove(self, keys: Iterable[str]) -> None:
        with self._lock:
            for key in keys:
                row = self._rows.pop(key, None)
                if row is None:
                    continue
                last = len(self._keys) - 1
                if row != last:  # move the last row into the hole
                    moved = self._keys[last]
                    self._matrix[row] = self._matrix[last]
                    self._keys[row] = moved
                    self._rows[moved] = row
                self._keys.pop()

    def search(
        self, query: Vectors, k: int, allowed: Collection[str] | None = None
    ) -> list[tuple[str, float]]:
        with self._lock:
            count = len(self._keys)
            if count == 0 or k <= 0:
                return []
            if allowed is None:
                rows = None
                candidates = self._matrix[:count]
            else:
                found = [row for row in map(self._rows.get, allowed) if row is not None]
                rows = np.unique(np.array(found, dtype=np.int64))  # in order, each row once
                if rows.size == 0:
                    return []
                candidates = self._matrix[rows]
            k = min(k, len(candidates))
            query = np.asarray(query, dtype=np.float16)
            best = usearch_index.search(candidates, query, k, "ip", exact=True, threads=1)
            picked = best.keys.astype(np.int64) if rows is None else rows[best.keys]
            keys = self._keys
            return [
                (keys[row], 1.0 - float(distance))
                for row, distance in zip(picked.tolist(), best.distances.tolist(), strict=True)
            ]

    def scored(self, query: Vectors, keys: Iterable[str]) -> list[tuple[str, float]]:
        """The known ``keys`` among these with their cosine to ``query``, best first (an
        approximate search's candidates, ranked again)."""
        with self._lock:
            found = [key for key in keys if key in self._rows]
            rows = [self._rows[key] for key in found]
            vectors = self._matrix[rows].astype(np.float32)
        scores = vectors @ np.asarray(query, dtype=np.float32).reshape(-1)
        order = np.argsort(-scores, kind="stable").tolist()
        return [(found[i], float(scores[i])) for i in order]

    def known(self, keys: Sequence[str]) -> tuple[list[str], Vectors]:
        """The keys among ``keys`` this index holds and their vectors, read at one moment."""
        with self._lock:
            found = [key for key in keys if key in self._rows]
            rows = [self._rows[key] for key in found]
            vectors = np.array(self._matrix[rows], dtype=np.float32).reshape(len(rows), self.dims)
            return found, vectors

    def get(self, keys: Iterable[str]) -> Vectors:
        return self.known(list(keys))[1]
