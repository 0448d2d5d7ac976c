"""Semantic search at scale, in one run on an N-note vault (bench/vaultgen.py) with a tiny
model2vec model built here from the vault's own words (256 dimensions, random vectors: the real
file format and code path, no download):

index without vectors (the lexical baseline) vs index + embedding, embedding throughput, search
p50/p95 lexical vs hybrid (query embedding included), a restart with unchanged notes (chunks
re-embedded, time vs a lexical-only restart measured in the same run), peak RSS; then exact
vector search alone over growing random matrices (where an approximate index would pay off).
Prints a table, writes bench/results/semantic-<N>.json.

    .venv/bin/python bench/semantic.py --notes 10000     # `make bench` runs 10000 and 30000
    .venv/bin/python bench/semantic.py --notes 1000      # quick
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

# as serve does (plugin_bridge.vault.semantic.vectors.single_threaded_blas), before numpy loads
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

from bench.stats import percentile
from bench.vaultgen import generate_vault
from llm_service.embedders import Model2VecEmbedder
from llm_service.embedders.base import Batch
from llm_service.embedders.tiny_model import write_tiny_model
from plugin_bridge.vault.vault import Vault

RESULTS_DIR: Final = Path(__file__).resolve().parent / "results"
DIMS: Final = 256
VOCABULARY: Final = 30_000
MODEL_SOURCE_FILES: Final = 2000
"""The vocabulary comes from this many files (the generated vault repeats its sources)."""
QUERIES: Final = (
    "how do I sync my notes between devices",
    "canvas cards and connections",
    "plugin settings",
    "graph view filters",
    "publish a site with a custom domain",
    "command palette hotkeys",
    "restore a deleted file",
    "templates for daily notes",
    "同步设置",
    "プラグインの設定",
    "синхронизация заметок",
    "Einstellungen der Vorlagen",
)
SCALING_SIZES: Final = (30_000, 100_000, 300_000, 1_000_000)
TARGETS: Final = {
    "hybrid_p95_ms": 30.0,
    "restart_ratio": 1.2,
    "restart_index_ratio": 1.2,
    "peak_rss_mb": 400.0,
}
_TOKEN: Final = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]|\w+")


class CountingModel2Vec(Model2VecEmbedder):
    """Counts the texts it embeds."""

    texts = 0

    async def _embed_once(self, texts: list[str]) -> Batch:
        self.texts += len(texts)
        return await super()._embed_once(texts)


@dataclass
class Figures:
    notes: int = 0
    source: str = ""
    chunks: int = 0
    lexical_index_s: float = 0.0
    index_and_embed_s: float = 0.0
    embed_chunks_per_s: float = 0.0
    lexical_p50_ms: float = 0.0
    lexical_p95_ms: float = 0.0
    hybrid_p50_ms: float = 0.0
    hybrid_p95_ms: float = 0.0
    restart_lexical_s: float = 0.0
    restart_semantic_s: float = 0.0
    restart_ratio: float = 0.0
    restart_index_ready_s: float = 0.0
    """With vectors configured: until the index answers (lexically); vectors load meanwhile."""
    restart_index_ratio: float = 0.0
    restart_reembedded: int = -1
    db_mb: float = 0.0
    peak_rss_mb: float = 0.0
    exact_search_p50_ms: dict[str, float] = field(default_factory=dict)
    exact_search_f32_numpy_p50_ms: dict[str, float] = field(default_factory=dict)
    """The same searches as float32 numpy products (the code before half precision), A/B."""


_HEADING_LINE: Final = re.compile(r"^(#{1,6}[ \t]+.*?)[ \t]*$", re.M)
_FRONT_MATTER: Final = re.compile(r"\A---\n.*?^---\n", re.S | re.M)


def make_unique(paths: list[str], root: Path) -> None:
    """Give every copy of a source note its own chunks: vaultgen cycles the same notes, and
    identical sections share one vector (a real vault's repeated template sections do too),
    which would make the vectors far fewer than a real vault of this size has."""
    for number, rel in enumerate(paths):
        path = root / rel
        text = path.read_text(encoding="utf-8", errors="replace")
        front = _FRONT_MATTER.match(text)
        head, body = (text[: front.end()], text[front.end() :]) if front else ("", text)
        body = _HEADING_LINE.sub(rf"\1 ({number})", body)
        path.write_text(f"{head}Copy {number}.\n\n{body}", encoding="utf-8")


def build_model(root: Path, folder: Path) -> Path:
    """A tiny model2vec model knowing the vault's most frequent tokens."""
    counts: Counter[str] = Counter()
    for path in sorted(root.rglob("*.md"))[:MODEL_SOURCE_FILES]:
        counts.update(_TOKEN.findall(path.read_text(encoding="utf-8", errors="replace").lower()))
    words = [word for word, _ in counts.most_common(VOCABULARY)]
    return write_tiny_model(folder, words, dims=DIMS)


async def open_vault(root: Path, data: Path, model: Path | None) -> tuple[Vault, float, int, float]:
    """Start a vault (with the model when given) and wait until it is fully indexed and
    embedded: (vault, seconds, texts embedded, seconds until the index alone was ready)."""
    vault = Vault(root, data, watch=False)
    embedder = CountingModel2Vec(str(model)) if model else None
    if embedder is not None:
        vault.use_embedder(embedder)
    started = time.perf_counter()
    await vault.start()
    await vault.index.wait_until_idle(3600)
    indexed = time.perf_counter() - started
    if vault.semantic is not None:
        await vault.semantic.wait_until_idle(3600)
    texts = embedder.texts if embedder else 0
    return vault, time.perf_counter() - started, texts, indexed


async def time_searches(vault: Vault, rounds: int) -> tuple[list[float], list[float]]:
    lexical: list[float] = []
    hybrid: list[float] = []
    semantic = vault.semantic
    assert semantic is not None
    for _ in range(rounds):
        for query in QUERIES:
            started = time.perf_counter()
            await vault.search(query, 10, "lexical")
            lexical.append((time.perf_counter() - started) * 1000)
            semantic._query_cache.clear()  # time the query's embedding too
            started = time.perf_counter()
            found = await vault.search(query, 10, "hybrid")
            hybrid.append((time.perf_counter() - started) * 1000)
            assert found.mode == "hybrid"
    return lexical, hybrid


def exact_scaling(rounds: int = 20) -> tuple[dict[str, float], dict[str, float]]:
    """p50 ms of one exact top-10 search over n random unit vectors of DIMS dimensions: the
    index (half precision, usearch's exact search), and a float32 numpy product over the same
    vectors, the two timed in turn (an A/B on a shared machine)."""
    import numpy as np

    from plugin_bridge.vault.semantic.vectors import ExactVectorIndex

    rng = np.random.default_rng(0)
    index_ms, numpy_ms = {}, {}
    for size in SCALING_SIZES:
        index = ExactVectorIndex(DIMS)
        matrix = rng.standard_normal((size, DIMS), dtype=np.float32)
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        index.add([str(i) for i in range(size)], matrix)
        ours, theirs = [], []
        for _ in range(rounds):
            query = rng.standard_normal(DIMS).astype(np.float32)
            started = time.perf_counter()
            index.search(query, 10)
            ours.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            scores = matrix @ query
            top = np.argpartition(-scores, 9)[:10]
            top[np.argsort(-scores[top])]
            theirs.append((time.perf_counter() - started) * 1000)
        index_ms[str(size)] = round(statistics.median(ours), 2)
        numpy_ms[str(size)] = round(statistics.median(theirs), 2)
        del index, matrix
    return index_ms, numpy_ms


async def run(notes: int, rounds: int, scaling: bool) -> Figures:
    figures = Figures(notes=notes)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        generated = generate_vault(base / "vault", notes)
        make_unique(generated.paths, generated.root)
        figures.source = generated.source
        model = build_model(generated.root, base / "model")

        lexical, seconds, _, _ = await open_vault(generated.root, base / "lexical", None)
        figures.lexical_index_s = round(seconds, 2)
        await lexical.close()
        lexical, seconds, _, _ = await open_vault(generated.root, base / "lexical", None)
        figures.restart_lexical_s = round(seconds, 3)
        await lexical.close()

        vault, seconds, embedded, _ = await open_vault(generated.root, base / "semantic", model)
        figures.index_and_embed_s = round(seconds, 2)
        assert vault.semantic is not None
        figures.chunks = vault.semantic.chunks_embedded
        embed_only = max(seconds - figures.lexical_index_s, 1e-9)
        figures.embed_chunks_per_s = round(embedded / embed_only)
        lex, hyb = await time_searches(vault, rounds)
        figures.lexical_p50_ms = round(statistics.median(lex), 2)
        figures.lexical_p95_ms = round(percentile(lex, 0.95), 2)
        figures.hybrid_p50_ms = round(statistics.median(hyb), 2)
        figures.hybrid_p95_ms = round(percentile(hyb, 0.95), 2)
        await vault.close()

        vault, seconds, embedded, indexed = await open_vault(
            generated.root, base / "semantic", model
        )
        figures.restart_semantic_s = round(seconds, 3)
        figures.restart_index_ready_s = round(indexed, 3)
        figures.restart_index_ratio = round(indexed / figures.restart_lexical_s, 2)
        figures.restart_reembedded = embedded
        figures.restart_ratio = round(seconds / figures.restart_lexical_s, 2)
        await vault.close()
        figures.db_mb = round(
            sum(f.stat().st_size for f in (base / "semantic").glob("index.sqlite3*")) / 1e6
        )
    figures.peak_rss_mb = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    if scaling:
        figures.exact_search_p50_ms, figures.exact_search_f32_numpy_p50_ms = exact_scaling()
    return figures


def report(figures: Figures) -> str:
    def check(key: str, value: float) -> str:
        target = TARGETS.get(key)
        return "" if target is None else f"{'ok' if value < target else 'OVER'} (< {target:g})"

    rows = [
        ("notes / chunks", f"{figures.notes} ({figures.source}) / {figures.chunks}", ""),
        ("index, lexical only (baseline)", f"{figures.lexical_index_s:.2f} s", ""),
        ("index + embed", f"{figures.index_and_embed_s:.2f} s", ""),
        ("embedding throughput", f"{figures.embed_chunks_per_s} chunks/s", ""),
        (
            f"lexical p50 / p95 ({len(QUERIES)} queries)",
            f"{figures.lexical_p50_ms:.2f} / {figures.lexical_p95_ms:.2f} ms",
            "",
        ),
        (
            "hybrid p50 / p95 (query embedded)",
            f"{figures.hybrid_p50_ms:.2f} / {figures.hybrid_p95_ms:.2f} ms",
            check("hybrid_p95_ms", figures.hybrid_p95_ms),
        ),
        (
            "restart lexical / vectors loaded",
            f"{figures.restart_lexical_s:.3f} / {figures.restart_semantic_s:.3f} s "
            f"({figures.restart_ratio:.2f}x)",
            check("restart_ratio", figures.restart_ratio),
        ),
        (
            "restart with vectors: lexical answers",
            f"{figures.restart_index_ready_s:.3f} s ({figures.restart_index_ratio:.2f}x)",
            check("restart_index_ratio", figures.restart_index_ratio),
        ),
        ("chunks re-embedded on restart", str(figures.restart_reembedded), ""),
        ("database size", f"{figures.db_mb:.0f} MB", ""),
        ("peak RSS", f"{figures.peak_rss_mb:.0f} MB", check("peak_rss_mb", figures.peak_rss_mb)),
    ]
    for size, ms in figures.exact_search_p50_ms.items():
        f32 = figures.exact_search_f32_numpy_p50_ms.get(size, 0.0)
        rows.append(
            (
                f"exact search alone, {int(size):,} x {DIMS}",
                f"{ms:.2f} ms p50 (float32 numpy {f32:.2f})",
                "",
            )
        )
    width = max(len(name) for name, _, _ in rows)
    return "\n".join(
        f"{name:<{width}}  {value:<34} {verdict}".rstrip() for name, value, verdict in rows
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=10, help="times each query is timed")
    parser.add_argument(
        "--scaling", action="store_true", help="also time exact search on 30k-1M vectors"
    )
    args = parser.parse_args()
    figures = asyncio.run(run(args.notes, args.rounds, args.scaling))
    print(report(figures))
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"semantic-{args.notes}.json"
    payload: dict[str, Any] = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "queries": QUERIES,
        "targets": TARGETS,
        **asdict(figures),
    }
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
