"""--embedder and its settings: which embedder they build, where it points, what stops serve."""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_service.embedders import Model2VecEmbedder, OllamaEmbedder, OpenAIEmbedder
from llm_service.embedders.tiny_model import write_tiny_model
from plugin_bridge.app.settings.config import (
    BridgeSettings,
    SettingsError,
    build_embedder,
    config_file,
    embedder_problem,
    load_settings,
)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OLLAMA_HOST", "AI_BRIDGE_EMBEDDER"):
        monkeypatch.delenv(name, raising=False)


def settings(**values: object) -> BridgeSettings:
    return BridgeSettings(vault=Path("v"), **values)  # type: ignore[arg-type]


def test_no_embedder_means_lexical_only() -> None:
    """Nothing configured builds nothing and stops nothing."""
    assert build_embedder(settings()) is None
    assert embedder_problem(settings(), None) is None


def test_ollama_embedder_uses_the_embedder_url_then_ollama_host() -> None:
    """--embedder-base-url wins; else OLLAMA_HOST; else the local default."""
    given = build_embedder(
        settings(embedder="ollama:nomic-embed-text", embedder_base_url="http://127.0.0.1:9")
    )
    assert isinstance(given, OllamaEmbedder) and given.base_url == "http://127.0.0.1:9"
    hosted = build_embedder(settings(embedder="ollama:bge-m3", ollama_host="127.0.0.1:7"))
    assert hosted is not None and hosted.base_url == "http://127.0.0.1:7"
    assert build_embedder(settings(embedder="ollama:bge-m3")).base_url == (  # type: ignore[union-attr]
        "http://127.0.0.1:11434"
    )


def test_openai_embedder_needs_a_key_or_a_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without OPENAI_API_KEY or a base URL serve refuses, naming what to set."""
    bare = settings(embedder="openai:text-embedding-3-small")
    embedder = build_embedder(bare)
    assert isinstance(embedder, OpenAIEmbedder) and embedder.paid
    problem = embedder_problem(bare, embedder)
    assert problem is not None and "OPENAI_API_KEY" in problem
    local = settings(
        embedder="openai:nomic-embed-text", embedder_base_url="http://127.0.0.1:1234/v1"
    )
    local_embedder = build_embedder(local)
    assert local_embedder is not None and not local_embedder.paid
    assert embedder_problem(local, local_embedder) is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123456")
    keyed = settings(embedder="openai:text-embedding-3-small")
    assert embedder_problem(keyed, build_embedder(keyed)) is None


def test_model2vec_folder_is_checked_at_start(tmp_path: Path) -> None:
    """A missing folder is one sentence naming it; a real one loads without a download."""
    missing = settings(embedder=f"model2vec:{tmp_path / 'absent'}")
    problem = embedder_problem(missing, build_embedder(missing))
    assert problem is not None and "absent" in problem and "embedder model2vec:DIR" in problem
    folder = write_tiny_model(tmp_path / "tiny", ["word"])
    present = settings(embedder=f"model2vec:{folder}")
    embedder = build_embedder(present)
    assert isinstance(embedder, Model2VecEmbedder)
    assert embedder_problem(present, embedder) is None and embedder.dims == 32


def test_a_bad_spec_is_a_settings_error_naming_the_forms(tmp_path: Path) -> None:
    """--embedder cohere:x fails with the accepted forms, from a flag or from the file."""
    with pytest.raises(SettingsError, match="ollama:MODEL, openai:MODEL, model2vec:PATH"):
        load_settings(vault=tmp_path, embedder="cohere:x")
    config_file().write_text('embedder = "ollama:bge-m3"\n', encoding="utf-8")
    assert load_settings(vault=tmp_path).embedder == "ollama:bge-m3"


def test_embedder_base_url_without_embedder_is_refused() -> None:
    """A base URL for no embedder is a mistake serve names."""
    problem = embedder_problem(settings(embedder_base_url="http://127.0.0.1:1"), None)
    assert problem is not None and "--embedder" in problem
