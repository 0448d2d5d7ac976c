"""Indexing and lexical search as a user meets them (``bench/search.py --serve``).

On N notes generated from the non-English help vaults (de, ja, ru, zh), in one run:

* **raw FTS5 fill**: walk the vault, read every note and insert it in one transaction into
  ``fts5(path, title, body, tokenize='unicode61 remove_diacritics 2')``: what a bare full-text
  index of the same files costs on this machine at this moment;
* **serve to indexed**: spawn ``python -m plugin_bridge serve`` on a fresh data folder, connect
  over its WebSocket as soon as the info file exists, and ask ``health`` every 20 ms until
  ``index.pending`` is 0 with every note counted (``index.notes``): the seconds from the spawn;
* **lexical p50**: ``vault/search`` (1-2 words, limit 10, lexical) as a WebSocket client sees
  it, against the same queries' p50 on the raw table (``ORDER BY rank LIMIT 10`` with a
  snippet) in this process;
* **the start's timeline**, seconds from the spawn: the info file, "Ready" and the scan's
  "Indexing N ... notes" log line on serve's stderr (stamped as they arrive), the first
  ``health`` that counts a note (the scan's first batch written), pending 0.

``--before DIR`` times another checkout's serve too, on the same notes in the same run.

Targets (issue 41): serve to indexed < 4 × raw + 1.5 s; search p50 < raw p50 + 2 ms.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.vaultgen import SHARED, generate_vault

ROOT = Path(__file__).resolve().parent.parent
LANGUAGES = ("de", "ja", "ru", "zh")
QUERIES = (
    "Einstellungen",
    "Vorlage Ordner",
    "Tastenkürzel",
    "Synchronisierung",
    "синхронизация",
    "горячие клавиши",
    "заметки",
    "同步",
    "插件 设置",
    "プラグイン",
    "ノート 検索",
    "canvas",
    "Obsidian Sync",
    "graph",
)
"""1-2 words in the vault's languages (and English words its notes hold)."""
POLL_S = 0.02
TARGET_RATIO = 4.0
TARGET_EXTRA_S = 1.5
TARGET_P50_EXTRA_MS = 2.0


def raw_fill(root: Path, db: Path) -> tuple[float, int]:
    """Seconds to walk, read and insert every note in one transaction; the notes inserted."""
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute(
        "CREATE VIRTUAL TABLE raw USING fts5(path, title, body, "
        "tokenize='unicode61 remove_diacritics 2')"
    )
    started = time.perf_counter()
    count = 0
    conn.execute("BEGIN")
    for folder, _, files in os.walk(root):
        for name in files:
            if not name.endswith(".md"):
                continue
            full = Path(folder, name)
            text = full.read_text(encoding="utf-8")
            rel = full.relative_to(root).as_posix()
            conn.execute("INSERT INTO raw VALUES (?, ?, ?)", (rel, name[:-3], text))
            count += 1
    conn.execute("COMMIT")
    elapsed = time.perf_counter() - started
    conn.close()
    return elapsed, count


def raw_search_ms(db: Path, rounds: int) -> list[float]:
    """Milliseconds per ranked top-10 query (with a snippet) on the raw table."""
    conn = sqlite3.connect(db)
    sql = (
        "SELECT path, title, snippet(raw, 2, '**', '**', '…', 14) FROM raw "
        "WHERE raw MATCH ? ORDER BY rank LIMIT 10"
    )

    def ask(query: str) -> None:
        words = " ".join('"' + w.replace('"', '""') + '"' for w in query.split())
        conn.execute(sql, (words,)).fetchall()

    for query in QUERIES:
        ask(query)
    samples = []
    for _ in range(rounds):
        for query in QUERIES:
            started = time.perf_counter()
            ask(query)
            samples.append((time.perf_counter() - started) * 1000)
    conn.close()
    return samples


