"""The HTTP API against LiteLLM's proxy: what each adds to a model call, same fake APIs.

Servers, each in its own process: the fake Anthropic and OpenAI APIs (bench/fakeapi.py, the
byte-exact replies of tests/fakes); this bridge (``obsidian-ai-bridge serve``, its HTTP API's
``/v1/chat/completions``, routing ``anthropic/…`` and ``openai/…``); LiteLLM's proxy server
(``litellm --config``, one worker, the same two models). LiteLLM's proxy extra pins library
versions this project does not use (websockets < 16 among them), so it runs from its own
environment: ``uv tool run --from 'litellm[proxy]==VERSION' litellm`` (``--litellm-version``).

Clients, in this process, for each API: plain httpx to the fake API (the baseline), the raw SDK,
``LLMService`` (the library, in process), and plain httpx posting the same OpenAI-format body to
the bridge and to LiteLLM's proxy. Each measures a whole answer, a streamed answer to its first
text, and a streamed answer to its end, ``--calls`` interleaved rounds (one call of each client
in turn, so a noisy machine slows all alike). Then ``--concurrency`` clients stream at once
through the bridge from a paced fake API (one event every 5 ms), against one client alone.

Reported: p50/p95 of each, what each adds over the baseline, the bridge over LLMService, and
the concurrent p99 against the single client's. Writes bench/results/http_proxy.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from bench import fakeapi
from bench.stats import percentile

ROOT = Path(__file__).resolve().parent.parent

ANSWER = "Kafka is an event log; see [[Projects/Kafka pipeline]] for how we use it at work."
QUESTION = "What is Kafka?"
MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-5.4-mini"}
KEY = {"anthropic": "sk-ant-bench", "openai": "sk-bench"}
LITELLM_KEY = "sk-litellm-bench"
LITELLM_VERSION = "1.108.7"
WARMUP = 5
START_WAIT = 120.0
Call = Callable[[], Awaitable[float | None]]
"""A timed call; it may return its own time in ms (a turn timed to its first notification)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


async def wait_until_up(url: str, headers: dict[str, str]) -> None:
    import httpx

    deadline = time.monotonic() + START_WAIT
    async with httpx.AsyncClient() as http:
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if (await http.get(url, headers=headers)).status_code == 200:
                    return
            await asyncio.sleep(0.2)
    raise SystemExit(f"{url} did not come up within {START_WAIT:.0f} s")


@contextlib.contextmanager
def bridge_server(base: str, tmp: Path) -> Iterator[tuple[str, str, str]]:
    """``serve`` in its own process, as users run it: Anthropic at ``base`` is the chat
    provider, OpenAI (key from the environment, the SDK pointed at ``base`` by OPENAI_BASE_URL)
    is routed to. Yields (HTTP URL, token, WebSocket URL)."""
    shutil.copytree(ROOT / "examples" / "vault", tmp / "vault")
    info = tmp / "server.json"
    env = {
        **os.environ,
        "ANTHROPIC_API_KEY": KEY["anthropic"],
        "AI_BRIDGE_ANTHROPIC_API_KEY_HOST": base,  # the key may go to the fake API
        "OPENAI_API_KEY": KEY["openai"],
        "OPENAI_BASE_URL": f"{base}/v1",
        "XDG_STATE_HOME": str(tmp / "state"),
        "AI_BRIDGE_CONFIG": str(tmp / "no-settings.toml"),
    }
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "plugin_bridge", "serve", "--vault", str(tmp / "vault")),
            *("--data-dir", str(tmp / "data"), "--info-file", str(info)),
            *("--provider", "anthropic", "--model", MODELS["anthropic"], "--base-url", base),
        ],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + START_WAIT
        while not info.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the bridge did not start")
            time.sleep(0.05)
        data = json.loads(info.read_text())
        yield data["httpUrl"], data["token"], data["url"]
    finally:
        process.terminate()
        process.wait(10)


