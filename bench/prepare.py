"""Preparing notes as the index's helper process does (issue 41): its CPU, and a dump to compare.

The notes are ``bench/search.py --serve``'s: N generated from the de, ja, ru and zh help vaults.

    python -m bench.prepare cpu [--notes 10000] [--runs 5]    # CPU over a third of the notes
    PYTHONHASHSEED=0 python -m bench.prepare dump OUT          # every prepared note, pickled
    python -m bench.prepare compare A B                        # the same notes in both dumps?

``cpu`` times ``Indexer.prepare`` and pickling in batches of 500 (what the helper does and
sends) over every third note, the minimum of ``--runs`` (process CPU seconds). ``dump`` needs
the same ``PYTHONHASHSEED`` on both sides: a note's stem columns are joined from a set. To
measure another checkout (a ``git archive`` of ``plugin_bridge`` and ``llm_service``), run
from outside the repository with ``PYTHONPATH=<checkout>:<this repository>``. ``--vault DIR``
reuses (or fills, when empty) a folder of generated notes.
"""

from __future__ import annotations

import argparse
import dataclasses
import pickle
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from bench.vaultgen import SHARED, generate_vault
from plugin_bridge.vault.files import VaultFiles
from plugin_bridge.vault.lexical.indexer import Indexer

LANGUAGES = ("de", "ja", "ru", "zh")
BATCH = 500


def vault(folder: Path, notes: int) -> Path:
    """``folder`` holding ``notes`` generated notes (generated there unless it has notes)."""
    if folder.is_dir() and any(folder.rglob("*.md")):
        return folder
    shared = folder.parent / f"{folder.name}-help"
    shared.mkdir(parents=True, exist_ok=True)
    for language in LANGUAGES:
        if not (shared / language).exists():
            (shared / language).symlink_to(SHARED / language)
    generated = generate_vault(folder, notes, shared)
    if generated.source != "obsidian-help":
        raise SystemExit(f"The help vaults are not at {SHARED}: set BENCH_HELP_VAULTS.")
    return generated.root


def prepare_cpu(indexer: Indexer, paths: list[str]) -> tuple[float, int]:
    """Process CPU seconds to prepare and pickle ``paths`` in batches, and the bytes pickled."""
    started, size = time.process_time(), 0
    for at in range(0, len(paths), BATCH):
        size += len(pickle.dumps([indexer.prepare(rel) for rel in paths[at : at + BATCH]]))
    return time.process_time() - started, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("cpu", "dump", "compare"))
    parser.add_argument("files", nargs="*", type=Path, help="dump: OUT; compare: A B")
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--vault", type=Path, help="a folder of generated notes to (re)use")
    args = parser.parse_args()
    if args.mode == "compare":
        first, second = (pickle.loads(path.read_bytes()) for path in args.files)
        differ = sum(a != b for a, b in zip(first, second, strict=False))
        same = len(first) == len(second) and not differ
        verdict = "identical" if same else f"{differ} differ"
        print(f"{len(first)} and {len(second)} notes: {verdict}")
        sys.exit(0 if same else 1)
    with tempfile.TemporaryDirectory(prefix="bench-prepare-") as tmp:
        root = vault(args.vault or Path(tmp) / "vault", args.notes)
        indexer = Indexer(sqlite3.connect(":memory:"), VaultFiles(root))
        paths = sorted(indexer.walk())
        if args.mode == "dump":
            items = [indexer.prepare(rel) for rel in paths]
            rows = [(type(item).__name__, dataclasses.astuple(item)) for item in items]
            args.files[0].write_bytes(pickle.dumps(rows))
            print(f"{len(rows)} prepared notes written to {args.files[0]}")
            return
        third = paths[::3]
        prepare_cpu(indexer, third[:200])  # imports, the tables built at first use
        runs = [prepare_cpu(indexer, third) for _ in range(args.runs)]
        seconds = [cpu for cpu, _ in runs]
        print(
            f"{len(third)} notes: min {min(seconds):.3f} s CPU "
            f"(runs {' '.join(f'{s:.2f}' for s in seconds)}), {runs[0][1] / 1e6:.1f} MB pickled"
        )


if __name__ == "__main__":
    main()
