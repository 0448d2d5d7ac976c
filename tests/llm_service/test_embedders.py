"""Embedders against fakes of Ollama /api/embed and OpenAI /v1/embeddings, a tiny model2vec
model built here, the deterministic fake embedder and the throttle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from llm_service.embedders import (
    FakeEmbedder,
    Model2VecEmbedder,
    OllamaEmbedder,
    OpenAIEmbedder,
    Throttle,
    estimate_tokens,
    make_embedder,
    parse_spec,
)
from llm_service.embedders.tiny_model import write_tiny_model
from llm_service.errors import LLMError
from tests.fakes import embeddings as fake
from tests.fakes.http import HANG, FakeHTTPServer, Reply


class FakeClock:
    """A clock that only moves when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 6))
        self.now += seconds


def options(**kw: Any) -> dict[str, Any]:
    return {"max_attempts": 3, "backoff_base": 0.0, "timeout": 5.0, **kw}


def norms(vectors: np.ndarray) -> list[float]:
    return [round(float(n), 5) for n in np.linalg.norm(vectors, axis=1)]


# -- Ollama ----------------------------------------------------------------------------------


async def test_ollama_sends_batches_to_api_embed_and_returns_unit_vectors(
    fake_http: FakeHTTPServer,
) -> None:
    """Three texts with batch size 2 are two POST /api/embed calls; rows come back unit length."""
    fake_http.enqueue(fake.ollama_reply([[3, 4], [0, 2]], 5), fake.ollama_reply([[1, 0]], 2))
    embedder = OllamaEmbedder(fake.OLLAMA_MODEL, base_url=fake_http.url, **options(batch_size=2))
    vectors = await embedder.embed(["a", "b", "c"])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 2)
    assert norms(vectors) == [1.0, 1.0, 1.0]
    assert vectors[0].tolist() == pytest.approx([0.6, 0.8])
    bodies = sorted((r.json()["input"] for r in fake_http.requests), key=len)
    assert bodies == [["c"], ["a", "b"]]
    assert {r.path for r in fake_http.requests} == {"/api/embed"}
    assert fake_http.requests[0].json()["model"] == fake.OLLAMA_MODEL
    assert (embedder.dims, embedder.tokens_used, embedder.model_id) == (
        2,
        7,
        "ollama:nomic-embed-text",
    )
    await embedder.aclose()


async def test_ollama_missing_model_says_how_to_pull_it(fake_http: FakeHTTPServer) -> None:
    """A 404 'model not found' is invalid_request naming `ollama pull`, and is not retried."""
    fake_http.enqueue(
        Reply.json({"error": 'model "nomic-embed-text" not found, try pulling it first'}, 404)
    )
    embedder = OllamaEmbedder(fake.OLLAMA_MODEL, base_url=fake_http.url, **options())
    with pytest.raises(LLMError) as caught:
        await embedder.embed(["x"])
    assert caught.value.code == "invalid_request"
    assert "ollama pull nomic-embed-text" in str(caught.value)
    assert len(fake_http.requests) == 1


async def test_server_errors_are_retried_like_chat(fake_http: FakeHTTPServer) -> None:
    """A 500 then a good answer: the batch succeeds on the second attempt."""
    fake_http.enqueue(Reply.json({"error": "boom"}, 500), fake.ollama_reply([[1, 1]]))
    embedder = OllamaEmbedder(fake.OLLAMA_MODEL, base_url=fake_http.url, **options())
    vectors = await embedder.embed(["x"])
    assert norms(vectors) == [1.0] and len(fake_http.requests) == 2


async def test_a_429_slows_the_job_instead_of_failing_it(fake_http: FakeHTTPServer) -> None:
    """Two 429s pause the throttle (Retry-After honoured) and the batch then goes through."""
    clock = FakeClock()
    throttle = Throttle(None, 1, clock=clock, sleep=clock.sleep)
    fake_http.enqueue(
        fake.rate_limited("3"), fake.rate_limited("0"), fake.ollama_reply([[1, 0], [0, 1]])
    )
    embedder = OllamaEmbedder(
        fake.OLLAMA_MODEL, base_url=fake_http.url, **options(throttle=throttle, max_attempts=1)
    )
    vectors = await embedder.embed(["a", "b"])
    assert vectors.shape == (2, 2)
    assert throttle.slowdowns == 2
    assert clock.sleeps[0] == 3.0  # the server's Retry-After
    assert throttle.interval > 0  # still slower than the unthrottled start


