"""Static vectors inside word search, measured: can a static model (bench/distill.py, or any
model2vec folder) lift the default lexical search without an embedder at query time?

Two ways, each on the tuned sets and the held-out set (bench/retrieval.py's questions), MRR
per question kind beside plain lexical search:

- **re-rank**: the lexical top 30 fused (reciprocal rank, k = 1) with the same 30 ordered by
  the static cosine of the question and the note (title and body, one vector), the static
  side weighted ``w``;
- **expansion**: each query word (3+ letters) also matches its two nearest words of the
  vault's vocabulary (words in 2+ places) whose static cosine is at least ``tau`` and that
  share no stem with it, as the typo corrections do (OR alternatives of the word).

    .venv/bin/python -m bench.retrieval_static --model ~/.cache/ai-bridge/minilm-static-256
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Final
from unittest import mock

import numpy as np
import numpy.typing as npt

import plugin_bridge.vault.vault as vault_module
from bench.retrieval import VAULTS, Question, questions, score
from llm_service.embedders.model2vec import Model2VecEmbedder
from plugin_bridge.vault.lexical import words
from plugin_bridge.vault.lexical.query import Query, parse_query
from plugin_bridge.vault.vault import Vault

CANDIDATES: Final = 30
WEIGHTS: Final = (0.3, 0.5, 1.0)
TAUS: Final = (0.8, 0.7, 0.6)
Vectors = npt.NDArray[np.float32]


async def unit(embedder: Model2VecEmbedder, texts: list[str]) -> Vectors:
    return np.asarray(await embedder.embed(texts), dtype=np.float32)


def reranked(paths: list[str], cosines: Vectors, weight: float) -> list[str]:
    by_cosine = {p: r for r, p in enumerate(sorted(paths, key=lambda p: -cosines[paths.index(p)]))}
    fused = {p: 1 / (2 + r) + weight / (2 + by_cosine[p]) for r, p in enumerate(paths)}
    return sorted(paths, key=lambda p: -fused[p])


def expander(
    vocabulary: list[str], vectors: Vectors, near: dict[str, Vectors], tau: float
) -> Callable[[str], Query]:
    """``parse_query`` whose words also match their nearest vault words (cosine >= ``tau``)."""

    def expanded(text: str) -> Query:
        query = parse_query(text)
        terms = []
        for term in query.terms:
            if term.kind == "word" and term.text in near:
                cosines = vectors @ near[term.text]
                stems = set(words.query_stems(term.text))
                close = [
                    vocabulary[i]
                    for i in np.argsort(-cosines)[:8]
                    if cosines[i] >= tau
                    and vocabulary[i] != term.text
                    and not stems & set(words.query_stems(vocabulary[i]))
                ]
                term = replace(term, alternatives=tuple(close[:2]))
            terms.append(term)
        return replace(query, terms=tuple(terms))

    return expanded


def vault_words(root: Path) -> list[str]:
    """The vault's words of 3+ letters found in 2+ places (numbers left out)."""
    counts: Counter[str] = Counter()
    for note in root.rglob("*.md"):
        counts.update(words.tokens(note_text(note)))
    return [w for w, n in counts.items() if n >= 2 and len(w) >= 3 and not w.isdigit()]


def note_text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


async def measure_vault(
    embedder: Model2VecEmbedder, root: Path, asked: list[tuple[str, Question]]
) -> list[tuple[str, str, str, float]]:
    """(variant, set, kind, reciprocal rank) of every question on one vault."""
    vocabulary = vault_words(root)
    vectors = await unit(embedder, vocabulary)
    asked_words = sorted(
        {t.text for _, q in asked for t in parse_query(q[2]).terms if len(t.text) >= 3}
    )
    near = dict(zip(asked_words, await unit(embedder, asked_words), strict=True))
    out: list[tuple[str, str, str, float]] = []
    notes = Vault(root, root.parent / "data", watch=False)
    await notes.start()
    try:
        await notes.index.wait_until_idle(600)
        texts: dict[str, Vectors] = {}
        for which, (_, kind, text, expected) in asked:
            paths = [hit.path for hit in (await notes.search(text, CANDIDATES, "lexical")).hits]
            out.append(("lexical", which, kind, score(paths, expected)["mrr"]))
            new = [p for p in paths if p not in texts]
            bodies = [f"{Path(p).stem}\n{note_text(root / p)}" for p in new]
            texts.update(zip(new, await unit(embedder, bodies) if new else [], strict=True))
            if paths:
                cosines = np.array([texts[p] for p in paths]) @ (await unit(embedder, [text]))[0]
            for weight in WEIGHTS:
                ranked = reranked(paths, cosines, weight) if paths else []
                out.append((f"re-rank w {weight}", which, kind, score(ranked, expected)["mrr"]))
        for tau in TAUS:
            with mock.patch.object(
                vault_module, "parse_query", expander(vocabulary, vectors, near, tau)
            ):
                for which, (_, kind, text, expected) in asked:
                    found = await notes.search(text, CANDIDATES, "lexical")
                    mrr = score([hit.path for hit in found.hits], expected)["mrr"]
                    out.append((f"expansion tau {tau}", which, kind, mrr))
    finally:
        await notes.close()
    return out


async def run(model: Path, vaults: Path) -> str:
    embedder = Model2VecEmbedder(str(model))
    asked = [("tuned", q) for q in questions("all")] + [
        ("held-out", q) for q in questions("heldout")
    ]
    by_vault: dict[str, list[tuple[str, Question]]] = defaultdict(list)
    for which, question in asked:
        by_vault[question[0]].append((which, question))
    rows: list[tuple[str, str, str, float]] = []
    for language, group in by_vault.items():
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "vault"
            shutil.copytree(vaults / language, root)
            rows += await measure_vault(embedder, root, group)
    groups: dict[tuple[str, str], list[float]] = defaultdict(list)
    for variant, which, kind, mrr in rows:
        groups[variant, f"{which} {kind}"].append(mrr)
        if kind != "titlefree":
            groups[variant, f"{which} realistic"].append(mrr)
    columns = sorted({column for _, column in groups})
    lines = [f"{'MRR':<20}" + "".join(f"{c:>21}" for c in columns)]
    for variant in dict.fromkeys(v for v, _, _, _ in rows):
        cells = "".join(
            f"{sum(groups[variant, c]) / len(groups[variant, c]):>21.3f}" for c in columns
        )
        lines.append(f"{variant:<20}{cells}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="a model2vec folder")
    parser.add_argument("--vaults", type=Path, default=VAULTS, help="the help vaults' folder")
    args = parser.parse_args()
    if not (args.vaults / "en").is_dir():
        print(f"Skipped: the shared help vaults are not at {args.vaults}.")
        return 0
    print(asyncio.run(run(args.model.expanduser(), args.vaults)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
