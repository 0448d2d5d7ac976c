"""A static embedding model distilled from all-MiniLM-L6-v2 (bench/minilm.py), model2vec's recipe:
each vocabulary token embedded alone through the model (``[CLS] token [SEP]``, the token's output),
PCA to ``--dims`` dimensions, each token's row weighted by its Zipf rank (the tokenizer's ids
are roughly by frequency: common tokens weigh less, as SIF weighting does), written in the
model2vec folder format ``llm_service/embedders/model2vec.py`` loads (``config.json``,
``tokenizer.json``, ``model.safetensors``). The output goes to a cache folder, never to git.

One vector per token and a mean at query time: no server, no network, about a microsecond per
token. The model is MiniLM's (Apache-2.0), so is what is distilled from it.

    .venv/bin/python -m bench.distill                 # ~/.cache/ai-bridge/minilm-static-256
    .venv/bin/python -m bench.distill --dims 128 --out DIR
    .venv/bin/python -m bench.retrieval --embedder model2vec:~/.cache/ai-bridge/minilm-static-256
"""

from __future__ import annotations

import argparse
import json
import os
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


def default_folder(dims: int) -> Path:
    return CACHE / f"minilm-static-{dims}"


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


def distill(out: Path, dims: int) -> dict[str, object]:
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
    rows = np.zeros((count, dims), dtype=np.float32)
    rows[kept] = pca(embedded, dims) * zipf_weights(count)[kept, None]
    tokenizer.no_padding()  # the model's own pads to 128: a mean would count the pads
    tokenizer.no_truncation()
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(out / "tokenizer.json"))
    save_file({"embeddings": rows.astype(np.float16)}, str(out / "model.safetensors"))
    config = {
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "tokenizer_name": "sentence-transformers/all-MiniLM-L6-v2",
        "apply_pca": dims,
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
    args = parser.parse_args()
    if not 8 <= args.dims <= 384:
        print("--dims must be between 8 and 384 (MiniLM's width).", file=sys.stderr)
        return 2
    made = distill(args.out or default_folder(args.dims), args.dims)
    print(json.dumps(made))
    return 0


if __name__ == "__main__":
    sys.exit(main())