async def test_rate_limits_past_the_bound_fail_with_rate_limit(fake_http: FakeHTTPServer) -> None:
    """A server that never stops answering 429 fails the job after max_rate_limit_waits."""
    clock = FakeClock()
    fake_http.enqueue(*[fake.rate_limited("0") for _ in range(3)])
    embedder = OllamaEmbedder(
        fake.OLLAMA_MODEL,
        base_url=fake_http.url,
        **options(throttle=Throttle(clock=clock, sleep=clock.sleep), max_rate_limit_waits=2),
    )
    with pytest.raises(LLMError) as caught:
        await embedder.embed(["a"])
    assert caught.value.code == "rate_limit" and len(fake_http.requests) == 3


async def test_vectors_of_the_wrong_shape_are_invalid_response(fake_http: FakeHTTPServer) -> None:
    """One vector for two texts, or a new width mid-job, is invalid_response."""
    fake_http.enqueue(fake.ollama_reply([[1, 0]]), fake.ollama_reply([[1, 0, 0]]))
    embedder = OllamaEmbedder(fake.OLLAMA_MODEL, base_url=fake_http.url, **options())
    with pytest.raises(LLMError, match="expected 2 vectors") as caught:
        await embedder.embed(["a", "b"])
    assert caught.value.code == "invalid_response"
    embedder.dims = 2
    with pytest.raises(LLMError, match="3 dimensions, not 2"):
        await embedder.embed(["a"])


# -- OpenAI ----------------------------------------------------------------------------------


@pytest.mark.parametrize("as_base64", [True, False])
async def test_openai_decodes_base64_and_float_answers(
    fake_http: FakeHTTPServer, as_base64: bool
) -> None:
    """The request asks for base64; base64 rows and plain float rows both decode, in index order."""
    fake_http.enqueue(fake.openai_reply([[0.5, 0.25, 2.0], [0, 0, 3]], as_base64=as_base64))
    embedder = OpenAIEmbedder(
        fake.OPENAI_MODEL, "sk-test", base_url=fake_http.url + "/v1", **options()
    )
    vectors = await embedder.embed(["first", "second"])
    request = fake_http.requests[0]
    assert request.path == "/v1/embeddings"
    assert request.json()["encoding_format"] == "base64"
    assert request.json()["input"] == ["first", "second"]
    expected = np.array([0.5, 0.25, 2.0]) / np.linalg.norm([0.5, 0.25, 2.0])
    assert vectors[0].tolist() == pytest.approx(expected.tolist(), rel=1e-6)
    assert vectors[1].tolist() == pytest.approx([0, 0, 1])
    assert embedder.tokens_used == 9 and not embedder.paid
    await embedder.aclose()


async def test_openai_garbled_base64_is_invalid_response(fake_http: FakeHTTPServer) -> None:
    """An embedding string that is not base64 is invalid_response, not a crash."""
    body = {"object": "list", "data": [{"index": 0, "embedding": "%%%"}], "model": "m"}
    fake_http.enqueue(Reply.json(body))
    embedder = OpenAIEmbedder(fake.OPENAI_MODEL, "sk-x", base_url=fake_http.url, **options())
    with pytest.raises(LLMError) as caught:
        await embedder.embed(["a"])
    assert caught.value.code == "invalid_response"


async def test_openai_bad_key_is_auth_error_without_retry(fake_http: FakeHTTPServer) -> None:
    """A 401 is auth_error after one request; the key never appears in the message."""
    fake_http.enqueue(
        Reply.json({"error": {"message": "Incorrect API key provided: sk-secret1234"}}, 401)
    )
    embedder = OpenAIEmbedder(fake.OPENAI_MODEL, "sk-secret1234", base_url=fake_http.url)
    with pytest.raises(LLMError) as caught:
        await embedder.embed(["a"])
    assert caught.value.code == "auth_error" and "sk-secret1234" not in str(caught.value)
    assert len(fake_http.requests) == 1


def test_the_official_openai_api_is_paid_and_a_base_url_is_not() -> None:
    """Without a base URL the embedder bills tokens (the bridge asks first)."""
    assert OpenAIEmbedder(fake.OPENAI_MODEL, "sk-x").paid
    assert not OpenAIEmbedder(fake.OPENAI_MODEL, base_url="http://127.0.0.1:1/v1").paid


# -- model2vec -------------------------------------------------------------------------------


