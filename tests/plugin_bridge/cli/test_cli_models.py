"""The models command and the model cache: a fresh list (under 24 h) is served from the data
folder, an expired one is asked for again, --refresh always asks."""

from __future__ import annotations

import json
import time
from pathlib import Path

from llm_service.discovery import MODELS_CACHE_FILE, TTL_SECONDS
from tests.fakes import openai as fake
from tests.fakes.http import FakeHTTPServer
from tests.helpers.bridge import copy_example_vault
from tests.helpers.serve import run_cli


def _age_cache(data_dir: Path, seconds: float) -> None:
    """Make every cached list ``seconds`` old."""
    path = data_dir / MODELS_CACHE_FILE
    entries = json.loads(path.read_text(encoding="utf-8"))
    for entry in entries.values():
        entry["fetchedAt"] = time.time() - seconds
    path.write_text(json.dumps(entries), encoding="utf-8")


async def test_models_prints_the_list_and_refetches_only_an_expired_cache(
    tmp_path: Path, fake_http: FakeHTTPServer
) -> None:
    """First run asks the server; a cache 23 h old answers the next run; one 25 h old is
    asked for again; --refresh asks even when fresh. Unknown values print as '?'."""
    vault, data = copy_example_vault(tmp_path), tmp_path / "data"
    base = ["models", "--vault", str(vault), "--data-dir", str(data), "--provider", "openai"]
    base += ["--base-url", fake_http.url + "/v1"]
    fake_http.enqueue(
        fake.models_reply("gpt-5.4-mini", "qwen3-8b"),
        fake.models_reply("gpt-5.4-mini", "qwen3-8b", "qwen3-14b"),
        fake.models_reply("qwen3-32b"),
    )
    outputs = [await run_cli(tmp_path, *base)]
    _age_cache(data, TTL_SECONDS - 3600)
    outputs.append(await run_cli(tmp_path, *base))
    _age_cache(data, TTL_SECONDS + 3600)
    outputs.append(await run_cli(tmp_path, *base))
    outputs.append(await run_cli(tmp_path, *base, "--refresh"))
    assert [code for code, _out, _err in outputs] == [0, 0, 0, 0], outputs
    first, fresh, expired, refreshed = (out for _code, out, _err in outputs)
    assert "2 models, from the provider just now" in first
    assert "2 models, from the cache" in fresh
    assert "3 models, from the provider just now" in expired
    assert "qwen3-32b" in refreshed and "qwen3-8b" not in refreshed
    header, gpt, local = first.splitlines()[1:4]
    assert header.split() == [
        "model",
        "context",
        "output",
        "tools",
        "$/Mtok",
        "in",
        "$/Mtok",
        "out",
    ]
    assert gpt.split()[:4] == ["gpt-5.4-mini", "400,000", "128,000", "yes"]
    assert local.split() == ["qwen3-8b", "?", "?", "?", "?", "?"]
    assert len(fake_http.requests) == 3


async def test_models_without_a_provider_says_what_to_set(tmp_path: Path) -> None:
    """No provider configured: exit 2 with the sentence that names the key to set."""
    vault = copy_example_vault(tmp_path)
    code, _out, err = await run_cli(tmp_path, "models", "--vault", str(vault))
    assert code == 2 and "ANTHROPIC_API_KEY" in err and "Traceback" not in err