class _Client:
    """A JSON-RPC client on one WebSocket, one call at a time."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.next_id = 0

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        await self.ws.send(json.dumps(message))
        while True:
            reply: dict[str, Any] = json.loads(await self.ws.recv())
            if reply.get("id") == self.next_id:
                if "result" not in reply:
                    raise RuntimeError(f"{method} failed: {reply.get('error')}")
                result: dict[str, Any] = reply["result"]
                return result


TIMELINE = {"ready": "Ready.", "scan": "in the background."}
"""Timeline marks read on serve's stderr: a line starting (or ending) with these words."""


def stamp_lines(
    process: subprocess.Popen[bytes], started: float, timeline: dict[str, float]
) -> threading.Thread:
    """A thread reading serve's stderr, noting in ``timeline`` when each mark's line arrives."""

    def read() -> None:
        assert process.stderr is not None
        for raw in process.stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            for mark, words in TIMELINE.items():
                if mark not in timeline and (line.startswith(words) or line.endswith(words)):
                    timeline[mark] = round(time.perf_counter() - started, 3)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def wait_for_info(info_file: Path, process: subprocess.Popen[bytes]) -> dict[str, Any]:
    """serve's info file (url and token) once it is written."""
    while not info_file.exists():
        if process.poll() is not None:
            raise SystemExit(f"serve exited with {process.returncode}")
        time.sleep(0.002)
    info: dict[str, Any] = json.loads(info_file.read_text(encoding="utf-8"))
    return info


async def indexed_and_searched(
    info: dict[str, Any],
    process: subprocess.Popen[bytes],
    notes: int,
    rounds: int,
    started: float,
    timeline: dict[str, float],
) -> tuple[float, list[float], dict[str, Any]]:
    """Seconds from ``started`` until health says every note is indexed (the first health
    counting a note goes in ``timeline`` as "first batch"), then the lexical search samples
    (ms), and the last health's index."""
    from websockets.asyncio.client import connect

    async with connect(info["url"], open_timeout=60, max_size=None) as ws:
        client = _Client(ws)
        hello = {"name": "bench", "version": "0"}
        await client.call(
            "initialize", {"token": info["token"], "protocolVersion": 1, "client": hello}
        )
        while True:
            index = (await client.call("health", {}))["index"]
            if index["notes"] > 0 and "first batch" not in timeline:
                timeline["first batch"] = round(time.perf_counter() - started, 3)
            if index["pending"] == 0 and index["notes"] >= notes:
                break
            if process.poll() is not None:
                raise SystemExit(f"serve exited with {process.returncode}")
            await asyncio.sleep(POLL_S)
        indexed_s = time.perf_counter() - started
        for query in QUERIES:  # warm-up
            await client.call("vault/search", {"query": query, "limit": 10, "mode": "lexical"})
        samples = []
        for _ in range(rounds):
            for query in QUERIES:
                begun = time.perf_counter()
                await client.call("vault/search", {"query": query, "limit": 10, "mode": "lexical"})
                samples.append((time.perf_counter() - begun) * 1000)
    return indexed_s, samples, index