@contextlib.contextmanager
def litellm_proxy(base: str, tmp: Path, version: str) -> Iterator[str]:
    """LiteLLM's proxy server for the same two models; yields its URL."""
    config = tmp / "litellm.yaml"
    models = [
        ("anthropic", base),
        ("openai", f"{base}/v1"),
    ]
    lines = ["model_list:"]
    for api, api_base in models:
        name = f"{api}/{MODELS[api]}"
        lines += [
            f"  - model_name: {name}",
            "    litellm_params:",
            f"      model: {name}",
            f"      api_base: {api_base}",
            f"      api_key: {KEY[api]}",
        ]
    lines += ["general_settings:", f"  master_key: {LITELLM_KEY}"]
    config.write_text("\n".join(lines) + "\n")
    port = free_port()
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_TELEMETRY": "False"}
    env.pop("VIRTUAL_ENV", None)
    process = subprocess.Popen(
        [
            *("uv", "tool", "run", "--from", f"litellm[proxy]=={version}", "litellm"),
            *("--config", str(config), "--host", "127.0.0.1", "--port", str(port)),
            *("--num_workers", "1"),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=tmp,
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()


def openai_text(line: str) -> bool:
    """Whether an SSE line of a chat.completion.chunk stream carries text."""
    if not line.startswith("data: {"):
        return False
    choices = json.loads(line[6:]).get("choices") or [{}]
    return bool((choices[0].get("delta") or {}).get("content"))


async def stream_turn(service: Any, to_end: bool) -> None:
    """One streamed turn of ``service`` (an LLMService): to its end, or to its first text."""
    from llm_service import TextDelta

    stream = service.stream_message(QUESTION)
    try:
        async for event in stream:
            if not to_end and isinstance(event, TextDelta):
                return
    finally:
        await stream.aclose()
        service.clear_conversation()


def clients(api: str, base: str, proxies: dict[str, tuple[str, str]]) -> dict[str, list[Call]]:
    """Per client: [whole answer, streamed to the first text, streamed to the end]."""
    import anthropic
    import httpx
    import openai

    from llm_service import AnthropicProvider, LLMService, OpenAIProvider

    model = MODELS[api]
    messages = [{"role": "user", "content": QUESTION}]
    http = httpx.AsyncClient(timeout=30)
    if api == "anthropic":
        url, headers = f"{base}/v1/messages", {"x-api-key": KEY[api]}
        provider: Any = AnthropicProvider(api_key=KEY[api], base_url=base, model=model)
        raw_a = anthropic.AsyncAnthropic(api_key=KEY[api], base_url=base, max_retries=0)

        def is_text(line: str) -> bool:
            return '"text_delta"' in line
    else:
        url, headers = f"{base}/v1/chat/completions", {"authorization": f"Bearer {KEY[api]}"}
        provider = OpenAIProvider(api_key=KEY[api], base_url=f"{base}/v1", model=model)
        raw_o = openai.AsyncOpenAI(api_key=KEY[api], base_url=f"{base}/v1", max_retries=0)
        is_text = openai_text
    service = LLMService(provider, model=model)
    body = {"model": model, "max_tokens": 1024, "messages": messages}

    def over_http(
        target: str,
        target_headers: dict[str, str],
        payload: dict[str, Any],
        text: Callable[[str], bool],
    ) -> list[Call]:
        async def whole() -> None:
            (await http.post(target, json=payload, headers=target_headers)).raise_for_status()

        async def streamed(to_end: bool) -> None:
            async with http.stream(
                "POST", target, json={**payload, "stream": True}, headers=target_headers
            ) as response:
                response.raise_for_status()
                async for line in response.aiter_lines():
                    if not to_end and text(line):
                        return

        return [whole, lambda: streamed(False), lambda: streamed(True)]

    async def sdk_whole() -> None:
        if api == "anthropic":
            await raw_a.messages.create(model=model, max_tokens=1024, messages=messages)  # type: ignore[arg-type]
        else:
            await raw_o.chat.completions.create(model=model, messages=messages)  # type: ignore[arg-type]

    async def sdk_stream(to_end: bool) -> None:
        if api == "anthropic":
            stream_a = await raw_a.messages.create(
                model=model,
                max_tokens=1024,
                messages=messages,
                stream=True,  # type: ignore[arg-type]
            )
            async with stream_a:
                async for event in stream_a:
                    if not to_end and event.type == "content_block_delta":
                        return
        else:
            stream_o = await raw_o.chat.completions.create(
                model=model,
                messages=messages,
                stream=True,  # type: ignore[arg-type]
            )
            async with stream_o:
                async for chunk in stream_o:
                    if not to_end and chunk.choices and chunk.choices[0].delta.content:
                        return

    async def ours_whole() -> None:
        await service.process_message(QUESTION)
        service.clear_conversation()

    openai_body = {"model": f"{api}/{model}", "max_tokens": 1024, "messages": messages}
    table = {
        "httpx (baseline)": over_http(url, headers, body, is_text),
        "raw SDK": [sdk_whole, lambda: sdk_stream(False), lambda: sdk_stream(True)],
        "LLMService": [
            ours_whole,
            lambda: stream_turn(service, False),
            lambda: stream_turn(service, True),
        ],
    }
    for name, (proxy_url, key) in proxies.items():
        table[name] = over_http(
            f"{proxy_url}/v1/chat/completions",
            {"authorization": f"Bearer {key}"},
            openai_body,
            openai_text,
        )
    return table


MODES = ("whole", "first text", "stream end")


async def interleaved(
    api: str,
    base: str,
    proxies: dict[str, tuple[str, str]],
    calls: int,
    extra: dict[str, list[Call]],
) -> dict[str, dict[str, list[float]]]:
    table = {**clients(api, base, proxies), **extra}
    times: dict[str, dict[str, list[float]]] = {
        mode: {name: [] for name in table} for mode in MODES
    }
    for round_number in range(calls + WARMUP):
        for index, mode in enumerate(MODES):
            for name, modes in table.items():
                started = time.perf_counter()
                own = await modes[index]()
                elapsed = (time.perf_counter() - started) * 1000 if own is None else own
                if round_number >= WARMUP:
                    times[mode][name].append(elapsed)
    return times


async def chat_send_calls(
    base: str, ws_url: str, token: str, tmp: Path, closing: list[Callable[[], Awaitable[None]]]
) -> dict[str, list[Call]]:
    """``chat/send`` over the WebSocket to the bridge's own process (whole turn; to its first
    chat/delta; whole turn), and the LLMService that turn runs (the bridge's system prompt and
    vault tools, Anthropic at the fake API) called in this process."""
    from llm_service import AnthropicProvider, LLMService
    from llm_service.tools import ToolRegistry
    from plugin_bridge.app.state import system_prompt
    from plugin_bridge.app.vault_tools import register_vault_tools
    from plugin_bridge.vault.vault import Vault
    from plugin_bridge.wire.client import BridgeClient

    shutil.copytree(ROOT / "examples" / "vault", tmp / "direct")
    vault = Vault(tmp / "direct", tmp / "direct-data")
    registry = ToolRegistry()
    register_vault_tools(registry, vault)
    provider = AnthropicProvider(api_key=KEY["anthropic"], base_url=base)
    service = LLMService(provider, model=MODELS["anthropic"], tools=registry)
    service.set_system_prompt(system_prompt(vault.name))
    first = asyncio.Event()

    def on_notification(method: str, params: dict[str, Any]) -> None:
        if method == "chat/delta":
            first.set()

    client = await BridgeClient.connect(ws_url, token, on_notification=on_notification)
    closing.append(client.close)  # before the server stops: it waits for the close handshake
    conversation: dict[str, str] = {}

    async def turn() -> None:
        reply = await client.request("chat/send", {"text": QUESTION, **conversation})
        conversation.setdefault("conversationId", reply["conversationId"])

    async def to_first_delta() -> float:
        first.clear()
        started = time.perf_counter()
        running = asyncio.create_task(turn())
        await first.wait()
        elapsed = (time.perf_counter() - started) * 1000
        await running
        return elapsed

    async def whole() -> None:
        await turn()

    async def direct_whole() -> None:
        await stream_turn(service, True)

    async def direct_first() -> None:
        await stream_turn(service, False)

    return {
        "bridge chat/send": [whole, to_first_delta, whole],
        "bridge's LLMService": [direct_whole, direct_first, direct_whole],
    }


async def concurrent(url: str, token: str, api: str, calls: int, clients: int) -> dict[str, float]:
    """p50/p99 of a whole streamed answer through the bridge: one client, then ``clients``
    at once (each ``calls // clients`` answers)."""
    import httpx

    body = {
        "model": f"{api}/{MODELS[api]}",
        "messages": [{"role": "user", "content": QUESTION}],
        "stream": True,
    }
    headers = {"authorization": f"Bearer {token}"}
    limits = httpx.Limits(max_connections=clients * 2)

    async with httpx.AsyncClient(timeout=60, limits=limits) as http:

        async def one() -> float:
            started = time.perf_counter()
            async with http.stream(
                "POST", f"{url}/v1/chat/completions", json=body, headers=headers
            ) as response:
                async for _ in response.aiter_lines():
                    pass
            return (time.perf_counter() - started) * 1000

        for _ in range(WARMUP):
            await one()
        alone = [await one() for _ in range(calls)]

        async def worker(n: int) -> list[float]:
            return [await one() for _ in range(n)]

        batches = await asyncio.gather(*(worker(max(1, calls // clients)) for _ in range(clients)))
        together = [t for batch in batches for t in batch]
    return {
        "one_p50_ms": statistics.median(alone),
        "one_p99_ms": percentile(alone, 0.99),
        "concurrent_p50_ms": statistics.median(together),
        "concurrent_p99_ms": percentile(together, 0.99),
        "p99_ratio": percentile(together, 0.99) / percentile(alone, 0.99),
    }


def summary(times: dict[str, dict[str, list[float]]], proxies: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for mode, by_client in times.items():
        base = by_client["httpx (baseline)"]
        rows: dict[str, Any] = {}
        for name, values in by_client.items():
            added = [v - b for v, b in zip(values, base, strict=True)]
            rows[name] = {
                "p50_ms": statistics.median(values),
                "p95_ms": percentile(values, 0.95),
                "added_p50_ms": statistics.median(added),
                "added_p95_ms": percentile(added, 0.95),
            }
        for name in proxies:
            over = [p - s for p, s in zip(by_client[name], by_client["LLMService"], strict=True)]
            rows[f"{name} over LLMService"] = {
                "added_p50_ms": statistics.median(over),
                "added_p95_ms": percentile(over, 0.95),
            }
        if "bridge chat/send" in by_client:
            over = [
                b - d
                for b, d in zip(
                    by_client["bridge chat/send"], by_client["bridge's LLMService"], strict=True
                )
            ]
            rows["bridge chat/send over its LLMService"] = {
                "added_p50_ms": statistics.median(over),
                "added_p95_ms": percentile(over, 0.95),
            }
        if "bridge" in by_client and "LiteLLM proxy" in by_client:
            bridge = rows["bridge"]["added_p50_ms"]
            litellm = rows["LiteLLM proxy"]["added_p50_ms"]
            rows["bridge added / LiteLLM added"] = {"ratio": bridge / litellm if litellm else None}
        result[mode] = rows
    return result


async def run(args: argparse.Namespace) -> dict[str, Any]:
    base, fake = fakeapi.start(ANSWER)
    paced_base, paced = fakeapi.start(ANSWER, pace=0.005)
    results: dict[str, Any] = {}
    try:
        with contextlib.ExitStack() as stack:
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            (tmp / "b").mkdir()
            http_url, token, ws_url = stack.enter_context(bridge_server(base, tmp / "b"))
            proxies = {"bridge": (http_url, token)}
            waits = [wait_until_up(f"{http_url}/health", {"authorization": f"Bearer {token}"})]
            if not args.no_litellm:
                litellm_url = stack.enter_context(litellm_proxy(base, tmp, args.litellm_version))
                proxies["LiteLLM proxy"] = (litellm_url, LITELLM_KEY)
                waits.append(wait_until_up(f"{litellm_url}/health/liveliness", {}))
            await asyncio.gather(*waits)
            closing: list[Callable[[], Awaitable[None]]] = []
            turns = await chat_send_calls(base, ws_url, token, tmp, closing)
            for api in ("anthropic", "openai"):
                extra = turns if api == "anthropic" else {}
                times = await interleaved(api, base, proxies, args.calls, extra)
                results[api] = summary(times, list(proxies))
            for close in closing:
                await close()
            (tmp / "c").mkdir()
            paced_url, paced_token, _ = stack.enter_context(bridge_server(paced_base, tmp / "c"))
            await wait_until_up(f"{paced_url}/health", {"authorization": f"Bearer {paced_token}"})
            results["concurrency"] = await concurrent(
                paced_url, paced_token, "anthropic", args.calls, args.concurrency
            )
    finally:
        fake.kill()
        paced.kill()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--litellm-version", default=LITELLM_VERSION)
    parser.add_argument("--no-litellm", action="store_true", help="leave LiteLLM's proxy out")
    args = parser.parse_args()
    results = asyncio.run(run(args))
    print(f"Same fake APIs, {args.calls} interleaved calls per client; ms")
    print(f"{'API':<10} {'mode':<11} {'client':<34} {'p50':>8} {'+p50':>8} {'+p95':>8}")
    for api in ("anthropic", "openai"):
        for mode, rows in results[api].items():
            for name, row in rows.items():
                if "ratio" in row:
                    ratio = row["ratio"]
                    shown = "n/a" if ratio is None else f"{ratio:.2f}"
                    print(f"{api:<10} {mode:<11} {name:<34} {shown:>8}")
                    continue
                p50 = f"{row['p50_ms']:8.2f}" if "p50_ms" in row else " " * 8
                print(
                    f"{api:<10} {mode:<11} {name:<34} {p50} "
                    f"{row['added_p50_ms']:8.2f} {row['added_p95_ms']:8.2f}"
                )
    c = results["concurrency"]
    print(
        f"bridge, whole streamed answer (paced fake): one client p99 {c['one_p99_ms']:.1f} ms, "
        f"{args.concurrency} at once p99 {c['concurrent_p99_ms']:.1f} ms "
        f"({c['p99_ratio']:.2f}x)"
    )
    out = ROOT / "bench" / "results" / "http_proxy.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
