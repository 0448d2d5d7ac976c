"""The approximate vector index: recall against exact search on a generated set, the
threshold, filtered searches, a build racing with edits, and persistence with edits and
deletes across a restart."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from usearch import index as usearch_index

from plugin_bridge.vault.semantic import ann
from plugin_bridge.vault.semantic.ann import ScalingVectorIndex
from plugin_bridge.vault.semantic.vectors import ExactVectorIndex

DIMS = 32


def clustered(count: int, seed: int) -> np.ndarray:
    """Unit vectors around 40 centres: structured like embeddings, not uniform noise."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, DIMS)).astype(np.float32)
    vectors = centres[rng.integers(0, 40, count)] + 0.4 * rng.standard_normal((count, DIMS))
    vectors = vectors.astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def built(
    keys: list[str], vectors: np.ndarray, threshold: int, path: Path | None = None
) -> ScalingVectorIndex:
    exact = ExactVectorIndex(DIMS)
    exact.add(keys, vectors)
    index = ScalingVectorIndex(exact, threshold=threshold, path=path)
    index.start()
    assert index.wait_until_built(60)
    return index


def test_recall_at_10_against_exact_search_is_at_least_098() -> None:
    vectors = clustered(4000, seed=1)
    keys = [f"k{i}" for i in range(len(vectors))]
    index = built(keys, vectors, threshold=1000)
    assert index.approximate
    queries = clustered(60, seed=2)
    recalls = []
    for query in queries:
        approximate = {key for key, _ in index.search(query, 10)}
        exact = {key for key, _ in index.exact.search(query, 10)}
        recalls.append(len(approximate & exact) / 10)
    assert np.mean(recalls) >= 0.98
    top, score = index.search(vectors[7], 1)[0]
    assert top == "k7" and score == pytest.approx(1.0, abs=1e-3)  # half precision


def test_below_the_threshold_and_with_a_filter_search_stays_exact() -> None:
    vectors = clustered(500, seed=3)
    keys = [f"k{i}" for i in range(len(vectors))]
    small = built(keys, vectors, threshold=1000)
    assert not small.approximate and small.search(vectors[3], 1)[0][0] == "k3"
    big = built(keys, vectors, threshold=100)
    assert big.approximate
    assert [key for key, _ in big.search(vectors[3], 5, allowed={"k9", "k10"})] in (
        ["k9", "k10"],
        ["k10", "k9"],
    )


