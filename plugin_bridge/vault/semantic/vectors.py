"""Exact nearest-neighbour search over unit vectors in memory, behind a small interface.

:class:`VectorIndex` is what semantic search needs; :class:`ExactVectorIndex` answers it with one
numpy matrix product over every vector (docs/search.md says up to where that stays fast, from a
measurement). An approximate index can replace it behind the same four methods.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]


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
    """Every vector in one float32 matrix (grown by doubling); thread-safe."""

    def __init__(self, dims: int) -> None:
        import numpy as np

        self.dims = dims
        self._matrix: Vectors = np.zeros((0, dims), dtype=np.float32)
        self._keys: list[str] = []
        self._rows: dict[str, int] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._keys)

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._keys)

    def add(self, keys: Sequence[str], vectors: Vectors) -> None:
        import numpy as np

        if len(keys) != len(vectors) or (len(keys) and vectors.shape[1] != self.dims):
            raise ValueError(f"expected {len(keys)} vectors of {self.dims} dimensions")
        with self._lock:
            if not self._keys and len(set(keys)) == len(keys):  # a load: no loop, no copy
                self._matrix = np.asarray(vectors, dtype=np.float32)
                self._keys = list(keys)
                self._rows = {key: row for row, key in enumerate(self._keys)}
                return
            for key, vector in zip(keys, vectors, strict=True):
                row = self._rows.get(key)
                if row is None:
                    row = len(self._keys)
                    if row == len(self._matrix):  # grow by a quarter: memory over copies
                        grown = np.zeros((max(1024, row + row // 4), self.dims), dtype=np.float32)
                        grown[:row] = self._matrix[:row]
                        self._matrix = grown
                    self._keys.append(key)
                    self._rows[key] = row
                self._matrix[row] = vector

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
        import numpy as np

        with self._lock:
            count = len(self._keys)
            if count == 0 or k <= 0:
                return []
            query = query.astype(np.float32, copy=False)
            if allowed is None:
                rows = None
                scores = self._matrix[:count] @ query
            else:
                found = (row for row in map(self._rows.get, allowed) if row is not None)
                rows = np.fromiter(found, dtype=np.int64)
                if rows.size == 0:
                    return []
                # a few rows: score those alone; many: one pass over the matrix is cheaper
                # than gathering their vectors (565,000 chunks: 35 ms for all of them)
                if rows.size * 4 < count:
                    scores = self._matrix[rows] @ query
                else:
                    scores = (self._matrix[:count] @ query)[rows]
            k = min(k, len(scores))
            top = np.argpartition(-scores, k - 1)[:k]
            top = top[np.argsort(-scores[top], kind="stable")]
            keys = self._keys
            picked = top if rows is None else rows[top]
            return [
                (keys[row], float(score)) for row, score in zip(picked, scores[top], strict=True)
            ]

    def known(self, keys: Sequence[str]) -> tuple[list[str], Vectors]:
        """The keys among ``keys`` this index holds and their vectors, read at one moment."""
        import numpy as np

        with self._lock:
            found = [key for key in keys if key in self._rows]
            rows = [self._rows[key] for key in found]
            vectors = np.array(self._matrix[rows], dtype=np.float32).reshape(len(rows), self.dims)
            return found, vectors

    def get(self, keys: Iterable[str]) -> Vectors:
        return self.known(list(keys))[1]
