"""A static embedding model distilled from all-MiniLM-L6-v2 (bench/minilm.py), model2vec's recipe:
each vocabulary token embedded alone through the model (``[CLS] token [SEP]``, the token's output),
PCA to ``--dims`` dimensions, each token's row weighted by its Zipf rank (the tokenizer's ids
are roughly by frequency: common tokens weigh less, as SIF weighting does), written in the
model2vec folder format ``llm_service/embedders/model2vec.py`` loads (``config.json``,
``tokenizer.json``, ``model.safetensors``). The output goes to a cache folder, never to git.

With ``--learn`` the rows are then fitted to MiniLM's own vectors of whole sentences (model2vec's
tokenlearn idea, in small): sentences of this machine's documentation (package metadata and
docs, /usr/share/doc; never a help vault), each token seen 5+ times moved by full-batch Adam so
that the mean of a sentence's rows points where MiniLM's vector of the sentence does.

One vector per token and a mean at query time: no server, no network, about a microsecond per
token. The model is MiniLM's (Apache-2.0), so is what is distilled from it.

    .venv/bin/python -m bench.distill                 # ~/.cache/ai-bridge/minilm-static-256
    .venv/bin/python -m bench.distill --dims 128 --out DIR
    .venv/bin/python -m bench.distill --learn --dims 384     # ~/.cache/ai-bridge/minilm-learnt-384
    .venv/bin/python -m bench.retrieval --embedder model2vec:~/.cache/ai-bridge/minilm-static-256
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from bench.minilm import MiniLM, check, model_dir

if TYPE_CHECKING:
    import numpy.typing as npt

CACHE: Final = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ai-bridge"
SIF: Final = 1e-4
"""model2vec's SIF coefficient: a token's weight is SIF / (SIF + p), p its Zipf probability."""
BATCH: Final = 512
MIN_SEEN: Final = 5
"""Tokens seen fewer times in the sentences keep their distilled row."""
STEPS: Final = 100
RATE: Final = 1e-3
SENTENCE_WORDS: Final = (6, 40)
_MARKUP: Final = re.compile(r"http|::|==|[`|\\{}<>=]")


def default_folder(dims: int, learnt: bool = False) -> Path:
    return CACHE / f"minilm-{'learnt' if learnt else 'static'}-{dims}"


def doc_sentences() -> list[str]:
    """English sentences of 6-40 words from this machine's documentation, deduplicated and
    shuffled (seed 41): the environment's package metadata and docs, and /usr/share/doc."""
    packages = [*Path(sys.prefix).glob("lib/python*/site-packages")]
    files = [
        *(f for root in packages for f in root.glob("*.dist-info/METADATA")),
        *(f for root in packages for ext in ("md", "rst") for f in root.rglob(f"*.{ext}")),
        *Path("/usr/share/doc").rglob("*.txt"),
    ]
    seen: set[str] = set()
    found: list[str] = []
    for file in files:
        try:
            text = file.read_text(encoding="utf-8", errors="ignore")
        except OSError:
            continue
        text = re.sub(r"```.*?```", "", text, flags=re.S)
        for sentence in re.split(r"(?<=[.!?])\s+", text):
            sentence = " ".join(sentence.split())
            if not SENTENCE_WORDS[0] <= len(sentence.split()) <= SENTENCE_WORDS[1]:
                continue
            letters = sum(c.isalpha() for c in sentence) / len(sentence)
            if letters < 0.75 or not sentence.isascii() or _MARKUP.search(sentence):
                continue
            if sentence.lower() not in seen:
                seen.add(sentence.lower())
                found.append(sentence)
    random.Random(41).shuffle(found)
    return found