def serve_run(
    root: Path, data: Path, notes: int, rounds: int, code: Path = ROOT
) -> tuple[float, list[float], dict[str, float]]:
    """Spawn serve (of the checkout at ``code``) on ``root`` with a fresh ``data`` folder:
    seconds until health says every note is indexed, then the lexical search samples (ms)
    over its WebSocket, and the start's timeline (seconds from the spawn)."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["HOME"] = str(data.parent / "home")  # no settings of the user's
    env["XDG_CONFIG_HOME"] = str(data.parent / "config")
    info_file = data.parent / "server.json"
    command = [sys.executable, "-m", "plugin_bridge", "serve", "--vault", str(root)]
    command += ["--data-dir", str(data), "--info-file", str(info_file), "--port", "0"]
    command += ["--http-port", "0"]
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=code, env=env, stderr=subprocess.PIPE)
    timeline: dict[str, float] = {}
    reader = stamp_lines(process, started, timeline)
    try:
        info = wait_for_info(info_file, process)
        timeline["info file"] = round(time.perf_counter() - started, 3)
        indexed_s, samples, _ = asyncio.run(
            indexed_and_searched(info, process, notes, rounds, started, timeline)
        )
        timeline["pending 0"] = round(indexed_s, 3)
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(60)
        reader.join(5)
    return indexed_s, samples, timeline


def measure(notes: int, rounds: int, before: Path | None = None) -> dict[str, Any]:
    """Every figure of the mode, in one run (the raw fill first, then serve); with ``before``
    (another checkout, e.g. ``git worktree add --detach DIR main``) its serve is timed too,
    on the same notes, right before this one."""
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        work = Path(tmp)
        shared = work / "help"
        shared.mkdir()
        for language in LANGUAGES:  # the non-English help vaults only
            (shared / language).symlink_to(SHARED / language)
        vault = generate_vault(work / "vault", notes, shared)
        if vault.source != "obsidian-help":
            raise SystemExit(
                f"The help vaults are not at {SHARED}: set BENCH_HELP_VAULTS to their folder."
            )
        raw_s, raw_notes = raw_fill(vault.root, work / "raw.sqlite3")
        raw_ms = raw_search_ms(work / "raw.sqlite3", rounds)
        earlier = None
        if before is not None:
            earlier = serve_run(vault.root, work / "before" / "data", notes, rounds, before)
        (work / "after").mkdir()
        indexed_s, ms, timeline = serve_run(vault.root, work / "after" / "data", notes, rounds)
    found = {
        "notes": notes,
        "raw_notes": raw_notes,
        "languages": list(LANGUAGES),
        "load_average": list(os.getloadavg()),
        "raw_fill_s": round(raw_s, 3),
        "index_target_s": round(TARGET_RATIO * raw_s + TARGET_EXTRA_S, 3),
        "raw_search_p50_ms": round(statistics.median(raw_ms), 3),
        "search_target_p50_ms": round(statistics.median(raw_ms) + TARGET_P50_EXTRA_MS, 3),
        **_serve_figures(indexed_s, ms, timeline, raw_s),
    }
    if earlier is not None:
        found["before"] = {"code": str(before), **_serve_figures(*earlier, raw_s)}
    return found


def _serve_figures(
    indexed_s: float, ms: list[float], timeline: dict[str, float], raw_s: float
) -> dict[str, Any]:
    marks = ("info file", "ready", "scan", "first batch", "pending 0")
    return {
        "timeline_s": {mark: timeline[mark] for mark in marks if mark in timeline},
        "serve_indexed_s": round(indexed_s, 3),
        "index_ratio": round(indexed_s / raw_s, 2),
        "search_p50_ms": round(statistics.median(ms), 3),
        "search_p95_ms": round(sorted(ms)[int(0.95 * (len(ms) - 1))], 3),
    }


def report(f: dict[str, Any]) -> str:
    load = ", ".join(f"{x:.2f}" for x in f["load_average"])
    lines = [
        f"{f['notes']} notes from the {'/'.join(f['languages'])} help vaults (load average {load})",
        f"raw FTS5 fill (walk, read, one transaction): {f['raw_fill_s']:.2f} s; "
        f"raw search p50 {f['raw_search_p50_ms']:.2f} ms",
    ]
    for name, run in (("before", f.get("before")), ("this code", f)):
        if run is None:
            continue
        index_ok = run["serve_indexed_s"] < f["index_target_s"]
        search_ok = run["search_p50_ms"] < f["search_target_p50_ms"]
        lines += [
            f"{name}: serve start → health pending 0, all counted {run['serve_indexed_s']:.2f} s "
            f"= {run['index_ratio']:.2f}x raw, {'ok' if index_ok else 'OVER'} "
            f"(< 4 x raw + 1.5 s = {f['index_target_s']:.2f} s)",
            f"{name}: lexical p50 over the WebSocket {run['search_p50_ms']:.2f} ms, "
            f"{'ok' if search_ok else 'OVER'} (< raw + 2 ms = {f['search_target_p50_ms']:.2f} ms); "
            f"p95 {run['search_p95_ms']:.2f} ms",
            f"{name}: timeline (s from the spawn): "
            + ", ".join(f"{mark} {at:.2f}" for mark, at in run["timeline_s"].items()),
        ]
    return "\n".join(lines)
