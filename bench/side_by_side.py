"""Side by side against the same local fake API: what each client adds to a model call.

Clients, for Anthropic and OpenAI alike: plain httpx (the baseline: the bytes and nothing
else), the raw SDK, our ``LLMService``, LiteLLM's ``acompletion`` (the ``bench`` dependency
group: ``uv sync --group bench``), and our bridge (``chat/send`` over the WebSocket). Each
measures a whole non-streaming answer and the time to the first text of a streamed one; the
calls are interleaved (one of each client in turn, ``--calls`` rounds) so a noisy machine slows
all alike. Reported: p50/p95 of what each adds over the httpx baseline of the same round, and
the bridge against LLMService direct and its first ``chat/delta`` against the raw SDK's first
text. Writes bench/results/side_by_side.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench import fakeapi
from bench.stats import percentile

ROOT = Path(__file__).resolve().parent.parent

ANSWER = "Kafka is an event log; see [[Projects/Kafka pipeline]] for how we use it at work."
QUESTION = "What is Kafka?"
MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-5.4-mini"}
KEY = {"anthropic": "sk-ant-bench", "openai": "sk-bench"}
SETTLE_SECONDS = 0.005
Call = Callable[[], Awaitable[None]]


class FirstText(Exception):
    """Raised by a stream consumer at its first text: the clock stops there."""


async def until_first_text(service: Any) -> None:
    """Stream QUESTION through an LLMService until its first text delta, then forget the turn."""
    from llm_service import TextDelta

    stream = service.stream_message(QUESTION)
    try:
        async for event in stream:
            if isinstance(event, TextDelta):
                return
    finally:
        await stream.aclose()
        service.clear_conversation()


def clients(api: str, base: str) -> dict[str, tuple[Call, Call]]:
    """Per client, (non-streaming call, streamed call that returns at the first text)."""
    import anthropic
    import httpx
    import litellm
    import openai

    from llm_service import AnthropicProvider, LLMService, OpenAIProvider

    model = MODELS[api]
    messages = [{"role": "user", "content": QUESTION}]
    http = httpx.AsyncClient()
    if api == "anthropic":
        url, headers = f"{base}/v1/messages", {"x-api-key": KEY[api]}
        provider: Any = AnthropicProvider(api_key=KEY[api], base_url=base, model=model)
        raw_a = anthropic.AsyncAnthropic(api_key=KEY[api], base_url=base, max_retries=0)
        litellm_model, litellm_base = f"anthropic/{model}", base
    else:
        url, headers = f"{base}/v1/chat/completions", {"authorization": f"Bearer {KEY[api]}"}
        provider = OpenAIProvider(api_key=KEY[api], base_url=f"{base}/v1", model=model)
        raw_o = openai.AsyncOpenAI(api_key=KEY[api], base_url=f"{base}/v1", max_retries=0)
        litellm_model, litellm_base = f"openai/{model}", f"{base}/v1"
    service = LLMService(provider, model=model)
    body = {"model": model, "max_tokens": 1024, "messages": messages}
    text_marker = b'"text_delta"' if api == "anthropic" else b'"content":"'

    async def httpx_whole() -> None:
        (await http.post(url, json=body, headers=headers)).raise_for_status()

    async def httpx_first() -> None:
        async with http.stream("POST", url, json={**body, "stream": True}, headers=headers) as r:
            async for line in r.aiter_lines():
                if text_marker in line.encode() and b'"content":""' not in line.encode():
                    return

    async def sdk_whole() -> None:
        if api == "anthropic":
            await raw_a.messages.create(model=model, max_tokens=1024, messages=messages)
        else:
            await raw_o.chat.completions.create(model=model, messages=messages)

    async def sdk_first() -> None:
        if api == "anthropic":
            stream_a = await raw_a.messages.create(
                model=model,
                max_tokens=1024,
                messages=messages,
                stream=True,
            )
            async with stream_a:
                async for event in stream_a:
                    if event.type == "content_block_delta":
                        return
        else:
            stream_o = await raw_o.chat.completions.create(
                model=model,
                messages=messages,
                stream=True,
            )
            async with stream_o:
                async for chunk in stream_o:
                    if chunk.choices and chunk.choices[0].delta.content:
                        return

    async def ours_whole() -> None:
        await service.process_message(QUESTION)
        service.clear_conversation()

    async def ours_first() -> None:
        await until_first_text(service)

    async def litellm_whole() -> None:
        await litellm.acompletion(
            model=litellm_model, messages=messages, api_base=litellm_base, api_key=KEY[api]
        )

    async def litellm_first() -> None:
        stream = await litellm.acompletion(
            model=litellm_model,
            messages=messages,
            api_base=litellm_base,
            api_key=KEY[api],
            stream=True,
        )
        async for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                break
        await stream.aclose() if hasattr(stream, "aclose") else None

    return {
        "httpx": (httpx_whole, httpx_first),
        "raw SDK": (sdk_whole, sdk_first),
        "LLMService": (ours_whole, ours_first),
        "LiteLLM": (litellm_whole, litellm_first),
    }


async def bridge_calls(api: str, base: str, stack: Any) -> dict[str, tuple[Call, Call]]:
    """chat/send through a bridge served in this process (the whole turn; the turn until its
    first chat/delta), and the same LLMService the bridge would make for a conversation (its
    system prompt, the six vault tools) called directly."""
    from bench.bridge import serving
    from llm_service import AnthropicProvider, OpenAIProvider
    from plugin_bridge.app.settings.providers import ProviderSetup, Route
    from plugin_bridge.vault.vault import Vault
    from plugin_bridge.wire.client import BridgeClient

    tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
    shutil.copytree(ROOT / "examples" / "vault", tmp / "vault")
    vault = await stack.enter_async_context(Vault(tmp / "vault", tmp / "data"))
    await vault.index.wait_until_idle(30)
    if api == "anthropic":
        provider: Any = AnthropicProvider(api_key=KEY[api], base_url=base)
    else:
        provider = OpenAIProvider(api_key=KEY[api], base_url=f"{base}/v1")
    served = await stack.enter_async_context(
        serving(vault, ProviderSetup(Route(api, provider, MODELS[api])))
    )
    app, server = served.app, served.server
    first = asyncio.Event()

    def on_notification(method: str, params: dict[str, Any]) -> None:
        if method == "chat/delta":
            first.set()

    client = await BridgeClient.connect(server.url, app.token, on_notification=on_notification)
    stack.push_async_callback(client.close)

    _, direct = app.conversations.start()

    async def whole() -> None:
        await client.request("chat/send", {"text": QUESTION})

    async def direct_whole() -> None:
        async for _event in direct.stream_message(QUESTION):
            pass
        direct.clear_conversation()

    async def direct_first() -> None:
        await until_first_text(direct)

    async def first_delta() -> None:
        first.clear()
        turn = asyncio.create_task(client.request("chat/send", {"text": QUESTION}))
        await first.wait()
        started = time.perf_counter()
        await turn  # not timed: the rest of the turn
        first_delta.untimed = time.perf_counter() - started  # type: ignore[attr-defined]

    return {"bridge": (whole, first_delta), "bridge's LLMService": (direct_whole, direct_first)}


async def measure(api: str, base: str, calls: int) -> dict[str, Any]:
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as stack:
        table = clients(api, base)
        litellm_calls = table.pop("LiteLLM")
        table.update(await bridge_calls(api, base, stack))
        table["LiteLLM"] = litellm_calls  # last: its background tasks run after the others
        times: dict[str, dict[str, list[float]]] = {
            mode: {name: [] for name in table} for mode in ("whole", "first")
        }
        for round_number in range(calls + 5):
            for mode, index in (("whole", 0), ("first", 1)):
                for name, pair in table.items():
                    started = time.perf_counter()
                    await pair[index]()
                    elapsed = time.perf_counter() - started
                    elapsed -= getattr(pair[index], "untimed", 0.0)
                    # Let background work a client left behind (LiteLLM's logging tasks, a
                    # connection's close) finish before the next client's clock starts.
                    await asyncio.sleep(SETTLE_SECONDS)
                    if round_number >= 5:  # warm-up rounds: imports, connections
                        times[mode][name].append(elapsed * 1000)
    return _summary(times)


def _summary(times: dict[str, dict[str, list[float]]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for mode, by_client in times.items():
        base = by_client["httpx"]
        rows = {}
        for name, values in by_client.items():
            added = [v - b for v, b in zip(values, base, strict=True)]
            rows[name] = {
                "p50_ms": statistics.median(values),
                "added_p50_ms": statistics.median(added),
                "added_p95_ms": percentile(added, 0.95),
            }
        direct = "bridge's LLMService" if mode == "whole" else "raw SDK"
        over = [b - d for b, d in zip(by_client["bridge"], by_client[direct], strict=True)]
        rows[f"bridge over {direct}"] = {
            "added_p50_ms": statistics.median(over),
            "added_p95_ms": percentile(over, 0.95),
        }
        result[mode] = rows
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download at import
    try:
        import litellm
    except ImportError:
        sys.exit("LiteLLM is missing: `uv sync --group bench` (make bench does it).")
    litellm.telemetry = False
    base, server = fakeapi.start(ANSWER)
    results = {}
    try:
        for api in ("anthropic", "openai"):
            results[api] = asyncio.run(measure(api, base, args.calls))
    finally:
        server.kill()
    print(f"Added over plain httpx, same fake API, {args.calls} interleaved calls per client")
    print(f"{'API':<10} {'mode':<16} {'client':<28} {'p50 added':>10} {'p95 added':>10}")
    for api, modes in results.items():
        for mode, rows in modes.items():
            label = "whole answer" if mode == "whole" else "first text"
            for name, row in rows.items():
                print(
                    f"{api:<10} {label:<16} {name:<28} {row['added_p50_ms']:8.2f}ms "
                    f"{row['added_p95_ms']:8.2f}ms"
                )
    out = ROOT / "bench" / "results" / "side_by_side.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
