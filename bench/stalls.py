"""Stalls under streaming load: 50 chats x 200 chunks while 20 clients search.

Three processes: a fake OpenAI server (byte-exact SSE from ``tests/fakes/openai.py``), the
bridge (vault + app + WebSocket server, the real OpenAI SDK as its provider) with an event-loop
lag probe, and this one, which runs the clients. Each chat checks its deltas arrive whole and in
order; each search client counts what it sent and what was answered.

Reports event-loop lag p50/p99/max (a 5 ms timer's overshoot), the longest gc pause, search
latency under load, the bridge's CPU per chunk, and RSS at the start, after a first round of
the load and after a second (memory is bounded when the second adds little). The steps
of the fix are cumulative; each row adds one, so the table shows what each buys (``--step``
runs only the ones named). The baseline reads the stream through the SDK's own chunk objects,
as the provider did before (kept here, in :func:`sdk_stream_once`, for this comparison only).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib.machinery
import importlib.util
import json
import multiprocessing as mp
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

from bench import fakeapi
from bench.stats import percentile

ROOT = Path(__file__).resolve().parent.parent

CHATS = 50
CHUNKS = 200
SEARCHERS = 20
PROBE_SECONDS = 0.005
TURN_BUSY_MS = 0.1
"""Turns of the loop that took less CPU than this are idle ones (not counted)."""
QUERIES = ["kafka", "sourdough", "running", "obsidian", "pipeline", "knee", "flour", "project"]
STEPS = {
    "baseline": "SDK chunk objects, a frame per delta, SDK imported by the first chat",
    "coalesce": "+ deltas coalesced per request and loop tick",
    "raw-sse": "+ SSE events read as plain JSON, not SDK objects",
    "yield": "+ the relay yields to the loop after 0.5 ms of deltas",
    "warm": "+ the provider SDK imported in a thread at start-up",
    "gc": "+ gc.freeze() after start-up, gen-0 threshold 50,000",
}


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def answer_text(chunks: int) -> str:
    """A reply of ``chunks`` 4-character pieces, each saying its own number."""
    return "".join(f"{i % 1000:03d} " for i in range(chunks))


# -- the bridge (its own process) ----------------------------------------------------------


def bridge_process(
    pipe: Any,
    api: str,
    step: str,
    profile: str | None = None,
    code: str | None = None,
    vault: str | None = None,
) -> None:
    if code is not None:  # another checkout's code (--before): an A/B in one run
        use_checkout(code)
    if switch := os.environ.get("BENCH_SWITCH_INTERVAL"):  # the GIL's, for both sides alike
        sys.setswitchinterval(float(switch))
    asyncio.run(_bridge(pipe, api, step, profile, vault))


def use_checkout(code: str) -> None:
    """Import llm_service and plugin_bridge from the folder ``code`` (another checkout, for
    ``--before``) in this process, before anything imports them: their submodules follow."""
    for name in ("llm_service", "plugin_bridge"):
        spec = importlib.machinery.PathFinder.find_spec(name, [code])
        if spec is None or spec.loader is None:
            raise SystemExit(f"{code} holds no {name} package: name a checkout's folder.")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)


async def _bridge(
    pipe: Any, api: str, step: str, profile: str | None = None, vault_root: str | None = None
) -> None:
    from bench.bridge import serving
    from llm_service import OpenAIProvider
    from plugin_bridge.app.settings.providers import ProviderSetup, Route
    from plugin_bridge.cli.serving import tune_gc
    from plugin_bridge.handlers import relay as relay_module
    from plugin_bridge.vault.vault import Vault

    steps = list(STEPS)[: list(STEPS).index(step) + 1]
    relay_module.COALESCE = "coalesce" in steps
    if "yield" not in steps:
        relay_module.YIELD_AFTER = 0.0
    if "raw-sse" not in steps:
        OpenAIProvider._stream_once = sdk_stream_once  # type: ignore[method-assign]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        if vault_root is None:
            shutil.copytree(ROOT / "examples" / "vault", root)
        else:  # a generated vault (--search), only read
            root = Path(vault_root)
        async with Vault(root, Path(tmp) / "data") as vault:
            await vault.index.wait_until_idle(600)
            provider = OpenAIProvider(api_key="sk-bench", base_url=f"{api}/v1", max_attempts=1)
            setup = ProviderSetup(Route("openai", provider, "m"))
            async with serving(vault, setup, http=True) as served:  # HTTP on the loop, as in serve
                app, server, http = served.app, served.server, served.http
                assert http is not None
                if "warm" in steps:
                    await provider.warm_up()
                if "gc" in steps:
                    tune_gc()
                lags: list[float] = []
                turns: list[float] = []
                _time_turns(turns)
                pauses: list[float] = []
                _watch_gc(pauses)
                probe = asyncio.create_task(_probe(lags))
                pipe.send(
                    {"url": server.url, "token": app.token, "rss": rss_mb(), "http": http.url}
                )
                cpu = time.process_time()
                profiler = _profiler(profile)
                while await asyncio.to_thread(pipe.recv) == "rss?":  # between two rounds
                    pipe.send(rss_mb())
                cpu = time.process_time() - cpu
                if profiler is not None:
                    profiler.disable()
                    profiler.dump_stats(profile)
                await http.close()
                peak = _peak_rss_mb()
                await asyncio.sleep(0.5)
                probe.cancel()
                pipe.send(
                    {
                        "lags": lags,
                        "turns": turns,
                        "pauses": pauses,
                        "peak": peak,
                        "rss": rss_mb(),
                        "cpu": cpu,
                    }
                )


def _profiler(path: str | None) -> Any:
    """cProfile over the bridge's loop until the load ends (``--profile FILE``)."""
    if path is None:
        return None
    import cProfile

    profiler = cProfile.Profile()
    profiler.enable()
    return profiler