def test_a_graph_built_while_vectors_change_holds_the_current_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The graph reads the exact index a batch at a time while edits go on: keys removed
    (a removal moves the last row into the hole), added or replaced meanwhile end up as they
    are now, whatever the build had read."""
    monkeypatch.setattr(ann, "BUILD_BATCH", 50)
    vectors = clustered(3000, seed=5)
    keys = [f"k{i}" for i in range(len(vectors))]
    index = ScalingVectorIndex(ExactVectorIndex(DIMS), threshold=2000)
    index.add(keys[:2000], vectors[:2000])  # at the threshold: the build starts
    removed = keys[0:600:3]
    index.remove(removed)
    index.add(keys[2000:], vectors[2000:])
    replaced = clustered(200, seed=6)
    index.add(keys[1:600:3], replaced)
    assert index.wait_until_built(60) and index.approximate
    for number in range(1, 600, 3):
        vector = replaced[number // 3]
        assert index.search(vector, 1)[0][0] == f"k{number}"
    for number in range(2000, 3000, 97):
        assert index.search(vectors[number], 1)[0][0] == f"k{number}"
    gone = set(removed)
    for number in range(0, 600, 3):
        assert not gone & {key for key, _ in index.search(vectors[number], 10)}


def test_edits_and_deletes_persist_and_apply_across_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "vectors.usearch"
    vectors = clustered(2000, seed=4)
    keys = [f"k{i}" for i in range(len(vectors))]
    index = built(keys, vectors, threshold=500, path=path)
    assert path.is_file() and not index.loaded
    fresh = clustered(50, seed=5)
    index.add([f"new{i}" for i in range(50)], fresh)  # added while running
    index.remove(keys[:30])  # deleted while running
    index.add(["k100"], fresh[:1])  # an edit: same key, new vector
    index.save()
    # while the server is down the notes change again: the exact index (from the database)
    # holds what is current; the saved graph gets the difference at the next start
    exact = ExactVectorIndex(DIMS)
    exact.add(index.exact.keys(), index.exact.get(index.exact.keys()))
    later = clustered(10, seed=6)
    exact.add([f"later{i}" for i in range(10)], later)
    exact.remove(["k40", "k41"])
    restarted = ScalingVectorIndex(exact, threshold=500, path=path)
    restarted.start()
    assert restarted.loaded and restarted.approximate  # loaded, not built again
    assert restarted.search(later[3], 1)[0][0] == "later3"
    assert restarted.search(fresh[7], 1)[0][0] == "new7"
    assert restarted.search(fresh[0], 2)[0][0] in ("k100", "new0")
    found = {key for q in vectors[:60] for key, _ in restarted.search(q, 10)}
    assert not found & {*keys[:30], "k40", "k41"}


def test_a_stale_saved_graph_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "vectors.usearch"
    vectors = clustered(1000, seed=7)
    built([f"k{i}" for i in range(1000)], vectors, threshold=200, path=path)
    other = clustered(1000, seed=8)
    again = built([f"o{i}" for i in range(1000)], other, threshold=200, path=path)
    assert not again.loaded and again.search(other[5], 1)[0][0] == "o5"


def test_an_unreadable_saved_graph_is_rebuilt(tmp_path: Path) -> None:
    """A file of another format (hnswlib's, before usearch) or a torn write: built again."""
    path = tmp_path / "vectors.usearch"
    vectors = clustered(1000, seed=9)
    keys = [f"k{i}" for i in range(1000)]
    path.write_bytes(b"\x00not a usearch index" * 100)
    path.with_name(path.name + ".keys").write_text("\n".join(keys), encoding="utf-8")
    index = built(keys, vectors, threshold=200, path=path)
    assert not index.loaded and index.approximate
    assert index.search(vectors[5], 1)[0][0] == "k5"


def test_room_reserved_ahead_holds_what_is_added() -> None:
    """The embedding job reserves its total: vectors added one batch at a time into that room
    are all found, and a removal still moves the last row into the hole."""
    exact = ExactVectorIndex(DIMS)
    exact.reserve(3000)
    vectors = clustered(3000, seed=10)
    for start in range(0, 3000, 700):
        exact.add(
            [f"k{i}" for i in range(start, min(start + 700, 3000))], vectors[start:3000][:700]
        )
    exact.remove(["k4"])
    assert len(exact) == 2999
    assert exact.search(vectors[2999], 1)[0][0] == "k2999"
    assert exact.search(vectors[4], 1)[0][0] != "k4"
    assert exact.search(vectors[10], 3, allowed={"k10", "k11"})[0][0] == "k10"


def test_a_filter_keeping_a_large_share_is_answered_from_the_graph() -> None:
    """The graph's nearest candidates, filtered, are the nearest keys that pass: the same as
    exact search among them (and the filter sees only the candidates, never the whole list)."""
    vectors = clustered(4000, seed=11)
    keys = [f"k{i}" for i in range(len(vectors))]
    index = built(keys, vectors, threshold=1000)
    even = {key for number, key in enumerate(keys) if number % 2 == 0}
    asked: list[int] = []

    def passing(candidates: list[str]) -> set[str]:
        asked.append(len(candidates))
        return even & set(candidates)

    recalls = []
    for query in clustered(30, seed=12):
        found = index.search_passing(query, 10, passing)
        assert found is not None and len(found) == 10
        assert {key for key, _ in found} <= even
        exact = {key for key, _ in index.exact.search(query, 10, even)}
        recalls.append(len({key for key, _ in found} & exact) / 10)
    assert np.mean(recalls) >= 0.95
    assert max(asked) < len(keys)  # candidates only, never every key


def test_a_narrow_filter_or_no_graph_leaves_the_search_to_exact_search() -> None:
    """When fewer than k of the graph's candidates pass, the nearest passing keys may lie
    further out: None says so (the caller searches exactly among what passes)."""
    vectors = clustered(2000, seed=13)
    keys = [f"k{i}" for i in range(len(vectors))]
    big = built(keys, vectors, threshold=500)
    rare = {"k3", "k1999"}
    assert big.search_passing(vectors[5], 10, lambda found: rare & set(found)) is None
    small = built(keys, vectors, threshold=5000)
    assert small.search_passing(vectors[5], 10, set) is None


def test_a_filter_the_first_candidates_miss_is_answered_from_more_of_the_graph(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When none of the graph's first candidates pass (the filter's keys all lie further out:
    a folder in another language), the graph is asked for more, once the caller says the
    filter is large enough to be worth it, and the answer is what exact search among the
    passing keys gives, without the filter ever being given every key."""
    monkeypatch.setattr(ann, "EXPANSION_SEARCH", 64)  # few candidates a round, as at scale
    vectors = clustered(6000, seed=14)
    keys = [f"k{i}" for i in range(len(vectors))]
    index = built(keys, vectors, threshold=1000)
    query = vectors[7]
    ranked = [key for key, _ in index.exact.search(query, len(keys))]
    far = set(ranked[500::3])  # none among the nearest 500
    asked: list[int] = []
    widened: list[bool] = []

    def passing(candidates: list[str]) -> set[str]:
        asked.append(len(candidates))
        return far & set(candidates)

    def large() -> bool:
        widened.append(True)
        return True

    found = index.search_passing(query, 10, passing, large)
    assert found is not None
    exact = index.exact.search(query, 10, far)
    assert [key for key, _ in found] == [key for key, _ in exact]
    assert widened == [True]  # asked once, before the first wider search
    assert sum(asked) < len(keys)  # candidates only, never every key


def test_a_filter_too_small_to_widen_for_is_left_to_exact_search(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the first candidates pass too few and the caller says the filter is small (its
    keys cost less to score than more of the graph), None sends the search to exact."""
    monkeypatch.setattr(ann, "EXPANSION_SEARCH", 64)
    vectors = clustered(6000, seed=15)
    keys = [f"k{i}" for i in range(len(vectors))]
    index = built(keys, vectors, threshold=1000)
    ranked = [key for key, _ in index.exact.search(vectors[3], len(keys))]
    far = set(ranked[500::3])
    said: list[bool] = []

    def small() -> bool:
        said.append(False)
        return False

    assert index.search_passing(vectors[3], 10, lambda found: far & set(found), small) is None
    assert said == [False]


def test_a_graph_saved_in_another_precision_is_rebuilt(tmp_path: Path) -> None:
    """A graph saved by a version that stored float16 is built again in today's precision."""
    path = tmp_path / "vectors.usearch"
    vectors = clustered(1000, seed=14)
    keys = [f"k{i}" for i in range(1000)]
    older = usearch_index.Index(ndim=DIMS, metric="ip", dtype="f16")
    older.add(np.arange(1000, dtype=np.uint64), vectors)
    older.save(str(path))
    path.with_name(path.name + ".keys").write_text("\n".join(keys), encoding="utf-8")
    index = built(keys, vectors, threshold=200, path=path)
    assert not index.loaded and index.approximate
    assert index.search(vectors[5], 1)[0][0] == "k5"
    assert usearch_index.Index.metadata(str(path))["kind_scalar"] == usearch_index.ScalarKind.I8
