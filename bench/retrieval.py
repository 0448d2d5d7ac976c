"""Retrieval quality on the shared English help vault: recall@10 and MRR of lexical, semantic
and hybrid search over 50 labelled questions (bench/retrieval_questions.py), none of which uses
its target note's title words.

The embedder is the deterministic fake (hashed character n-grams) unless ``--embedder`` names
another (``ollama:nomic-embed-text``, ``openai:text-embedding-3-small``, ``model2vec:PATH``), so
users can judge their own setup. Prints a table, writes bench/results/retrieval.json, and exits
1 if hybrid ranks below lexical (on recall@10 or MRR).

    .venv/bin/python bench/retrieval.py
    .venv/bin/python bench/retrieval.py --embedder ollama:nomic-embed-text
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# as serve does (plugin_bridge.vault.semantic.vectors.single_threaded_blas), before numpy loads
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

from retrieval_questions import QUESTIONS, check_questions

from llm_service.embedders import FakeEmbedder, make_embedder
from plugin_bridge.vault.notes.vault import Vault
from plugin_bridge.vault.semantic.hybrid import Mode, search_notes

ROOT: Final = Path(__file__).resolve().parent.parent
VAULT: Final = ROOT.parent / "shared" / "vaults" / "obsidian-help" / "en"
RESULTS: Final = ROOT / "bench" / "results" / "retrieval.json"
MODES: Final[tuple[Mode, ...]] = ("lexical", "semantic", "hybrid")
K: Final = 10


def score(ranked: list[str], expected: tuple[str, ...]) -> tuple[float, float]:
    """(recall@K, reciprocal rank of the first expected note) of one answer."""
    top = ranked[:K]
    recall = sum(1 for path in expected if path in top) / len(expected)
    rank = next((i for i, path in enumerate(ranked, start=1) if path in expected), None)
    return recall, (1.0 / rank if rank else 0.0)


async def run(spec: str | None, vault: Path) -> dict[str, Any]:
    embedder = make_embedder(spec, api_key=os.environ.get("OPENAI_API_KEY")) if spec else None
    embedder = embedder or FakeEmbedder(dims=256)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(vault, root)
        notes = Vault(root, Path(tmp) / "data", watch=False)
        semantic = notes.use_embedder(embedder)
        started = time.perf_counter()
        await notes.start()
        await notes.index.wait_until_idle(120)
        await semantic.wait_until_idle(3600)
        embed_s = time.perf_counter() - started
        per_mode: dict[str, dict[str, float]] = {}
        misses: dict[str, list[str]] = {}
        for mode in MODES:
            recalls, ranks = [], []
            for question, expected in QUESTIONS:
                found = await search_notes(notes.index, semantic, question, K * 2, mode=mode)
                recall, rr = score([hit.path for hit in found.hits], expected)
                recalls.append(recall)
                ranks.append(rr)
                if recall == 0:
                    misses.setdefault(mode, []).append(question)
            per_mode[mode] = {
                "recall_at_10": round(sum(recalls) / len(recalls), 3),
                "mrr": round(sum(ranks) / len(ranks), 3),
            }
        chunks = semantic.chunks_embedded
        notes_count = notes.index.note_count
        await notes.close()
    return {
        "embedder": embedder.model_id,
        "questions": len(QUESTIONS),
        "notes": notes_count,
        "chunks": chunks,
        "index_and_embed_s": round(embed_s, 2),
        "modes": per_mode,
        "missed": misses,
    }


def report(figures: dict[str, Any]) -> str:
    lines = [
        f"embedder {figures['embedder']}: {figures['questions']} questions, "
        f"{figures['notes']} notes, {figures['chunks']} chunks "
        f"(indexed and embedded in {figures['index_and_embed_s']} s)",
        f"{'mode':<10} {'recall@10':>10} {'MRR':>8}",
    ]
    for mode, values in figures["modes"].items():
        lines.append(f"{mode:<10} {values['recall_at_10']:>10.3f} {values['mrr']:>8.3f}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", help="KIND:MODEL (default: the deterministic fake)")
    parser.add_argument("--vault", type=Path, default=VAULT)
    args = parser.parse_args()
    problems = check_questions()
    if problems:
        print("Questions use their target's title words:\n" + "\n".join(problems))
        return 2
    if not args.vault.is_dir():
        print(f"Skipped: the shared English vault is not at {args.vault}.")
        return 0
    figures = asyncio.run(run(args.embedder, args.vault))
    print(report(figures))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    figures["date"] = datetime.now(UTC).strftime("%Y-%m-%d")
    RESULTS.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")
    lexical, hybrid = figures["modes"]["lexical"], figures["modes"]["hybrid"]
    if hybrid["recall_at_10"] < lexical["recall_at_10"] or hybrid["mrr"] < lexical["mrr"]:
        print("FAIL: hybrid ranks below lexical.")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