def learn(
    rows: npt.NDArray[np.float32], ids: list[list[int]], teacher: npt.NDArray[np.float32]
) -> npt.NDArray[np.float32]:
    """``rows`` moved so that the mean of each sentence's rows (``ids``) points as MiniLM's
    vector of it (``teacher``) does: mean squared error to the teacher scaled to the rows'
    typical mean's length, full-batch Adam, only tokens seen MIN_SEEN+ times."""
    flat = np.concatenate([np.asarray(s, dtype=np.int64) for s in ids])
    lengths = np.array([len(s) for s in ids], dtype=np.float32)[:, None]
    starts = np.concatenate([[0], np.cumsum([len(s) for s in ids])[:-1]])
    owner = np.repeat(np.arange(len(ids)), [len(s) for s in ids])

    def means(table: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        out = np.empty((len(ids), table.shape[1]), dtype=np.float32)
        for a in range(0, len(ids), 1000):  # a thousand sentences' rows at a time
            b = min(a + 1000, len(ids))
            low, high = starts[a], starts[b - 1] + len(ids[b - 1])
            out[a:b] = np.add.reduceat(table[flat[low:high]], starts[a:b] - low)
        return out / lengths

    target = teacher * float(np.linalg.norm(means(rows), axis=1).mean())
    moving = (np.bincount(flat, minlength=len(rows)) >= MIN_SEEN)[:, None]
    learnt, first, second = rows.copy(), np.zeros_like(rows), np.zeros_like(rows)
    for step in range(1, STEPS + 1):
        residual = (means(learnt) - target) / lengths / len(ids)
        gradient = np.empty_like(learnt)
        for d in range(learnt.shape[1]):
            gradient[:, d] = np.bincount(flat, weights=residual[owner, d], minlength=len(rows))
        first = 0.9 * first + 0.1 * gradient
        second = 0.999 * second + 0.001 * gradient**2
        update = (first / (1 - 0.9**step)) / (np.sqrt(second / (1 - 0.999**step)) + 1e-12)
        learnt -= moving * RATE * update
    return learnt


def token_vectors(model: MiniLM, ids: list[int], cls: int, sep: int) -> npt.NDArray[np.float32]:
    """Each token alone through the model, ``[CLS] token [SEP]``: the token's own output, unit
    length (measured against the mean of the three outputs, model2vec's pooling, and the
    [CLS] one: on the help vaults' questions it found the most, docs/benchmarks.md)."""
    out = np.zeros((len(ids), model.dims), dtype=np.float32)
    for start in range(0, len(ids), BATCH):
        rows = ids[start : start + BATCH]
        batch = np.array([[cls, token, sep] for token in rows], dtype=np.int64)
        out[start : start + len(rows)] = model.hidden(batch, np.ones(batch.shape, np.float32))[:, 1]
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def pca(vectors: npt.NDArray[np.float32], dims: int) -> npt.NDArray[np.float32]:
    """``vectors`` centred and projected on their ``dims`` main axes."""
    centred = vectors - vectors.mean(axis=0)
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    return (centred @ axes[:dims].T).astype(np.float32)


def zipf_weights(count: int) -> npt.NDArray[np.float32]:
    """SIF weights by rank (the token's id): p = (1 / (rank + 2)) / sum, w = SIF / (SIF + p)."""
    inverse = 1.0 / np.arange(2, count + 2, dtype=np.float64)
    probability = inverse / inverse.sum()
    return (SIF / (SIF + probability)).astype(np.float32)


def distill(out: Path, dims: int, sentences: list[str] | None = None) -> dict[str, object]:
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer

    source = model_dir()
    model = MiniLM(source)
    check(model)  # the published similarities, or no model
    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    vocabulary = tokenizer.get_vocab()
    count = len(vocabulary)
    special = {i for token, i in vocabulary.items() if token[:1] + token[-1:] == "[]"}
    kept = [i for i in range(count) if i not in special]
    started = time.perf_counter()
    embedded = token_vectors(model, kept, vocabulary["[CLS]"], vocabulary["[SEP]"])
    took = time.perf_counter() - started
    weights = zipf_weights(count)[kept, None]
    tokenizer.no_padding()  # the model's own pads to 128: a mean would count the pads
    tokenizer.no_truncation()
    if sentences:
        full = np.zeros((count, model.dims), dtype=np.float32)
        full[kept] = embedded * weights
        unknown = {vocabulary["[UNK]"], *special}
        ids = [
            [t for t in e.ids if t not in unknown]
            for e in tokenizer.encode_batch(sentences, add_special_tokens=False)
        ]
        sentences = [text for text, found in zip(sentences, ids, strict=True) if found]
        ids = [found for found in ids if found]
        embedded = learn(full, ids, model.encode(sentences, batch=32))[kept] / weights
    rows = np.zeros((count, dims), dtype=np.float32)
    rows[kept] = (pca(embedded, dims) if dims < model.dims else embedded) * weights
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(out / "tokenizer.json"))
    save_file({"embeddings": rows.astype(np.float16)}, str(out / "model.safetensors"))
    config = {
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "tokenizer_name": "sentence-transformers/all-MiniLM-L6-v2",
        "apply_pca": dims if dims < model.dims else None,
        "learnt_from_sentences": len(sentences or []),
        "apply_zipf": True,
        "sif_coefficient": SIF,
        "hidden_dim": dims,
        "normalize": True,
        "unk_token": "[UNK]",
        "license": "apache-2.0",
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    size = sum(f.stat().st_size for f in out.iterdir())
    return {
        "folder": str(out),
        "tokens": len(kept),
        "dims": dims,
        "embed_s": round(took, 1),
        "bytes": size,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, default=256, help="PCA dimensions (128-384)")
    parser.add_argument("--out", type=Path, help="the model folder (default: the cache)")
    parser.add_argument(
        "--learn", action="store_true", help="fit the rows to MiniLM's vectors of sentences"
    )
    parser.add_argument("--sentences", type=Path, help="with --learn: one sentence a line")
    args = parser.parse_args()
    if not 8 <= args.dims <= 384:
        print("--dims must be between 8 and 384 (MiniLM's width).", file=sys.stderr)
        return 2
    sentences = None
    if args.learn:
        sentences = (
            args.sentences.read_text(encoding="utf-8").splitlines()
            if args.sentences
            else doc_sentences()
        )
    made = distill(args.out or default_folder(args.dims, args.learn), args.dims, sentences)
    print(json.dumps(made))
    return 0


if __name__ == "__main__":
    sys.exit(main())
