"""Search index benchmark, in one run on an N-note vault (bench/vaultgen.py):

raw FTS5 unicode61 insert of the same notes vs our full index (and the ratio), a restart with
nothing changed, search p50/p95/p99 over a fixed query set, change-to-searchable latency with
the watcher, database size and peak RSS. Prints a table, writes bench/results/search.json.

    .venv/bin/python bench/search.py --notes 10000     # `make bench`
    .venv/bin/python bench/search.py --notes 1000      # quick
    .venv/bin/python bench/search.py --sizes 1000,10000,30000   # growth table (`make bench`)

``--sizes`` runs each size in its own process (so peak RSS is that size's) and prints how build
time, restart, search latency, RSS and database size grow, then each target of issue 41 (build
< 90 s with the vector graph's time beside it, peak RSS with vectors < 1.5 GB, lexical p95 < 20
ms, hybrid p95 < 40 ms, restart < 3 s, ANN recall@10 >= 0.95); ``--out FILE`` (default
bench/results/search_sizes.json) is the only file written: a JSON list, one object per size.
ANN recall@10 counts a hit when it is as close as the exact 10th neighbour (cosine distance
within 1 % + 0.001, ann-benchmarks' epsilon recall): the generated vault repeats each note, so
exact neighbours tie and a key-set recall says little.
``--serve`` measures indexing and search as a user meets them (bench/serve_index.py).
``--hybrid`` (on with ``--sizes``) then embeds the vault with a tiny model2vec model built from
its own words (bench/semantic.py) and times hybrid searches with the query vectors cached (the
query's embedding excluded: it is the embedder's cost, not the index's).

    .venv/bin/python bench/search.py --sizes 1000,10000,30000,100000   # 100k: ~10 min, 2 GB disk
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.stats import percentile
from bench.vaultgen import generate_vault
from plugin_bridge.vault.lexical.index import SearchIndex

RESULTS = Path(__file__).resolve().parent / "results" / "search.json"
QUERIES = (
    "sync",  # in a quarter of the notes
    "canvas",
    "plugin settings",
    "graph view",
    "publish",
    '"command palette"',
    '"core plugins"',
    "sync*",
    "hotk*",
    "embed*",
    "tag:bench/en",
    "tag:set3 canvas",
    "path:de/",
    "sync path:de",
    "同步",
    "同期",
    "笔记",
    "プラグイン",
    "コミュニティプラグイン",
    "Obsidian 同期",
    "синхронизация",
    "einstellungen",
    "übersicht",
    "zzzz-no-match",
)
TARGETS = {
    "index_ratio": 4.0,
    "restart_s": 2.0,
    "search_p50_ms": 5.0,
    "search_p95_ms": 20.0,
    "live_median_ms": 300.0,
    "peak_rss_mb": 300.0,
}


@dataclass
class Figures:
    notes: int
    vault_mb: float
    source: str
    raw_fts_s: float = 0.0
    index_s: float = 0.0
    index_ratio: float = 0.0
    restart_s: float = 0.0
    search_p50_ms: float = 0.0
    search_p95_ms: float = 0.0
    search_p99_ms: float = 0.0
    live_median_ms: float = 0.0
    live_max_ms: float = 0.0
    db_mb: float = 0.0
    peak_rss_mb: float = 0.0
    query_p50_ms: dict[str, float] = field(default_factory=dict)
    query_p95_ms: dict[str, float] = field(default_factory=dict)
    chunks: int = 0
    embed_s: float = 0.0
    hybrid_p50_ms: float = 0.0
    hybrid_p95_ms: float = 0.0
    hybrid_db_mb: float = 0.0
    hybrid_peak_rss_mb: float = 0.0
    hybrid_query_p50_ms: dict[str, float] = field(default_factory=dict)
    """Hybrid search's median by query."""
    hybrid_query_p95_ms: dict[str, float] = field(default_factory=dict)
    """Hybrid search's p95 by query: which queries make the overall p95."""
    ann: dict[str, Any] = field(default_factory=dict)
    """Whether the approximate index answered, its recall@10 and the graph's build time."""
    ann_recall_at_10: float = 0.0
    """Recall@10 of the vector search against exact search, ties counted as hits."""
    graph_build_s: float = 0.0