async def sdk_stream_once(self: Any, request: Any) -> AsyncGenerator[Any, None]:
    """The provider's stream as it was: every SSE event built into the SDK's chunk object."""
    from llm_service import ResponseComplete
    from llm_service.providers.openai import _OpenAIAssembly

    stream = await self._sdk().chat.completions.create(
        **self._params(request), stream=True, stream_options={"include_usage": True}
    )
    async with stream:
        assembly = _OpenAIAssembly(request_id=None)
        async for chunk in stream:
            for event in assembly.feed(chunk):
                yield event
    yield ResponseComplete(assembly.response())


def _time_turns(cpu: list[float]) -> None:
    """Append the CPU time (ms) of each busy turn of the running loop to ``cpu``: what a request
    waits for per turn (it needs about three), whatever else the machine runs; the wall-clock
    figures also hold the waits for a core."""
    loop: Any = asyncio.get_running_loop()
    run_once = loop._run_once

    def timed() -> None:
        started = time.thread_time()
        run_once()
        took = (time.thread_time() - started) * 1000
        if took >= TURN_BUSY_MS:
            cpu.append(took)

    loop._run_once = timed


async def _probe(lags: list[float]) -> None:
    loop = asyncio.get_running_loop()
    while True:
        started = loop.time()
        await asyncio.sleep(PROBE_SECONDS)
        lags.append((loop.time() - started - PROBE_SECONDS) * 1000)


def _watch_gc(pauses: list[float]) -> None:
    started: list[float] = [0.0]

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses.append((time.perf_counter() - started[0]) * 1000)

    gc.callbacks.append(callback)


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1000


# -- the clients (this process) ------------------------------------------------------------


