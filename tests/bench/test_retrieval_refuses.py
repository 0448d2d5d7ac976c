"""bench/retrieval.py prints no figure it did not measure: with no vectors ready it exits
non-zero and says why (here the embedding server refuses the key)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT
from tests.fakes.http import FakeHTTPServer, Reply


async def test_no_vectors_ready_is_a_failure_that_says_why(
    fake_http: FakeHTTPServer, tmp_path: Path
) -> None:
    vault = tmp_path / "vaults" / "en"
    vault.mkdir(parents=True)
    (vault / "Sync.md").write_text("# Sync\nKeep notes the same on every device.\n")
    refused = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
    fake_http.enqueue(*[Reply.json(refused, status=401)] * 4)
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        str(REPO_ROOT / "bench" / "retrieval.py"),
        "--embedder",
        "openai:text-embedding-3-small",
        "--embedder-base-url",
        fake_http.url + "/v1",
        "--vaults",
        str(tmp_path / "vaults"),
        "--set",
        "titlefree",
        "--out",
        str(tmp_path / "out.json"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "OPENAI_API_KEY": "sk-wrong"},
    )
    out, err = await asyncio.wait_for(process.communicate(), 50)
    assert process.returncode == 2
    assert "no vectors are ready" in err.decode() and "No figures printed" in err.decode()
    assert "MRR" not in out.decode() and not (tmp_path / "out.json").exists()
    assert fake_http.requests and fake_http.requests[0].path == "/v1/embeddings"
