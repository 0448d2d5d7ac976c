"""Retrieval quality on the shared help vaults: recall@1, @5, @10 and MRR of lexical, semantic
and hybrid search, per question kind and language.

Two question sets to tune on (bench/retrieval_questions.py): the 50 title-free questions on
the English vault ("titlefree": none uses a title word of its target), and 82 realistic ones on
the English, German, Russian and Chinese vaults (keyword queries, natural questions,
paraphrases and typos); and ``--set heldout``, 37 questions on every help vault (Japanese too)
that no ranking choice was tuned on (bench/retrieval_heldout.py). The embedder is the
deterministic fake unless ``--embedder`` names another;
``--embedder-base-url`` points an ``openai:`` or ``ollama:`` embedder at any server (the key
comes from OPENAI_API_KEY as usual; a local server needs none); ``--minilm`` starts
bench/embed_server.py (all-MiniLM-L6-v2 on this CPU, the optional ``bench`` group) and
measures it through the OpenAI embedder; ``--embedder model2vec:DIR`` a static model in the
product's model2vec embedder (bench/distill.py distils one from all-MiniLM-L6-v2).

It refuses to print a figure it did not measure: it exits 2, saying why, when no vectors are
ready, when fewer chunks have vectors than the vault has, or when a semantic or hybrid search
was answered lexically. It exits 1 when hybrid breaks the fusion rule (below the better of
lexical and semantic by more than 0.02 MRR on a query type, or not above both overall); a
language's figures are printed beside it, not ruled on. Writes bench/results/retrieval.json (or
``--out``).

    .venv/bin/python bench/retrieval.py                      # the fake embedder
    .venv/bin/python bench/retrieval.py --minilm             # a real model (uv sync --group bench)
    .venv/bin/python bench/retrieval.py --embedder ollama:nomic-embed-text
    .venv/bin/python bench/retrieval.py --embedder model2vec:~/.cache/ai-bridge/minilm-static-256
    .venv/bin/python bench/retrieval.py --embedder openai:MODEL \\
        --embedder-base-url http://127.0.0.1:1234/v1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

# as serve does (plugin_bridge.vault.semantic.vectors.single_threaded_blas), before numpy loads
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

from bench.retrieval_heldout import HELDOUT
from bench.retrieval_questions import KINDS, QUESTIONS, REALISTIC, check_questions, check_realistic
from llm_service.embedders import FakeEmbedder, make_embedder
from plugin_bridge.vault.semantic.ann import ANN_THRESHOLD
from plugin_bridge.vault.vault import Mode, Vault

ROOT: Final = Path(__file__).resolve().parent.parent
VAULTS: Final = ROOT.parent / "shared" / "vaults" / "obsidian-help"
RESULTS: Final = ROOT / "bench" / "results" / "retrieval.json"
MODES: Final[tuple[Mode, ...]] = ("lexical", "semantic", "hybrid")
CUTOFFS: Final = (1, 5, 10)
FUSION_SLACK: Final = 0.02
EMBED_TIMEOUT: Final = 4 * 3600.0
MINILM: Final = "openai:all-MiniLM-L6-v2"
FAKE: Final = "fake:hashed-ngrams"

Question = tuple[str, str, str, tuple[str, ...]]
"""(vault language, kind, text, expected paths)."""


class Refused(Exception):
    """A figure would be wrong: say why and print none."""


def questions(which: str) -> list[Question]:
    chosen: list[Question] = []
    if which in ("titlefree", "all"):
        chosen += [("en", "titlefree", text, expected) for text, expected in QUESTIONS]
    if which in ("realistic", "all"):
        chosen += REALISTIC
    if which == "heldout":
        chosen += HELDOUT
    return chosen


def score(ranked: list[str], expected: tuple[str, ...]) -> dict[str, float]:
    """recall@k for each cutoff and the reciprocal rank of the first expected note."""
    found = {f"recall@{k}": sum(p in ranked[:k] for p in expected) / len(expected) for k in CUTOFFS}
    rank = next((i for i, path in enumerate(ranked, start=1) if path in expected), None)
    return {**found, "mrr": 1.0 / rank if rank else 0.0}


async def measure_vault(
    spec: str, base_url: str | None, vault: Path, asked: list[Question], ann_threshold: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Index and embed one vault, then ask its questions in every mode."""
    options: dict[str, Any] = {"base_url": base_url} if base_url else {}
    embedder = (
        FakeEmbedder(dims=256)
        if spec == FAKE
        else make_embedder(spec, api_key=os.environ.get("OPENAI_API_KEY"), **options)
    )
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        shutil.copytree(vault, root)
        notes = Vault(root, Path(tmp) / "data", watch=False)
        semantic = notes.use_embedder(embedder, ann_threshold=ann_threshold)
        started = time.perf_counter()
        await notes.start()
        try:
            await notes.index.wait_until_idle(600)
            try:
                await semantic.wait_until_idle(EMBED_TIMEOUT)
            except TimeoutError as exc:
                raise Refused(
                    f"{embedder.model_id} had not embedded {vault} after {EMBED_TIMEOUT:g} s."
                ) from exc
            embed_s = time.perf_counter() - started
            chunks = await notes.index.execute(
                lambda reader: int(
                    reader.conn.execute("SELECT count(DISTINCT hash) FROM chunks").fetchone()[0]
                )
            )
            progress = semantic.progress
            if not semantic.ready:
                why = f": {progress.error}" if progress.error else ""
                raise Refused(
                    f"no vectors are ready for {vault} ({embedder.model_id}, phase "
                    f"{progress.phase}{why}); semantic and hybrid figures would be lexical ones."
                )
            if semantic.chunks_embedded < chunks:
                raise Refused(
                    f"only {semantic.chunks_embedded} of the {chunks} chunks of {vault} have "
                    f"vectors of {embedder.model_id}."
                )
            vectors = semantic.vector_index()
            assert vectors is not None
            await asyncio.to_thread(vectors.wait_until_built, 3600)
            answers, recalls = [], []
            for language, kind, text, expected in asked:
                row: dict[str, Any] = {"language": language, "kind": kind, "question": text}
                for mode in MODES:
                    found = await notes.search(text, 20, mode)
                    if found.mode != mode:
                        raise Refused(f"{mode} search of {text!r} was answered as {found.mode}.")
                    row[mode] = score([hit.path for hit in found.hits], expected)
                answers.append(row)
                query = await semantic.query_vector(text)
                assert query is not None
                approximate = {key for key, _ in vectors.search(query, 10)}
                recalls.append(len(approximate & {k for k, _ in vectors.exact.search(query, 10)}))
            info = {
                "vault": vault.name,
                "notes": notes.index.note_count,
                "chunks": chunks,
                "index_and_embed_s": round(embed_s, 2),
                "vector_search": "approximate" if vectors.approximate else "exact",
                "vector_recall_at_10": round(sum(recalls) / (10 * max(1, len(recalls))), 3),
            }
        finally:
            await notes.close()
    return {"model": embedder.model_id, **info}, answers