class Client:
    """One WebSocket connection; replies go to their callers, chat/delta to ``on_delta``."""

    def __init__(self, ws: Any, on_delta: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.ws = ws
        self.on_delta = on_delta
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.next_id = 1
        self.reader = asyncio.create_task(self._read())

    async def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        request_id = self.next_id
        self.next_id += 1
        reply = self.waiting[request_id] = asyncio.get_running_loop().create_future()
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        await self.ws.send(json.dumps(message))
        return await reply

    async def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            async for frame in self.ws:
                message = json.loads(frame)
                if message.get("method") == "chat/delta" and self.on_delta is not None:
                    self.on_delta(message["params"])
                elif "id" in message and "method" not in message:
                    self.waiting.pop(message["id"]).set_result(message)
        except ConnectionClosed:
            pass
        for waiter in self.waiting.values():  # the server closed: nobody answers these
            if not waiter.done():
                waiter.set_exception(ConnectionError(f"closed by the server: {self.ws.close_code}"))


async def _connect(url: str, token: str, **kw: Any) -> Client:
    from websockets.asyncio.client import connect

    client = Client(await connect(url, max_size=None), **kw)
    init = {"token": token, "protocolVersion": 1, "client": {"name": "bench", "version": "0"}}
    reply = await client.call("initialize", init)
    assert "result" in reply, reply
    return client


async def _chat(url: str, token: str, expected: str, frames: list[int]) -> bool:
    parts: list[str] = []
    count = [0]

    def on_delta(params: dict[str, Any]) -> None:
        parts.append(params["text"])
        count[0] += 1

    client = await _connect(url, token, on_delta=on_delta)
    reply = await client.call("chat/send", {"text": "Count for me."})
    await client.ws.close()
    frames.append(count[0])
    return "result" in reply and reply["result"]["text"] == expected and "".join(parts) == expected


async def _search(
    url: str,
    token: str,
    done: asyncio.Event,
    stats: dict[str, Any],
    queries: list[str] = QUERIES,
) -> None:
    client = await _connect(url, token)
    rng = random.Random(len(stats["ms"]))
    while not done.is_set():
        stats["sent"] += 1
        started = time.perf_counter()
        reply = await client.call("vault/search", {"query": rng.choice(queries)})
        stats["ms"].append((time.perf_counter() - started) * 1000)
        stats["answered"] += "result" in reply
    await client.ws.close()


async def _load(url: str, token: str, chats: int, chunks: int) -> dict[str, Any]:
    done = asyncio.Event()
    stats: dict[str, Any] = {"sent": 0, "answered": 0, "ms": []}
    searchers = [asyncio.create_task(_search(url, token, done, stats)) for _ in range(SEARCHERS)]
    frames: list[int] = []
    started = time.perf_counter()
    expected = answer_text(chunks)
    ok = await asyncio.gather(*[_chat(url, token, expected, frames) for _ in range(chats)])
    seconds = time.perf_counter() - started
    done.set()
    await asyncio.gather(*searchers)
    return {
        "chats_whole_and_in_order": sum(ok),
        "delta_frames": sum(frames),
        "seconds": seconds,
        "search_sent": stats["sent"],
        "search_answered": stats["answered"],
        "search_p50_ms": statistics.median(stats["ms"]),
        "search_p99_ms": percentile(stats["ms"], 0.99),
        "search_max_ms": max(stats["ms"]),
    }


def run_step(step: str, chats: int, chunks: int, pace: float) -> dict[str, Any]:
    api, fake = fakeapi.start(answer_text(chunks), pace)
    ctx = mp.get_context("spawn")
    here, there = ctx.Pipe()
    bridge = ctx.Process(target=bridge_process, args=(there, api, step), daemon=True)
    bridge.start()
    ready = here.recv()
    load = asyncio.run(_load(ready["url"], ready["token"], chats, chunks))
    here.send("rss?")
    rss_first = here.recv()
    second = asyncio.run(_load(ready["url"], ready["token"], chats, chunks))
    here.send("done")
    after = here.recv()
    bridge.join(30)
    fake.kill()
    lags = after["lags"]
    return {
        "step": step,
        **load,
        "lag_p50_ms": statistics.median(lags),
        "lag_p99_ms": percentile(lags, 0.99),
        "lag_max_ms": max(lags),
        "gc_max_ms": max(after["pauses"], default=0.0),
        "cpu_us_per_chunk": after["cpu"] / (2 * chats * chunks) * 1e6,
        "rss_before_mb": ready["rss"],
        "rss_after_first_round_mb": rss_first,
        "second_round_whole_and_in_order": second["chats_whole_and_in_order"],
        "rss_peak_mb": after["peak"],
        "rss_after_mb": after["rss"],
    }


# -- health under 50 streams, and what chat/send adds (--health) ----------------------------

HEALTH_EVERY = 0.02
HEALTH_ROUNDS = 3
TURNS = 100
SHORT_ANSWER = "Kafka is an event log; see [[Projects/Kafka pipeline]] for how we use it at work."


def _start_bridge(
    api: str, profile: str | None = None, code: str | None = None, vault: str | None = None
) -> tuple[Any, Any, dict[str, Any]]:
    ctx = mp.get_context("spawn")
    here, there = ctx.Pipe()
    bridge = ctx.Process(
        target=bridge_process, args=(there, api, "gc", profile, code, vault), daemon=True
    )
    bridge.start()
    return bridge, here, here.recv()


def _stop_bridge(bridge: Any, pipe: Any) -> dict[str, Any]:
    pipe.send("done")
    after: dict[str, Any] = pipe.recv()
    bridge.join(30)
    return after


def _health_process(url: str, token: str, pipe: Any) -> None:
    """health every 20 ms on its own connection, in its own process (the chat clients' loop
    must not delay it), until told to stop: the latencies."""

    async def run() -> list[float]:
        health = await _connect(url, token)
        await health.call("health", {})  # builds the tool registry once, as a plugin's first call
        pipe.send("ready")
        took: list[float] = []
        while not pipe.poll():
            started = time.perf_counter()
            reply = await health.call("health", {})
            assert "result" in reply, reply
            took.append((time.perf_counter() - started) * 1000)
            await asyncio.sleep(HEALTH_EVERY)
        await health.ws.close()
        return took

    pipe.send(asyncio.run(run()))


async def _health_under_streams(
    url: str, token: str, chats: int, chunks: int
) -> tuple[list[float], int]:
    """One round of ``chats`` concurrent chat/send while another process asks health every
    20 ms on its own connection: that client's latencies, and the chats whole and in order."""
    ctx = mp.get_context("spawn")
    here, there = ctx.Pipe()
    asker = ctx.Process(target=_health_process, args=(url, token, there), daemon=True)
    asker.start()
    assert await asyncio.to_thread(here.recv) == "ready"
    frames: list[int] = []
    expected = answer_text(chunks)
    ok = await asyncio.gather(*[_chat(url, token, expected, frames) for _ in range(chats)])
    here.send("stop")
    took: list[float] = await asyncio.to_thread(here.recv)
    asker.join(10)
    return took, sum(ok)


async def _per_turn(
    api: str, bridges: dict[str, tuple[str, str]], turns: int
) -> dict[str, list[float]]:
    """Whole streamed turns, one at a time, interleaved: the raw OpenAI SDK against the fake,
    then chat/send through each bridge (its own process) against the same fake: ms each."""
    import openai

    sdk = openai.AsyncOpenAI(api_key="sk-bench", base_url=f"{api}/v1", max_retries=0)
    clients = {name: await _connect(url, token) for name, (url, token) in bridges.items()}
    messages: Any = [{"role": "user", "content": "What is Kafka?"}]
    took: dict[str, list[float]] = {"sdk": [], **{name: [] for name in clients}}
    for turn in range(turns + 5):
        started = time.perf_counter()
        stream = await sdk.chat.completions.create(model="m", messages=messages, stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        assert text == SHORT_ANSWER, text
        if turn >= 5:  # warm-up
            took["sdk"].append((time.perf_counter() - started) * 1000)
        order = list(clients.items())
        for name, client in order if turn % 2 else order[::-1]:
            started = time.perf_counter()
            reply = await client.call("chat/send", {"text": "What is Kafka?"})
            assert reply["result"]["text"] == SHORT_ANSWER, reply
            if turn >= 5:
                took[name].append((time.perf_counter() - started) * 1000)
    for client in clients.values():
        await client.ws.close()
    await sdk.close()
    return took


def _echo_process(pipe: Any) -> None:
    import socket

    server = socket.create_server(("127.0.0.1", 0))
    pipe.send(server.getsockname()[1])
    conn, _ = server.accept()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while data := conn.recv(65536):
        conn.sendall(data)


def loopback_rtt_ms(rounds: int = 2000) -> float:
    """p50 of a 200-byte round trip over TCP between this process and another Python one."""
    import socket

    ctx = mp.get_context("spawn")
    here, there = ctx.Pipe()
    echo = ctx.Process(target=_echo_process, args=(there,), daemon=True)
    echo.start()
    sock = socket.create_connection(("127.0.0.1", here.recv()))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    message = b"x" * 200
    took = []
    for _ in range(rounds):
        started = time.perf_counter()
        sock.sendall(message)
        got = 0
        while got < len(message):
            got += len(sock.recv(65536))
        took.append((time.perf_counter() - started) * 1000)
    sock.close()
    echo.join(5)
    return statistics.median(took)


def checkout(before: str, into: Path) -> str:
    """``before`` as a folder of code: itself when it is one, else a git revision of this
    repository (``main``, a commit) extracted into ``into``."""
    import io
    import subprocess
    import tarfile

    if Path(before).is_dir():
        return before
    archive = subprocess.run(
        ["git", "archive", before, "llm_service", "plugin_bridge"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return str(into)


def health_main(args: argparse.Namespace) -> None:
    """Both sides of the A/B at once (``--before`` names the other code): their rounds and
    turns interleaved, so the machine's load weighs on both alike."""
    with tempfile.TemporaryDirectory() as tmp:
        before = None if args.before is None else checkout(args.before, Path(tmp))
        _health_ab(args, before)


def _health_ab(args: argparse.Namespace, before: str | None) -> None:
    sides = {"after": None} if before is None else {"before": before, "after": None}
    load_at_start = os.getloadavg()
    api, fake = fakeapi.start(answer_text(args.chunks))
    try:
        started = {
            name: _start_bridge(
                api, None if args.profile is None else f"{args.profile}.{name}", code
            )
            for name, code in sides.items()
        }
        took: dict[str, list[float]] = {name: [] for name in sides}
        whole = dict.fromkeys(sides, 0)
        for _ in range(args.rounds):
            for name, (_, _, ready) in started.items():
                health, ok = asyncio.run(
                    _health_under_streams(ready["url"], ready["token"], args.chats, args.chunks)
                )
                took[name] += health
                whole[name] += ok
        stopped = {name: _stop_bridge(b, pipe) for name, (b, pipe, _) in started.items()}
    finally:
        fake.kill()
    api, fake = fakeapi.start(SHORT_ANSWER)
    try:
        started = {name: _start_bridge(api, None, code) for name, code in sides.items()}
        bridges = {name: (ready["url"], ready["token"]) for name, (_, _, ready) in started.items()}
        turns = asyncio.run(_per_turn(api, bridges, args.turns))
        for bridge, pipe, _ in started.values():
            _stop_bridge(bridge, pipe)
    finally:
        fake.kill()
    rtt = loopback_rtt_ms()
    load = os.getloadavg()
    print(
        f"{args.rounds} rounds of {args.chats} concurrent chat/send x {args.chunks} chunks (each "
        f"answer in one burst) while another process asks health every 20 ms on its own "
        f"connection; then {args.turns} whole turns, the raw OpenAI SDK and chat/send through "
        f"each bridge (own process), interleaved. Load average (1 min) {load_at_start[0]:.1f} "
        f"at the start, {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end "
        f"({os.cpu_count()} cores)"
    )
    print(
        f"{'code':<7} {'health p50':>10} {'p99':>8} {'max':>8} {'calls':>6} "
        f"{'loop CPU/turn p99':>17} {'max':>7} {'>10ms':>5} "
        f"{'chats ok':>8} {'turn p50':>9} {'SDK p50':>8} {'added p50':>9} {'p95':>7}"
    )
    rows = {}
    for name in sides:
        added = [b - r for r, b in zip(turns["sdk"], turns[name], strict=True)]
        rows[name] = row = {
            "health_p50_ms": statistics.median(took[name]),
            "health_p99_ms": percentile(took[name], 0.99),
            "health_max_ms": max(took[name]),
            "health_calls": len(took[name]),
            "lag_p99_ms": percentile(stopped[name]["lags"], 0.99),
            "turn_cpu_p99_ms": percentile(stopped[name]["turns"], 0.99),
            "turn_cpu_max_ms": max(stopped[name]["turns"], default=0.0),
            "turns_over_10ms": sum(t > 10 for t in stopped[name]["turns"]),
            "chats_whole": whole[name],
            "turn_p50_ms": statistics.median(turns[name]),
            "sdk_p50_ms": statistics.median(turns["sdk"]),
            "added_p50_ms": statistics.median(added),
            "added_p95_ms": percentile(added, 0.95),
        }
        print(
            f"{name:<7} {row['health_p50_ms']:8.1f}ms {row['health_p99_ms']:6.1f}ms "
            f"{row['health_max_ms']:6.0f}ms {row['health_calls']:>6} "
            f"{row['turn_cpu_p99_ms']:15.1f}ms {row['turn_cpu_max_ms']:5.0f}ms "
            f"{row['turns_over_10ms']:>5} "
            f"{row['chats_whole']:>4}/{args.rounds * args.chats:<3} {row['turn_p50_ms']:7.2f}ms "
            f"{row['sdk_p50_ms']:6.2f}ms {row['added_p50_ms']:7.2f}ms {row['added_p95_ms']:5.2f}ms"
        )
    if len(rows) == 2:
        before, after = rows["before"], rows["after"]
        print(
            f"after / before: health p50 {after['health_p50_ms'] / before['health_p50_ms']:.2f}x, "
            f"p99 {after['health_p99_ms'] / before['health_p99_ms']:.2f}x; loop CPU per turn p99 "
            f"{after['turn_cpu_p99_ms'] / before['turn_cpu_p99_ms']:.2f}x; chat/send p50 "
            f"{after['turn_p50_ms'] / before['turn_p50_ms']:.2f}x"
        )
    print(f"loopback round trip between two Python processes (TCP, 200 bytes): p50 {rtt:.3f} ms")
    after = rows["after"]
    print(
        f"targets: health p99 < 50 ms: {after['health_p99_ms']:.1f} ms; chat/send at most +2 ms "
        f"p50 over the raw SDK: {after['added_p50_ms']:+.2f} ms (loopback {rtt:.3f} ms)"
    )
    out = ROOT / "bench" / "results" / "stalls_health.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(
        json.dumps(
            {"rows": rows, "loopback_rtt_ms": rtt, "load_at_start": load_at_start, "load": load},
            indent=2,
        )
        + "\n"
    )


# -- health while 20 clients search a large vault (--search) -------------------------------

SEARCH_NOTES = 3000
SEARCH_SECONDS = 10.0
SEARCH_QUERIES = [
    "sync",
    "plugin settings",
    "canvas",
    "graph view",
    "search operators",
    "link",
    "template",
    "publish",
    "Einstellungen",
    "заметки",
    "同期",
    "tag:bench/en sync",
]


async def _health_under_search(url: str, token: str, seconds: float) -> dict[str, Any]:
    """``SEARCHERS`` clients searching back to back for ``seconds`` while another process asks
    health every 20 ms on a fresh connection of its own: both sides' latencies, and health's
    for ``seconds`` / 4 before, with nobody searching (what the machine's load alone costs)."""
    ctx = mp.get_context("spawn")
    here, there = ctx.Pipe()
    asker = ctx.Process(target=_health_process, args=(url, token, there), daemon=True)
    asker.start()
    assert await asyncio.to_thread(here.recv) == "ready"
    await asyncio.sleep(seconds / 4)
    here.send("stop")
    idle: list[float] = await asyncio.to_thread(here.recv)
    asker.join(10)
    here, there = ctx.Pipe()
    asker = ctx.Process(target=_health_process, args=(url, token, there), daemon=True)
    asker.start()
    assert await asyncio.to_thread(here.recv) == "ready"
    done = asyncio.Event()
    stats: dict[str, Any] = {"sent": 0, "answered": 0, "ms": []}
    searchers = [
        asyncio.create_task(_search(url, token, done, stats, SEARCH_QUERIES))
        for _ in range(SEARCHERS)
    ]
    await asyncio.sleep(seconds)
    done.set()
    await asyncio.gather(*searchers)
    here.send("stop")
    took: list[float] = await asyncio.to_thread(here.recv)
    asker.join(10)
    return {"health": took, "idle": idle, **stats}


def search_main(args: argparse.Namespace) -> None:
    """health on a fresh connection while 20 clients search a generated vault: this checkout
    and, with ``--before REV_OR_DIR``, another one, their rounds interleaved."""
    from bench import vaultgen

    with tempfile.TemporaryDirectory() as tmp:
        before = None if args.before is None else checkout(args.before, Path(tmp) / "before")
        sides = {"after": None} if before is None else {"before": before, "after": None}
        made = vaultgen.generate_vault(Path(tmp) / "vault", args.notes)
        started = {
            name: _start_bridge("http://127.0.0.1:9", None, code, str(made.root))
            for name, code in sides.items()
        }
        health: dict[str, list[float]] = {name: [] for name in sides}
        idle: dict[str, list[float]] = {name: [] for name in sides}
        searches: dict[str, list[float]] = {name: [] for name in sides}
        answered = dict.fromkeys(sides, 0)
        for _ in range(args.rounds):
            for name, (_, _, ready) in started.items():
                got = asyncio.run(_health_under_search(ready["url"], ready["token"], args.seconds))
                health[name] += got["health"]
                idle[name] += got["idle"]
                searches[name] += got["ms"]
                answered[name] += got["answered"]
        ended = {name: _stop_bridge(b, pipe) for name, (b, pipe, _) in started.items()}
    load = os.getloadavg()
    print(
        f"{args.rounds} rounds of {args.seconds / 4:g} s idle, then {args.seconds:g} s: "
        f"{SEARCHERS} clients searching a {made.notes}-note vault ({made.source}, "
        f"{made.bytes / 1e6:.1f} MB) back to back while another process asks health every "
        f"20 ms on a fresh connection of its own. Load "
        f"average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}"
    )
    print(
        f"{'code':<7} {'idle p50':>8} {'p99':>7} {'health p50':>10} {'p99':>8} {'max':>8} "
        f"{'calls':>6} {'loop lag p99':>12} {'gc max':>7} {'searches':>8} {'search p50':>10} "
        f"{'p99':>8}"
    )
    rows = {}
    for name in sides:
        rows[name] = row = {
            "health_p50_ms": statistics.median(health[name]),
            "health_p99_ms": percentile(health[name], 0.99),
            "health_max_ms": max(health[name]),
            "health_calls": len(health[name]),
            "idle_p50_ms": statistics.median(idle[name]),
            "idle_p99_ms": percentile(idle[name], 0.99),
            "lag_p99_ms": percentile(ended[name]["lags"], 0.99),
            "gc_max_ms": max(ended[name]["pauses"], default=0.0),
            "searches": answered[name],
            "search_p50_ms": statistics.median(searches[name]),
            "search_p99_ms": percentile(searches[name], 0.99),
        }
        print(
            f"{name:<7} {row['idle_p50_ms']:6.1f}ms {row['idle_p99_ms']:5.1f}ms "
            f"{row['health_p50_ms']:8.1f}ms {row['health_p99_ms']:6.1f}ms "
            f"{row['health_max_ms']:6.0f}ms {row['health_calls']:>6} {row['lag_p99_ms']:10.1f}ms "
            f"{row['gc_max_ms']:5.1f}ms {row['searches']:>8} {row['search_p50_ms']:8.1f}ms "
            f"{row['search_p99_ms']:6.1f}ms"
        )
    if len(rows) == 2:
        before, after = rows["before"], rows["after"]
        print(
            f"after / before: health p50 {after['health_p50_ms'] / before['health_p50_ms']:.2f}x, "
            f"p99 {after['health_p99_ms'] / before['health_p99_ms']:.2f}x; searches "
            f"{after['searches'] / max(before['searches'], 1):.2f}x"
        )
    out = ROOT / "bench" / "results" / "stalls_search.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "load": load}, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="The issue-32 figures: --health (about a minute; with --before main, two). Run "
        "it under nice on a shared machine and compare the two sides of one run.",
    )
    parser.add_argument(
        "--chats", type=int, default=CHATS, help="concurrent chat/send (default %(default)s)"
    )
    parser.add_argument(
        "--chunks", type=int, default=CHUNKS, help="chunks per answer (default %(default)s)"
    )
    parser.add_argument(
        "--step",
        choices=list(STEPS),
        action="append",
        help="the burst/paced table: run only these steps of the earlier fix",
    )
    parser.add_argument(
        "--pace", type=float, default=0.0, help="seconds between chunks (0: all at once)"
    )
    parser.add_argument(
        "--health",
        action="store_true",
        help="health latency under the streams, and what chat/send adds over the raw SDK",
    )
    parser.add_argument(
        "--search",
        action="store_true",
        help="health latency while 20 clients search a generated vault (--notes)",
    )
    parser.add_argument(
        "--notes",
        type=int,
        default=SEARCH_NOTES,
        help="--search: notes in the vault (default %(default)s)",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        default=SEARCH_SECONDS,
        help="--search: seconds of searching per round (default %(default)s)",
    )
    parser.add_argument(
        "--rounds",
        type=int,
        default=HEALTH_ROUNDS,
        help="--health, --search: rounds (default %(default)s)",
    )
    parser.add_argument(
        "--turns",
        type=int,
        default=TURNS,
        help="--health: whole turns timed one at a time against the raw SDK (default %(default)s)",
    )
    parser.add_argument(
        "--before",
        metavar="DIR_OR_REV",
        help="--health, --search: also run the bridge of this checkout folder or git revision "
        "(e.g. main), interleaved with this one: an A/B in one run; its modules must match "
        "this tree's (bench/bridge.py builds its server: no fallbacks for older layouts)",
    )
    parser.add_argument(
        "--profile",
        metavar="FILE",
        help="--health: cProfile each bridge's loop into FILE.before / FILE.after",
    )
    args = parser.parse_args()
    if args.health:
        health_main(args)
        return
    if args.search:
        search_main(args)
        return
    rows = [run_step(s, args.chats, args.chunks, args.pace) for s in args.step or list(STEPS)]
    how = f"one chunk every {args.pace * 1000:g} ms" if args.pace else "each answer in one burst"
    print(
        f"{args.chats} streaming chats x {args.chunks} chunks ({how}), {SEARCHERS} clients "
        "searching (lag: overshoot of a 5 ms timer on the bridge's loop)"
    )
    print(
        f"{'step':<10} {'lag p50':>8} {'p99':>7} {'max':>7} {'gc max':>7} {'CPU/chunk':>9} "
        f"{'search p99':>10} "
        f"{'answered':>9} {'in order':>8} {'frames':>7} {'RSS MB: start/round 1/peak/round 2':>34}"
    )
    for row in rows:
        print(
            f"{row['step']:<10} {row['lag_p50_ms']:8.2f} {row['lag_p99_ms']:7.2f} "
            f"{row['lag_max_ms']:7.1f} {row['gc_max_ms']:7.1f} {row['cpu_us_per_chunk']:7.0f}us "
            f"{row['search_p99_ms']:10.1f} "
            f"{row['search_answered']:>4}/{row['search_sent']:<4} "
            f"{row['chats_whole_and_in_order']:>4}/{args.chats:<3} {row['delta_frames']:>7} "
            f"{row['rss_before_mb']:13.1f}/{row['rss_after_first_round_mb']:.1f}/"
            f"{row['rss_peak_mb']:.1f}/{row['rss_after_mb']:.1f}"
        )
    out = ROOT / "bench" / "results" / f"stalls{'_paced' if args.pace else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
