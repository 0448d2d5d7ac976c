"""A model2vec static model from a folder on disk: ``tokenizer.json`` plus ``model.safetensors``
(or a hub id whose files are already in the local Hugging Face cache).

Encoding is what model2vec's ``StaticModel.encode`` does: tokenize without special tokens, drop
the unknown token, look up each token's row (through ``mapping`` and scaled by ``weights`` when
the file has them), average and normalise. It runs on the CPU in a worker thread, costs nothing
and never goes online: a missing folder is an error that says how to get one.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Unpack

from llm_service import lazy
from llm_service.embedders.base import Batch, Embedder, EmbedderOptions
from llm_service.errors import LLMError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    import safetensors.numpy as safetensors_numpy
    import tokenizers
    from tokenizers import Tokenizer
else:
    np = lazy.module("numpy")
    safetensors_numpy = lazy.module("safetensors.numpy")
    tokenizers = lazy.module("tokenizers")

MAX_TEXT_TOKENS: Final = 512
"""Tokens of a text that count (model2vec's default ``max_length``)."""
CHARS_PER_TOKEN_CAP: Final = 16
"""Texts are cut to ``MAX_TEXT_TOKENS * CHARS_PER_TOKEN_CAP`` characters before tokenizing."""


class Model2VecEmbedder(Embedder):
    """``Model2VecEmbedder("/models/potion-base-8M")``: the folder's model, loaded on first use."""

    name = "model2vec"
    kind = "model2vec"
    default_batch_size = 256

    def __init__(self, model: str, **options: Unpack[EmbedderOptions]) -> None:
        options.setdefault("concurrency", 1)  # CPU-bound: one batch at a time
        super().__init__(model, **options)
        self.folder = resolve_folder(model)
        self._loaded: _Model | None = None

    @property
    def model_id(self) -> str:
        return f"{self.kind}:{Path(self.model.rstrip('/')).name}"

    def load(self) -> None:
        """Read the folder now (else on first use); LLMError(invalid_request) when it is not
        a model2vec model."""
        if self._loaded is None:
            self._loaded = _Model.read(self.folder)
            self.dims = self._loaded.dims

    async def _embed_once(self, texts: list[str]) -> Batch:
        return Batch(await asyncio.to_thread(self._encode, texts))

    def _encode(self, texts: list[str]) -> Any:
        self.load()
        assert self._loaded is not None
        return self._loaded.encode(texts)

    def _convert_error(self, exc: Exception) -> LLMError:
        return LLMError(
            f"The model2vec model in {self.folder} failed ({type(exc).__name__}: {exc}); check "
            "that the folder holds a complete model2vec model.",
            code="invalid_request",
            provider=self.name,
        )


def resolve_folder(model: str) -> Path:
    """``model`` as a folder: a path as given, or a hub id (``minishlab/potion-base-8M``) that
    is already in the local Hugging Face cache (``$HF_HOME/hub``); never a download."""
    path = Path(model).expanduser()
    if path.exists() or model.count("/") != 1 or model.startswith((".", "/", "~")):
        return path
    home = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")
    snapshots = home / "hub" / f"models--{model.replace('/', '--')}" / "snapshots"
    found = sorted(snapshots.glob("*/model.safetensors"), key=lambda f: f.stat().st_mtime)
    return found[-1].parent if found else path


class _Model:
    def __init__(
        self,
        tokenizer: Tokenizer,
        embeddings: npt.NDArray[np.float32],
        unk_id: int | None,
        normalize: bool,
    ) -> None:
        self.tokenizer = tokenizer
        self.embeddings = embeddings
        self.unk_id = unk_id
        self.normalize = normalize
        self.dims = int(embeddings.shape[1])

    @classmethod
    def read(cls, folder: Path) -> _Model:
        files = [folder / "tokenizer.json", folder / "model.safetensors"]
        missing = [f.name for f in files if not f.is_file()]
        if missing:
            where = "is not a folder" if not folder.is_dir() else f"has no {', '.join(missing)}"
            raise LLMError(
                f"The model2vec model {folder} {where}; download one (for example "
                "`huggingface-cli download minishlab/potion-base-8M --local-dir DIR`) and use the "
                "embedder model2vec:DIR.",
                code="invalid_request",
                provider="model2vec",
            )
        tensors = safetensors_numpy.load_file(str(files[1]))
        if "embeddings" not in tensors:
            raise LLMError(
                f"{files[1]} has no 'embeddings' tensor; it is not a model2vec model.",
                code="invalid_request",
                provider="model2vec",
            )
        embeddings = tensors["embeddings"].astype(np.float32)
        if "weights" in tensors:
            embeddings = embeddings * tensors["weights"].astype(np.float32)[:, None]
        if "mapping" in tensors:
            embeddings = embeddings[tensors["mapping"].astype(np.int64)]
        config = _config(folder / "config.json")
        tokenizer = tokenizers.Tokenizer.from_file(str(files[0]))
        unk_token = config.get("unk_token") or "[UNK]"
        unk_id = tokenizer.token_to_id(str(unk_token))
        return cls(tokenizer, embeddings, unk_id, bool(config.get("normalize", True)))

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        cut = MAX_TEXT_TOKENS * CHARS_PER_TOKEN_CAP
        encodings = self.tokenizer.encode_batch_fast(
            [text[:cut] for text in texts], add_special_tokens=False
        )
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        rows = len(self.embeddings)
        for i, encoding in enumerate(encodings):
            ids = [t for t in encoding.ids[:MAX_TEXT_TOKENS] if t != self.unk_id and t < rows]
            if ids:
                out[i] = self.embeddings[ids].mean(axis=0)
        return out


def _config(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