async def test_model2vec_folder_embeds_like_model2vec(tmp_path: Path) -> None:
    """Mean of known token rows, normalised; unknown words count for nothing; synonyms near."""
    folder = write_tiny_model(
        tmp_path / "tiny", ["garden", "tomato", "server"], dims=16, groups=[["car", "auto"]]
    )
    assert (folder / "model.safetensors").stat().st_size < 10_000
    embedder = Model2VecEmbedder(str(folder))
    vectors = await embedder.embed(["Garden tomato", "garden TOMATO zzz", "car", "auto", "qqq"])
    assert embedder.dims == 16 and embedder.model_id == "model2vec:tiny"
    assert float(vectors[0] @ vectors[1]) == pytest.approx(1.0, abs=1e-6)
    assert float(vectors[2] @ vectors[3]) > 0.7
    assert norms(vectors)[:4] == [1.0] * 4 and norms(vectors)[4] == 0.0


async def test_model2vec_splits_cjk_characters(tmp_path: Path) -> None:
    """Chinese text is one token per ideograph, so shared characters make close vectors."""
    folder = write_tiny_model(tmp_path / "cjk", ["笔", "记", "搜", "索", "天", "气"], dims=16)
    vectors = await Model2VecEmbedder(str(folder)).embed(["笔记搜索", "搜索笔记", "天气"])
    assert float(vectors[0] @ vectors[1]) == pytest.approx(1.0, abs=1e-6)
    assert float(vectors[0] @ vectors[2]) < 0.9


async def test_model2vec_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    """A folder that is not there is named in one sentence that says how to get a model."""
    embedder = Model2VecEmbedder(str(tmp_path / "nope"))
    with pytest.raises(LLMError) as caught:
        await embedder.embed(["a"])
    assert caught.value.code == "invalid_request"
    assert "nope is not a folder" in str(caught.value) and "embedder model2vec:DIR" in str(
        caught.value
    )


# -- the fake, specs, estimates, throttle ----------------------------------------------------


async def test_fake_embedder_is_deterministic_and_shares_words() -> None:
    """Same text, same vector; notes sharing words are closer than unrelated ones, in CJK too."""
    a, b = FakeEmbedder(dims=64), FakeEmbedder(dims=64)
    texts = ["kitchen garden tomatoes", "tomatoes in a garden", "tax return", "東京の天気", "天気"]
    va, vb = await a.embed(texts), await b.embed(texts)
    assert np.array_equal(va, vb)
    assert float(va[0] @ va[1]) > float(va[0] @ va[2])
    assert float(va[3] @ va[4]) > float(va[3] @ va[0])
    assert a.texts_seen == texts


def test_specs_name_the_embedder_or_say_the_accepted_forms(tmp_path: Path) -> None:
    """ollama:/openai:/model2vec: build their embedders; anything else is one clear sentence."""
    assert parse_spec("ollama:bge-m3") == ("ollama", "bge-m3")
    assert isinstance(make_embedder("model2vec:" + str(tmp_path)), Model2VecEmbedder)
    assert make_embedder("openai:text-embedding-3-small", api_key="k").model_id == (
        "openai:text-embedding-3-small"
    )
    for bad in ("bge-m3", "cohere:x", "ollama:"):
        with pytest.raises(ValueError, match="ollama:MODEL, openai:MODEL, model2vec:PATH"):
            parse_spec(bad)


def test_token_estimate_counts_cjk_characters_one_each() -> None:
    """Latin text is about four characters a token; CJK about one a character."""
    assert estimate_tokens(["a" * 400]) == 101
    assert estimate_tokens(["天気" * 50]) == 101


async def test_throttle_spaces_requests_by_the_rate_and_eases_after_429() -> None:
    """60 requests/minute start one second apart; a 429 widens the spacing, successes narrow it."""
    clock = FakeClock()
    throttle = Throttle(60, 2, clock=clock, sleep=clock.sleep)
    for _ in range(3):
        async with throttle.slot():
            pass
    assert clock.sleeps == [1.0, 1.0]
    assert throttle.rate_limited(None) == 2.0 and throttle.interval == 2.0
    for _ in range(10):
        throttle.succeeded()
    assert throttle.interval == 1.0


def test_a_hub_id_is_found_in_the_local_cache_and_never_downloaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """org/name resolves to its cached snapshot; an uncached id stays a missing folder."""
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    snapshot = tmp_path / "hf" / "hub" / "models--minishlab--tiny" / "snapshots" / "abc123"
    write_tiny_model(snapshot, ["word"])
    cached = Model2VecEmbedder("minishlab/tiny")
    assert cached.folder == snapshot and cached.model_id == "model2vec:tiny"
    assert Model2VecEmbedder("minishlab/absent").folder == Path("minishlab/absent")