def raw_fts_baseline(root: Path, rel_paths: list[str], db: Path) -> float:
    """Seconds to read the same notes into a bare FTS5 unicode61 table, 500 per commit."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(
        "CREATE VIRTUAL TABLE notes USING fts5(title, body, "
        "tokenize = 'unicode61 remove_diacritics 2')"
    )
    started = time.perf_counter()
    for start in range(0, len(rel_paths), 500):
        conn.execute("BEGIN")
        for rel in rel_paths[start : start + 500]:
            text = (root / rel).read_text(encoding="utf-8")
            conn.execute("INSERT INTO notes VALUES (?, ?)", (Path(rel).stem, text))
        conn.execute("COMMIT")
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed


async def timed_start(root: Path, db: Path) -> tuple[SearchIndex, float]:
    index = SearchIndex(root, db, watch=False)
    started = time.perf_counter()
    await index.start()
    await index.wait_until_idle(3600)
    return index, time.perf_counter() - started


def search_latencies(index: SearchIndex, rounds: int) -> dict[str, list[float]]:
    """Milliseconds per search() call, by query, each ``rounds`` times (after one warm-up)."""
    for query in QUERIES:
        index.search(query)
    samples: dict[str, list[float]] = {query: [] for query in QUERIES}
    for _ in range(rounds):
        for query in QUERIES:
            started = time.perf_counter()
            index.search(query)
            samples[query].append((time.perf_counter() - started) * 1000)
    return samples


async def live_latencies(root: Path, db: Path, rel_paths: list[str], edits: int) -> list[float]:
    """Milliseconds from a note written on disk to its new word being found, per edit."""
    index = SearchIndex(root, db, debounce_ms=30)
    await index.start()
    await index.wait_until_idle(600)
    samples = []
    for i in range(edits):
        rel = rel_paths[(i * 7919) % len(rel_paths)]
        word = f"zqxlive{i}marker"
        path = root / rel
        text = path.read_text(encoding="utf-8")
        started = time.perf_counter()
        path.write_text(f"{text}\n{word}\n", encoding="utf-8")
        deadline = started + 10
        while not index.search(word, 1).hits:
            if time.perf_counter() > deadline:
                raise RuntimeError(f"edit {i} was not searchable within 10 s")
            await asyncio.sleep(0.002)
        samples.append((time.perf_counter() - started) * 1000)
    await index.close()
    return samples


RECALL_EPSILON = 0.01
"""Relative distance within which a hit ties the exact 10th (ann-benchmarks' epsilon recall)."""
RECALL_FLOOR = 1e-3
"""Absolute slack beside it: vectors are stored in float16 (a score moves by about 0.001)."""


def recall_by_distance(vectors: Any, query: Any, k: int) -> float:
    """The share of the approximate top ``k`` that are as close to ``query`` as the exact
    ``k``-th nearest: cosine distance <= that distance × (1 + :data:`RECALL_EPSILON`) +
    :data:`RECALL_FLOOR`. A vault of copies has many vectors at (nearly) the same distance, and
    any of them is a right answer, so ties do not count as misses. Both sides are scored alike
    (float32 over the stored vectors)."""
    import numpy as np

    exact = [key for key, _ in vectors.exact.search(query, k)]
    if not exact:
        return 1.0
    approximate = [key for key, _ in vectors.search(query, k)]
    point = np.asarray(query, dtype=np.float32)

    def distances(keys: list[str]) -> Any:
        return 1.0 - np.asarray(vectors.exact.get(keys), dtype=np.float32) @ point

    bound = float(distances(exact).max()) * (1 + RECALL_EPSILON) + RECALL_FLOOR
    close = int((distances(approximate) <= bound).sum()) if approximate else 0
    return min(close, len(exact)) / len(exact)


async def hybrid_latencies(
    root: Path, data: Path, model: Path, rounds: int
) -> tuple[dict[str, list[float]], int, float, dict[str, Any]]:
    """Embed the vault with ``model`` (and wait for the approximate index past its threshold),
    then time hybrid searches (query vectors cached): the samples in ms by query, the chunks
    embedded, the seconds until then, and the vector search's recall@10 against exact search."""
    from bench.semantic import QUERIES as QUESTIONS
    from bench.semantic import CountingModel2Vec
    from plugin_bridge.vault.vault import Vault

    vault = Vault(root, data, watch=False)
    semantic = vault.use_embedder(CountingModel2Vec(str(model)))
    started = time.perf_counter()
    await vault.start()
    await vault.index.wait_until_idle(3600)
    await semantic.wait_until_idle(7200)
    vectors = semantic.vector_index()
    assert vectors is not None
    await asyncio.to_thread(vectors.wait_until_built, 3600)  # past the threshold: the graph
    embed_s = time.perf_counter() - started
    parsed = {query: vault.index.parse(query) for query in (*QUERIES, *QUESTIONS)}
    queries = [query for query, p in parsed.items() if p.terms or p.cjk]  # filters alone: lexical
    recalls = []
    for query in queries:  # embeds each query once: later searches take it from the cache
        found = await vault.search(query, 10, "hybrid")
        vector = await semantic.query_vector(query)
        assert found.mode == "hybrid" and vector is not None
        recalls.append(recall_by_distance(vectors, vector, 10))
    recall = {
        "approximate": vectors.approximate,
        "recall_at_10": sum(recalls) / len(recalls),
        "graph_build_s": round(vectors.build_seconds, 1),
    }
    samples: dict[str, list[float]] = {query: [] for query in queries}
    for _ in range(rounds):
        for query in queries:
            begun = time.perf_counter()
            await vault.search(query, 10, "hybrid")
            samples[query].append((time.perf_counter() - begun) * 1000)
    chunks = semantic.chunks_embedded
    await vault.close()
    return samples, chunks, embed_s, recall


async def run(notes: int, rounds: int, edits: int, hybrid: bool = False) -> Figures:
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        work = Path(tmp)
        vault = generate_vault(work / "vault", notes)
        figures = Figures(notes, round(vault.bytes / 1e6, 1), vault.source)
        figures.raw_fts_s = raw_fts_baseline(vault.root, vault.paths, work / "raw.sqlite3")
        db = work / "data" / "index.sqlite3"
        index, figures.index_s = await timed_start(vault.root, db)
        await index.close()
        figures.index_ratio = figures.index_s / figures.raw_fts_s
        index, figures.restart_s = await timed_start(vault.root, db)
        by_query = search_latencies(index, rounds)
        await index.close()
        samples = [ms for runs in by_query.values() for ms in runs]
        figures.search_p50_ms = percentile(samples, 0.5)
        figures.search_p95_ms = percentile(samples, 0.95)
        figures.search_p99_ms = percentile(samples, 0.99)
        figures.query_p50_ms = {q: round(statistics.median(ms), 2) for q, ms in by_query.items()}
        figures.query_p95_ms = {q: round(percentile(ms, 0.95), 2) for q, ms in by_query.items()}
        live = await live_latencies(vault.root, db, vault.paths, edits)
        figures.live_median_ms = statistics.median(live)
        figures.live_max_ms = max(live)
        figures.db_mb = sum(f.stat().st_size for f in db.parent.glob("index.sqlite3*")) / 1e6
        figures.peak_rss_mb = peak_rss_mb()
        if hybrid:  # the words' figures first: embedding a large vault takes long
            print(report(figures), flush=True)
            from bench.semantic import build_model, make_unique

            make_unique(vault.paths, vault.root)  # every copy its own chunks, as a real vault
            model = build_model(vault.root, work / "model")
            by_query, figures.chunks, figures.embed_s, figures.ann = await hybrid_latencies(
                vault.root, db.parent, model, max(1, rounds // 4)
            )
            samples = [ms for runs in by_query.values() for ms in runs]
            figures.hybrid_query_p50_ms = {
                q: round(statistics.median(ms), 2) for q, ms in by_query.items()
            }
            figures.hybrid_query_p95_ms = {
                q: round(percentile(ms, 0.95), 2) for q, ms in by_query.items()
            }
            figures.hybrid_p50_ms = percentile(samples, 0.5)
            figures.hybrid_p95_ms = percentile(samples, 0.95)
            figures.hybrid_db_mb = (
                sum(f.stat().st_size for f in db.parent.glob("index.sqlite3*")) / 1e6
            )
            figures.hybrid_peak_rss_mb = peak_rss_mb()
            figures.ann_recall_at_10 = round(figures.ann["recall_at_10"], 3)
            figures.graph_build_s = figures.ann["graph_build_s"]
    return figures


def peak_rss_mb() -> float:
    """This process's peak plus the indexing helper's (a child process, once it has exited)."""
    return sum(
        resource.getrusage(who).ru_maxrss / 1024
        for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )


def report(figures: Figures) -> str:
    def check(key: str, value: float) -> str:
        target = TARGETS.get(key)
        return "" if target is None else f"{'ok' if value < target else 'OVER'} (< {target:g})"

    rows = [
        ("notes", f"{figures.notes} ({figures.vault_mb} MB, {figures.source})", ""),
        ("raw FTS5 unicode61 insert", f"{figures.raw_fts_s:.2f} s", ""),
        ("full index", f"{figures.index_s:.2f} s", ""),
        (
            "full index / raw",
            f"{figures.index_ratio:.2f}x",
            check("index_ratio", figures.index_ratio),
        ),
        (
            "restart, nothing changed",
            f"{figures.restart_s:.2f} s",
            check("restart_s", figures.restart_s),
        ),
        (
            f"search p50 / p95 / p99 ({len(QUERIES)} queries)",
            f"{figures.search_p50_ms:.2f} / {figures.search_p95_ms:.2f} / "
            f"{figures.search_p99_ms:.2f} ms",
            f"{check('search_p50_ms', figures.search_p50_ms)}, "
            f"{check('search_p95_ms', figures.search_p95_ms)}",
        ),
        (
            "change → searchable, median / max",
            f"{figures.live_median_ms:.0f} / {figures.live_max_ms:.0f} ms",
            check("live_median_ms", figures.live_median_ms),
        ),
        ("database size", f"{figures.db_mb:.0f} MB", ""),
        ("peak RSS", f"{figures.peak_rss_mb:.0f} MB", check("peak_rss_mb", figures.peak_rss_mb)),
    ]
    if figures.chunks:
        rows += [
            (
                "chunks embedded (tiny model2vec)",
                f"{figures.chunks} in {figures.embed_s:.0f} s",
                "",
            ),
            (
                "hybrid p50 / p95 (query cached)",
                f"{figures.hybrid_p50_ms:.2f} / {figures.hybrid_p95_ms:.2f} ms",
                "",
            ),
            ("database with vectors", f"{figures.hybrid_db_mb:.0f} MB", ""),
            (
                "vector search (recall@10 vs exact, ties as hits)",
                f"{'approximate' if figures.ann['approximate'] else 'exact'} "
                f"({figures.ann['recall_at_10']:.3f})",
                "",
            ),
            ("graph built in", f"{figures.ann.get('graph_build_s', 0):.1f} s", ""),
            ("peak RSS with vectors", f"{figures.hybrid_peak_rss_mb:.0f} MB", ""),
        ]
    width = max(len(name) for name, _, _ in rows)
    for name, by_query in (
        ("slowest queries (p50)", figures.query_p50_ms),
        ("slowest queries (p95)", figures.query_p95_ms),
        ("slowest hybrid queries (p50)", figures.hybrid_query_p50_ms),
        ("slowest hybrid queries (p95)", figures.hybrid_query_p95_ms),
    ):
        if by_query:
            slowest = sorted(by_query.items(), key=lambda item: -item[1])[:5]
            rows.append((name, ", ".join(f"{q} {ms:.1f}" for q, ms in slowest), ""))
    return "\n".join(
        f"{name:<{width}}  {value:<28} {verdict}".rstrip() for name, value, verdict in rows
    )


def growth_table(sizes: list[int], rounds: int, edits: int, hybrid: bool, out: Path) -> str:
    """Each size measured in its own process; a table of how the figures grow. ``out`` gets
    the JSON list of the sizes' figures, one object each (the only file written)."""
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-sizes-") as tmp:
        for notes in sizes:
            one = Path(tmp) / f"search_{notes}.json"
            command = [sys.executable, __file__, "--notes", str(notes), "--rounds", str(rounds)]
            command += ["--part-of-sizes"]  # its --out is ours, temporary: not announced
            command += ["--hybrid"] if hybrid else []
            subprocess.run([*command, "--edits", str(edits), "--out", str(one)], check=True)
            rows.append(json.loads(one.read_text(encoding="utf-8")))
    lines = [
        "notes   vault MB  build s  graph s  restart s  lexical p50/p95 ms  hybrid p50/p95 ms  "
        "chunks  ANN R@10  peak RSS MB  index MB",
        *(
            f"{r['notes']:>6} {r['vault_mb']:>9.1f} {r['index_s']:>8.2f} "
            f"{r['graph_build_s']:>8.1f} {r['restart_s']:>10.2f} "
            f"{r['search_p50_ms']:>8.2f} / {r['search_p95_ms']:<7.2f} "
            f"{r['hybrid_p50_ms']:>7.2f} / {r['hybrid_p95_ms']:<7.2f} {r['chunks']:>7} "
            f"{r['ann_recall_at_10']:>9.3f} "
            f"{max(r['peak_rss_mb'], r['hybrid_peak_rss_mb']):>11.0f} "
            f"{max(r['db_mb'], r['hybrid_db_mb']):>9.0f}"
            for r in rows
        ),
    ]
    first, last = rows[0], rows[-1]
    if len(rows) > 1:
        scale = last["notes"] / first["notes"]
        lines.append(
            f"growth x{scale:g} notes: build x{last['index_s'] / first['index_s']:.1f}, restart "
            f"x{last['restart_s'] / first['restart_s']:.1f}, search p50 "
            f"x{last['search_p50_ms'] / first['search_p50_ms']:.1f}, RSS "
            f"x{last['peak_rss_mb'] / first['peak_rss_mb']:.1f}, "
            f"index x{last['db_mb'] / first['db_mb']:.1f}"
        )
    for r in rows:
        line = (
            f"{r['notes']} notes: build {r['index_s']:.1f} s {_ok(r['index_s'] < 90)} (< 90; "
            f"the vector graph {r['graph_build_s']:.0f} s more), "
            f"lexical p95 {r['search_p95_ms']:.1f} ms {_ok(r['search_p95_ms'] < 20)} (< 20), "
            f"restart {r['restart_s']:.2f} s {_ok(r['restart_s'] < 3)} (< 3)"
        )
        if r["chunks"]:  # embedded: the vectors' targets too
            line += (
                f", peak RSS with vectors {r['hybrid_peak_rss_mb']:.0f} MB "
                f"{_ok(r['hybrid_peak_rss_mb'] < 1500)} (< 1500), hybrid p95 "
                f"{r['hybrid_p95_ms']:.1f} ms {_ok(r['hybrid_p95_ms'] < 40)} (< 40), ANN "
                f"recall@10 {r['ann_recall_at_10']:.3f} {_ok(r['ann_recall_at_10'] >= 0.95)} "
                "(>= 0.95)"
            )
        lines.append(line)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    lines.append(f"wrote {out}")
    return "\n".join(lines)


def _ok(passed: bool) -> str:
    return "ok" if passed else "OVER"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000, help="vault size (default 10000)")
    parser.add_argument("--rounds", type=int, default=20, help="times each query is timed")
    parser.add_argument("--edits", type=int, default=20, help="live edits to time")
    parser.add_argument("--sizes", help="comma-separated vault sizes: the growth table")
    parser.add_argument(
        "--out",
        type=Path,
        help="the only file written (default bench/results/search.json; with --sizes "
        "bench/results/search_sizes.json, a JSON list with one object per size)",
    )
    parser.add_argument("--hybrid", action="store_true", help="also embed and time hybrid")
    parser.add_argument("--no-hybrid", action="store_true", help="with --sizes: lexical only")
    parser.add_argument("--part-of-sizes", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument(
        "--serve",
        action="store_true",
        help="index and search as a user meets them: serve's start to health pending 0, and "
        "vault/search over its WebSocket, against a raw FTS5 fill (bench/serve_index.py)",
    )
    parser.add_argument(
        "--before", type=Path, help="with --serve: also time this checkout's serve (a worktree)"
    )
    args = parser.parse_args()
    if args.sizes:
        sizes = [int(n) for n in args.sizes.split(",")]
        out = args.out or RESULTS.with_name("search_sizes.json")
        print(growth_table(sizes, args.rounds, args.edits, not args.no_hybrid, out))
        return
    if args.serve:
        from bench.serve_index import measure
        from bench.serve_index import report as serve_report

        found = measure(args.notes, args.rounds, args.before)
        print(serve_report(found))
        out = args.out or RESULTS.with_name("search_serve.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(found, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {out}")
        return
    figures = asyncio.run(run(args.notes, args.rounds, args.edits, args.hybrid))
    print(report(figures))
    machine = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
    }
    payload = {"machine": machine, "queries": QUERIES, "targets": TARGETS, **asdict(figures)}
    out = args.out or RESULTS
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if not args.part_of_sizes:  # one size of --sizes writes a temporary file: not the user's
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