def summarise(answers: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """Mean figures per group and mode: the title-free set, each language's kinds and all its
    questions, each kind over every language, and the whole realistic set."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in answers:
        if row["kind"] == "titlefree":
            groups["titlefree (en)"].append(row)
            continue
        groups[f"{row['language']} {row['kind']}"].append(row)
        groups[f"{row['language']} all"].append(row)
    languages = dict.fromkeys(row["language"] for row in answers if row["kind"] != "titlefree")
    for kind in KINDS:
        groups[f"all {kind}"] = [r for r in answers if r["kind"] == kind]
    groups["realistic, all"] = [r for r in answers if r["kind"] != "titlefree"]
    groups[EVERY] = list(answers)
    order = [
        "titlefree (en)",
        *(f"{language} {kind}" for language in languages for kind in (*KINDS, "all")),
        *(f"all {kind}" for kind in KINDS),
        "realistic, all",
        EVERY,
    ]
    return {
        name: {
            "count": {"questions": len(groups[name])},
            **{
                mode: {
                    metric: round(sum(r[mode][metric] for r in groups[name]) / len(groups[name]), 3)
                    for metric in groups[name][0][mode]
                }
                for mode in MODES
            },
        }
        for name in order
        if groups.get(name)
    }


EVERY: Final = "every question"
TYPES: Final = ("titlefree", *(f"all {kind}" for kind in KINDS))
"""The query types the fusion rule is checked on: the title-free set and each kind over every
language (a language's single kind has 2-5 questions: too few to judge)."""
OVERALL: Final = ("realistic, all", EVERY)


def fusion_verdict(
    summary: dict[str, dict[str, dict[str, float]]],
) -> tuple[list[str], list[str]]:
    """Where hybrid breaks the rule (empty when it holds), and the languages where it is more
    than the slack below the better side (reported, not ruled on)."""
    broken, languages = [], []
    for name, figures in summary.items():
        best = max(figures["lexical"]["mrr"], figures["semantic"]["mrr"])
        if figures["hybrid"]["mrr"] >= best - FUSION_SLACK:
            continue
        line = f"{name}: hybrid MRR {figures['hybrid']['mrr']:.3f} < best {best:.3f}"
        if name.startswith(TYPES):
            broken.append(line)
        elif name.endswith(" all") and name not in OVERALL:
            languages.append(line)
    for name in OVERALL:
        figures = summary.get(name)
        if figures and figures["hybrid"]["mrr"] <= max(
            figures["lexical"]["mrr"], figures["semantic"]["mrr"]
        ):
            broken.append(f"{name}: hybrid MRR is not above both lexical and semantic")
    return broken, languages


def report(figures: dict[str, Any]) -> str:
    lines = [f"embedder {figures['embedder']}"]
    lines += [
        f"  {v['vault']}: {v['notes']} notes, {v['chunks']} chunks, indexed and embedded in "
        f"{v['index_and_embed_s']} s; {v['vector_search']} vector search, recall@10 against "
        f"exact {v['vector_recall_at_10']:.3f}"
        for v in figures["vaults"]
    ]
    head = " | ".join(f"{mode:^23}" for mode in MODES)
    lines.append(f"{'questions':<24} {'n':>3} | {head}")
    lines.append(f"{'':<24} {'':>3} | " + " | ".join(["  R@1   R@5  R@10   MRR"] * 3))
    for name, values in figures["summary"].items():
        cells = " | ".join(
            " ".join(
                f"{values[mode][m]:5.2f}" for m in ("recall@1", "recall@5", "recall@10", "mrr")
            )
            for mode in MODES
        )
        lines.append(f"{name:<24} {values['count']['questions']:>3} | {cells}")
    return "\n".join(lines)


@contextmanager
def minilm_server() -> Iterator[str]:
    """bench/embed_server.py on a free port of 127.0.0.1, until the block ends: its base URL."""
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("embed_server.py")), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = ""
        for _ in range(20):  # its first line says where it serves
            line = server.stdout.readline()
            if "http://" in line or not line:
                break
        if "http://" not in line:
            raise Refused(f"bench/embed_server.py did not start ({line.strip() or 'no output'}).")
        yield line.split()[-1]
    finally:
        server.terminate()
        server.wait(10)


async def run(
    spec: str, base_url: str | None, vaults: Path, which: str, ann_threshold: int
) -> dict[str, Any]:
    asked = questions(which)
    by_vault: dict[str, list[Question]] = defaultdict(list)
    for question in asked:
        by_vault[question[0]].append(question)
    infos, answers = [], []
    model = spec
    for language, group in by_vault.items():
        info, found = await measure_vault(spec, base_url, vaults / language, group, ann_threshold)
        model = info.pop("model")
        infos.append(info)
        answers += found
    summary = summarise(answers)
    return {"embedder": model, "vaults": infos, "summary": summary, "answers": answers}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", help="KIND:MODEL (default: the deterministic fake)")
    parser.add_argument("--embedder-base-url", help="the embedding server's address")
    parser.add_argument("--minilm", action="store_true", help="all-MiniLM-L6-v2, served here")
    parser.add_argument(
        "--set",
        choices=("titlefree", "realistic", "all", "heldout"),
        default="all",
        help="all: the title-free and realistic sets (tuned on); heldout: questions never tuned "
        "on (bench/retrieval_heldout.py)",
    )
    parser.add_argument("--vaults", type=Path, default=VAULTS, help="the help vaults' folder")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--ann-threshold",
        type=int,
        default=ANN_THRESHOLD,
        help="chunks from which the approximate vector index answers (1: always)",
    )
    args = parser.parse_args()
    problems = check_questions()
    if problems:
        print("Questions use their target's title words:\n" + "\n".join(problems))
        return 2
    if not (args.vaults / "en").is_dir():
        print(f"Skipped: the shared help vaults are not at {args.vaults}.")
        return 0
    if args.set != "titlefree" and (missing := check_realistic(args.vaults, questions(args.set))):
        print("Expected notes missing from the vaults:\n" + "\n".join(missing))
        return 2
    try:
        if args.minilm:
            with minilm_server() as url:
                figures = asyncio.run(run(MINILM, url, args.vaults, args.set, args.ann_threshold))
        else:
            spec = args.embedder or FAKE
            figures = asyncio.run(
                run(spec, args.embedder_base_url, args.vaults, args.set, args.ann_threshold)
            )
    except Refused as exc:
        print(f"FAIL: {exc} No figures printed.", file=sys.stderr)
        return 2
    print(report(figures))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    figures["date"] = datetime.now(UTC).strftime("%Y-%m-%d")
    args.out.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    broken, languages = fusion_verdict(figures["summary"])
    for line in languages:
        print(f"language (not ruled on): {line}")
    for line in broken:
        print(f"FUSION RULE: {line}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