async def test_a_failing_batch_stops_the_others(fake_http: FakeHTTPServer) -> None:
    """A refused first batch raises its own LLMError and no later batch is sent."""
    fake_http.enqueue(
        Reply.json({"error": "unauthorized"}, 401),
        fake.ollama_reply([[1, 0]]),
        fake.ollama_reply([[1, 0]]),
    )
    embedder = OllamaEmbedder(
        fake.OLLAMA_MODEL, base_url=fake_http.url, **options(batch_size=1, concurrency=1)
    )
    with pytest.raises(LLMError) as caught:
        await embedder.embed(["a", "b", "c"])
    assert caught.value.code == "auth_error" and len(fake_http.requests) == 1


async def test_a_slow_embedder_gets_smaller_batches_and_longer_timeouts(
    fake_http: FakeHTTPServer,
) -> None:
    """A batch that times out is sent again as two halves (and later batches stay that small);
    one text that times out is sent again with twice the timeout. The job finishes."""
    hang = Reply.stream([HANG], content_type="application/json")
    fake_http.enqueue(hang, fake.openai_reply([[1, 0], [0, 1]]), fake.openai_reply([[1, 1]] * 2))
    embedder = OpenAIEmbedder(
        fake.OPENAI_MODEL, "sk-test", base_url=fake_http.url + "/v1", **options(timeout=0.3)
    )
    embedder.batch_size = 4
    vectors = await embedder.embed(["a", "b", "c", "d"])
    assert vectors.shape == (4, 2)
    assert [len(r.json()["input"]) for r in fake_http.requests] == [4, 2, 2]
    assert embedder.batch_size == 2
    fake_http.enqueue(hang, fake.openai_reply([[0, 1]]))
    assert (await embedder.embed(["e"])).shape == (1, 2)
    assert embedder.timeout == pytest.approx(0.6)
    await embedder.aclose()


# -- one connection per vendor ---------------------------------------------------------------


async def test_an_embedder_and_a_chat_provider_share_one_ollama_connection(
    fake_http: FakeHTTPServer,
) -> None:
    """Both go through the connection's one HTTP client; the embedder translates errors with
    the connection's words, and closing a borrower leaves the shared client open."""
    from llm_service import Message, OllamaProvider
    from llm_service.connections.ollama import OllamaConnection
    from tests.fakes import ollama as fake_ollama

    connection = OllamaConnection(fake_http.url, timeout=5.0)
    provider = OllamaProvider(model=fake_ollama.MODEL, connection=connection)
    embedder = OllamaEmbedder(fake.OLLAMA_MODEL, connection=connection, **options())
    fake_http.enqueue(
        fake_ollama.text_reply("hi", stream=False),
        fake.ollama_reply([[1, 0]], 2),
        Reply.json({"error": "model 'nomic-embed-text' not found"}, status=404),
    )
    assert (await provider.chat([Message.user("hello")])).text == "hi"
    client = connection.http()
    await embedder.embed(["a"])
    assert connection.http() is client and embedder.base_url == provider.base_url
    with pytest.raises(LLMError, match="ollama pull nomic-embed-text") as caught:
        await embedder.embed(["b"])
    assert caught.value.code == "invalid_request"
    await embedder.aclose()
    await provider.aclose()
    assert connection.http() is client  # borrowers do not close what they did not open
    await connection.aclose()


async def test_an_openai_embedder_borrows_the_providers_key_and_name(
    fake_http: FakeHTTPServer,
) -> None:
    """A connection given to both sends one key and names the server the same in errors."""
    from llm_service import OpenAIProvider
    from llm_service.connections.openai import OpenAIConnection
    from tests.fakes import openai as fake_openai

    connection = OpenAIConnection(
        "sk-shared-1234", base_url=fake_http.url + "/v1", timeout=5.0, name="LM Studio"
    )
    provider = OpenAIProvider(connection=connection)
    embedder = OpenAIEmbedder(fake.OPENAI_MODEL, connection=connection, **options())
    fake_http.enqueue(
        fake.openai_reply([[1, 0]]),
        fake_openai.error_reply(401, "Incorrect API key sk-shared-1234"),
    )
    await embedder.embed(["a"])
    assert fake_http.requests[0].headers["authorization"] == "Bearer sk-shared-1234"
    with pytest.raises(LLMError) as caught:
        await embedder.embed(["b"])
    assert caught.value.code == "auth_error" and caught.value.provider == "LM Studio"
    assert "sk-shared-1234" not in str(caught.value)
    assert provider.name == embedder.name == "LM Studio"
    await connection.aclose()
