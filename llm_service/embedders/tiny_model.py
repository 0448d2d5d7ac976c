"""Write a tiny model2vec model to a folder: a word-level tokenizer and random unit vectors.

For tests, demos and benchmarks on machines that cannot download a real model: it has the real
file format (``tokenizer.json``, ``model.safetensors``, ``config.json``), so loading and encoding
run the same code as for a downloaded model. Words listed in one ``groups`` entry share most of
their vector, a stand-in for synonyms. CJK ideographs are split one per token, as BERT does.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from llm_service import lazy

if TYPE_CHECKING:
    import numpy as np
    import safetensors.numpy as safetensors_numpy
    import tokenizers
else:
    np = lazy.module("numpy")
    safetensors_numpy = lazy.module("safetensors.numpy")
    tokenizers = lazy.module("tokenizers")

UNK = "[UNK]"


def write_tiny_model(
    folder: Path,
    words: Iterable[str],
    *,
    dims: int = 32,
    groups: Sequence[Sequence[str]] = (),
    seed: int = 0,
) -> Path:
    """Create ``folder`` with a model knowing ``words`` (lower-cased) and return it."""
    vocab = {UNK: 0}
    for word in [*words, *(w for group in groups for w in group)]:
        vocab.setdefault(word.lower(), len(vocab))
    rng = np.random.default_rng(seed)
    table = rng.standard_normal((len(vocab), dims)).astype(np.float32)
    table[0] = 0.0
    for group in groups:
        shared = rng.standard_normal(dims).astype(np.float32) * 3.0
        for word in group:
            table[vocab[word.lower()]] += shared
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token=UNK))
    tokenizer.normalizer = tokenizers.normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=False, lowercase=True
    )
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    folder.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(folder / "tokenizer.json"))
    safetensors_numpy.save_file({"embeddings": table}, str(folder / "model.safetensors"))
    config = {"model_type": "model2vec", "normalize": True, "unk_token": UNK, "hidden_dim": dims}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder
