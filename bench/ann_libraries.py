"""Approximate nearest-neighbour libraries side by side, in one process on one data set:
build time (one thread, vectors added in batches), query latency (one query at a time), recall@10
against exact search, and the memory each index holds (RSS growth while it is built).

    nice .venv/bin/python bench/ann_libraries.py --count 100000 --dims 256
    nice .venv/bin/python bench/ann_libraries.py --only usearch-f16,faiss-hnsw-sq-f16

Each library that is not installed is skipped (``uv pip install usearch faiss-cpu hnswlib``
into the environment you run it from); the product uses only usearch. Vectors are unit length
around ``--centres`` random centres (``--noise`` apart): clustered like embeddings, and harder
for a graph than real embeddings are (docs/search.md). Settings are the product's: M 16,
ef 128 to build, 256 to search. Prints a table; bench/results/ann_libraries.json.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results" / "ann_libraries.json"
M, EF_ADD, EF_SEARCH, BATCH = 16, 128, 256, 10_000

Search = Callable[[np.ndarray, int], np.ndarray]


def clustered(count: int, dims: int, centres: int, noise: float, seed: int) -> np.ndarray:
    """Made a block at a time, so that making them holds no more than they take."""
    rng = np.random.default_rng(seed)
    middle = rng.standard_normal((centres, dims)).astype(np.float32)
    vectors = np.empty((count, dims), dtype=np.float32)
    for start in range(0, count, BATCH):
        block = vectors[start : start + BATCH]
        block[:] = middle[rng.integers(0, centres, len(block))]
        block += noise * rng.standard_normal(block.shape).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
    return vectors


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build_hnswlib(vectors: np.ndarray) -> Search:
    import hnswlib

    index = hnswlib.Index(space="ip", dim=vectors.shape[1])
    index.init_index(max_elements=len(vectors), ef_construction=EF_ADD, M=M)
    index.set_num_threads(1)
    for start in range(0, len(vectors), BATCH):
        part = vectors[start : start + BATCH]
        index.add_items(part, np.arange(start, start + len(part)))
    index.set_ef(EF_SEARCH)
    return lambda query, k: index.knn_query(query, k=k)[0][0]


def build_usearch(dtype: str, threads: int = 1) -> Callable[[np.ndarray], Search]:
    """usearch with ``threads`` (0: its default, every core, for each add and each search)."""

    def build(vectors: np.ndarray) -> Search:
        from usearch.index import Index

        index = Index(
            ndim=vectors.shape[1],
            metric="ip",
            dtype=dtype,
            connectivity=M,
            expansion_add=EF_ADD,
            expansion_search=EF_SEARCH,
        )
        for start in range(0, len(vectors), BATCH):
            part = vectors[start : start + BATCH]
            index.add(np.arange(start, start + len(part)), part, threads=threads)
        print(f"usearch {dtype}: {index.hardware_acceleration}", file=sys.stderr)
        return lambda query, k: index.search(query, k, threads=threads).keys

    return build


def build_faiss(kind: str) -> Callable[[np.ndarray], Search]:
    def build(vectors: np.ndarray) -> Search:
        import faiss

        faiss.omp_set_num_threads(1)
        dims = vectors.shape[1]
        if kind == "flat":
            index = faiss.IndexHNSWFlat(dims, M, faiss.METRIC_INNER_PRODUCT)
        else:
            quantiser = {"f16": faiss.ScalarQuantizer.QT_fp16, "sq8": faiss.ScalarQuantizer.QT_8bit}
            index = faiss.IndexHNSWSQ(dims, quantiser[kind], M, faiss.METRIC_INNER_PRODUCT)
            index.train(vectors[:20_000])
        index.hnsw.efConstruction = EF_ADD
        index.hnsw.efSearch = EF_SEARCH
        for start in range(0, len(vectors), BATCH):
            index.add(vectors[start : start + BATCH])
        return lambda query, k: index.search(query[None, :], k)[1][0]

    return build


LIBRARIES: dict[str, tuple[str, Callable[[np.ndarray], Search]]] = {
    "hnswlib-f32": ("hnswlib", build_hnswlib),
    "usearch-f32": ("usearch", build_usearch("f32")),
    "usearch-f16": ("usearch", build_usearch("f16")),
    "usearch-i8": ("usearch", build_usearch("i8")),
    "usearch-f32-all-cores": ("usearch", build_usearch("f32", threads=0)),
    "faiss-hnsw-flat": ("faiss", build_faiss("flat")),
    "faiss-hnsw-sq-f16": ("faiss", build_faiss("f16")),
    "faiss-hnsw-sq8": ("faiss", build_faiss("sq8")),
}


def measure(
    name: str,
    build: Callable[[np.ndarray], Search],
    vectors: np.ndarray,
    queries: np.ndarray,
    truth: np.ndarray,
) -> dict[str, Any]:
    gc.collect()
    before = peak_rss_mb()
    started, cpu = time.perf_counter(), time.process_time()
    search = build(vectors)
    build_s, build_cpu_s = time.perf_counter() - started, time.process_time() - cpu
    held = peak_rss_mb() - before
    latencies, recalls = [], []
    for query, expected in zip(queries, truth, strict=True):
        begun = time.perf_counter()
        found = search(query, 10)
        latencies.append((time.perf_counter() - begun) * 1000)
        recalls.append(len(set(found.tolist()) & set(expected.tolist())) / 10)
    row = {
        "library": name,
        "build_s": round(build_s, 2),
        "build_cpu_s": round(build_cpu_s, 2),
        "query_p50_ms": round(statistics.median(latencies), 3),
        "query_p95_ms": round(sorted(latencies)[int(0.95 * (len(latencies) - 1))], 3),
        "recall_at_10": round(float(np.mean(recalls)), 4),
        "peak_rss_growth_mb": round(held),
    }
    return row


def data(args: argparse.Namespace) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The vectors, the queries (near some of them) and each query's exact top 10."""
    vectors = clustered(args.count, args.dims, args.centres, args.noise, seed=1)
    rng = np.random.default_rng(2)
    queries = vectors[rng.choice(args.count, args.queries, replace=False)].copy()
    queries += 0.1 * rng.standard_normal(queries.shape).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    truth = np.array([np.argsort(-(vectors @ query))[:10] for query in queries])
    return vectors, queries, truth


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--dims", type=int, default=256)
    parser.add_argument("--centres", type=int, default=1000)
    parser.add_argument("--noise", type=float, default=0.6)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--only", help="comma-separated names (default: every one installed)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.one:  # a child: one library, so that its peak RSS is its own
        vectors, queries, truth = data(args)
        module, build = LIBRARIES[args.one]
        print(json.dumps(measure(args.one, build, vectors, queries, truth)))
        return
    names = args.only.split(",") if args.only else list(LIBRARIES)
    rows = []
    for name in names:
        module, _ = LIBRARIES[name]
        if importlib.util.find_spec(module) is None:
            print(f"{name}: {module} is not installed, skipped")
            continue
        shape = ["--count", str(args.count), "--dims", str(args.dims), "--centres"]
        shape += [str(args.centres), "--noise", str(args.noise), "--queries", str(args.queries)]
        child = subprocess.run(
            [sys.executable, __file__, "--one", name, *shape],
            check=True,
            capture_output=True,
            text=True,
        )
        print(child.stdout.strip(), flush=True)
        rows.append(json.loads(child.stdout.strip().splitlines()[-1]))
    print(f"\n{args.count} x {args.dims}, {args.centres} centres, noise {args.noise}")
    print(
        f"{'library':<20} {'build s':>8} {'cpu s':>7} {'p50 ms':>7} {'p95 ms':>7} "
        f"{'recall':>7} {'RSS+ MB':>8}"
    )
    for row in rows:
        print(
            f"{row['library']:<20} {row['build_s']:>8.1f} {row['build_cpu_s']:>7.1f} "
            f"{row['query_p50_ms']:>7.3f} {row['query_p95_ms']:>7.3f} "
            f"{row['recall_at_10']:>7.3f} {row['peak_rss_growth_mb']:>8}"
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "count": args.count,
        "dims": args.dims,
        "centres": args.centres,
        "noise": args.noise,
        "rows": rows,
    }
    args.out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
