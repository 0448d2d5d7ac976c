"""A real embedding model behind an OpenAI-compatible ``POST /v1/embeddings`` on 127.0.0.1, so
the benchmarks measure the product's own OpenAI embedder path (SDK, batching, retries) with
all-MiniLM-L6-v2 (bench/minilm.py) on any machine, with no API and no download.

Vectors are kept in a small SQLite cache keyed by the text's sha256 (``--cache``), so a second
run of the retrieval benchmark embeds nothing again. On a CPU the model takes about 0.2-0.5 s
per 256-token chunk: the first run over a help vault takes minutes, which is also what the
"a slow embedder finishes" behaviour of the embedder is measured against.

    .venv/bin/python bench/embed_server.py --port 8765     # then, in another shell:
    .venv/bin/python bench/retrieval.py --embedder openai:all-MiniLM-L6-v2 \\
        --embedder-base-url http://127.0.0.1:8765/v1
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import os
import sqlite3
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Final

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from bench.minilm import MiniLM, check, model_dir

MODEL: Final = "all-MiniLM-L6-v2"
DEFAULT_CACHE: Final = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / (
    "ai-bridge/minilm-vectors.sqlite3"
)


class CachedEncoder:
    """MiniLM with a vector cache by text; one encoding at a time (the model is CPU-bound)."""

    def __init__(self, cache: Path) -> None:
        self.model = MiniLM(model_dir())
        check(self.model)  # the published similarities, or no server
        cache.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(cache, check_same_thread=False, isolation_level=None)
        self._db.execute("CREATE TABLE IF NOT EXISTS v (hash TEXT PRIMARY KEY, vector BLOB)")
        self._lock = threading.Lock()

    def encode(self, texts: list[str]) -> np.ndarray:
        keys = [hashlib.sha256(text.encode()).hexdigest() for text in texts]
        with self._lock:
            marks = ", ".join("?" * len(keys))
            sql = f"SELECT hash, vector FROM v WHERE hash IN ({marks})"
            known = dict(self._db.execute(sql, keys))
            missing = [i for i, key in enumerate(keys) if key not in known]
            if missing:
                made = self.model.encode([texts[i] for i in missing])
                self._db.executemany(
                    "INSERT OR REPLACE INTO v VALUES (?, ?)",
                    [(keys[i], made[row].tobytes()) for row, i in enumerate(missing)],
                )
                known.update({keys[i]: made[row].tobytes() for row, i in enumerate(missing)})
        return np.stack([np.frombuffer(known[key], dtype=np.float32) for key in keys])


def handler(encoder: CachedEncoder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if not self.path.rstrip("/").endswith("/embeddings"):
                self._send(404, {"error": {"message": "not found", "type": "not_found"}})
                return
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            texts = body.get("input")
            texts = [texts] if isinstance(texts, str) else list(texts or [])
            vectors = encoder.encode([str(text) for text in texts])
            as_base64 = body.get("encoding_format") == "base64"
            data = [
                {
                    "object": "embedding",
                    "index": i,
                    "embedding": base64.b64encode(vector.astype("<f4").tobytes()).decode()
                    if as_base64
                    else vector.tolist(),
                }
                for i, vector in enumerate(vectors)
            ]
            tokens = sum(len(text) // 4 + 1 for text in texts)
            self._send(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": body.get("model", MODEL),
                    "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
                },
            )

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args()
    encoder = CachedEncoder(args.cache)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler(encoder))
    print(f"serving {MODEL} at http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
