"""Search index benchmark: full index vs a raw FTS5 baseline, restart, query latency, live
updates, size and memory, on an N-note vault built from ../shared/vaults (synthetic text when
that is absent). Prints a table and writes bench/results/search.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from plugin_bridge.vault.index import SearchIndex

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "vaults" / "obsidian-help"
QUERIES = [
    "sync",
    "canvas",
    "plugin settings",
    "kafka",
    "graph view",
    "templates",
    "publish",
    '"command palette"',
    '"core plugins"',
    "sync*",
    "hotk*",
    "embed*",
    "tag:plugin",
    "path:en",
    "sync path:de",
    "同步",
    "同期",
    "コマンド",
    "笔记",
    "синхронизация",
    "einstellungen",
    "zzzz-no-match",
]
EDITS = 20


def source_notes() -> list[tuple[str, str]]:
    if SHARED.is_dir():
        return [
            (str(p.relative_to(SHARED)), p.read_text(encoding="utf-8"))
            for p in sorted(SHARED.rglob("*.md"))
        ]
    rng = random.Random(7)
    words = [f"word{i}" for i in range(5000)] + ["sync", "canvas", "plugin", "graph"]
    return [
        (f"synthetic/n{i}.md", "# Note\n" + " ".join(rng.choice(words) for _ in range(500)))
        for i in range(500)
    ]


def build_vault(root: Path, count: int) -> list[tuple[str, str]]:
    sources = source_notes()
    notes = []
    for i in range(count):
        rel, text = sources[i % len(sources)]
        stem = Path(rel)
        target = f"{stem.parent}/batch{i // len(sources)}/{stem.stem} {i}.md"
        body = f"{text}\n\nVariant {i}.\n"
        (root / target).parent.mkdir(parents=True, exist_ok=True)
        (root / target).write_text(body, encoding="utf-8")
        notes.append((target, body))
    return notes


def raw_fts_baseline(notes: list[tuple[str, str]], db: Path) -> float:
    started = time.perf_counter()
    conn = sqlite3.connect(db)
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(path, body, tokenize='unicode61')")
    with conn:
        conn.executemany("INSERT INTO t VALUES (?, ?)", notes)
    conn.close()
    return time.perf_counter() - started


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * pct / 100))]


async def run(count: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root, data = Path(tmp) / "vault", Path(tmp) / "data"
        root.mkdir()
        data.mkdir()
        notes = build_vault(root, count)
        megabytes = sum(len(text.encode()) for _, text in notes) / 1e6
        baseline = raw_fts_baseline(notes, data / "raw.sqlite3")

        db = data / "index.sqlite3"
        index = SearchIndex(root, db, watch=False)
        started = time.perf_counter()
        await index.start()
        await index.wait_until_idle(600)
        full = time.perf_counter() - started
        await index.close()

        index = SearchIndex(root, db, watch=True)
        started = time.perf_counter()
        await index.start()
        await index.wait_until_idle(60)
        restart = time.perf_counter() - started

        latencies = []
        for _ in range(20):
            for query in QUERIES:
                t0 = time.perf_counter()
                index.search(query, 10)
                latencies.append((time.perf_counter() - t0) * 1000)

        visible = []
        for n in range(EDITS):
            token = f"benchtoken{n}x"
            t0 = time.perf_counter()
            (root / f"edit {n}.md").write_text(f"# Edit\n{token}\n", encoding="utf-8")
            while not index.search(token, 1).hits:
                if time.perf_counter() - t0 > 5:
                    break
                await asyncio.sleep(0.002)
            visible.append((time.perf_counter() - t0) * 1000)
        await index.close()

        return {
            "notes": count,
            "vault_mb": round(megabytes, 1),
            "raw_fts5_s": round(baseline, 2),
            "full_index_s": round(full, 2),
            "full_vs_raw_ratio": round(full / baseline, 2),
            "restart_s": round(restart, 3),
            "search_p50_ms": round(percentile(latencies, 50), 2),
            "search_p95_ms": round(percentile(latencies, 95), 2),
            "search_p99_ms": round(percentile(latencies, 99), 2),
            "change_visible_median_ms": round(statistics.median(visible), 1),
            "change_visible_max_ms": round(max(visible), 1),
            "db_mb": round(sum(p.stat().st_size for p in data.glob("index.sqlite3*")) / 1e6, 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        }


TARGETS = {
    "full_vs_raw_ratio": ("<", 4.0),
    "full_index_s": ("<", 10.0),
    "restart_s": ("<", 2.0),
    "search_p50_ms": ("<", 5.0),
    "search_p95_ms": ("<", 20.0),
    "change_visible_median_ms": ("<", 300.0),
    "peak_rss_mb": ("<", 300.0),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--notes", type=int, default=10_000)
    args = parser.parse_args()
    result = asyncio.run(run(args.notes))
    print(f"{'measure':<26}{'value':>12}  target")
    for key, value in result.items():
        op, limit = TARGETS.get(key, ("", None))
        verdict = "" if limit is None else f"{op} {limit:g}  {'ok' if value < limit else 'MISSED'}"
        print(f"{key:<26}{value:>12}  {verdict}")
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    (out / "search.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
