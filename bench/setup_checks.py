"""How fast the setup card's probe and the CLI's failed checks answer when nothing listens.

* ``runtimes/detect``'s probe (``llm_service.runtimes.detect_runtimes``) with Ollama and LM
  Studio both absent (closed ports on 127.0.0.1), against one refused TCP connection measured
  in the same run (target: under 300 ms in all).
* ``obsidian-ai-bridge setup`` and ``serve`` given a server that does not answer, wall time
  from the process's start to its exit 2, against the same interpreter starting the CLI for
  ``--help`` (target: under 3 s).
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROBES = 20
RUNS = 3


def closed_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


async def refused(url: str) -> None:
    host, port = url.removeprefix("http://").split(":")
    try:
        await asyncio.open_connection(host, int(port))
    except OSError:
        return


async def probe_times() -> tuple[float, list[float], list[float]]:
    """The first probe (it imports httpx), then PROBES more, and as many refused connects."""
    from llm_service.runtimes import detect_runtimes

    roots = {"ollama": closed_url(), "lmstudio": closed_url()}
    started = time.perf_counter()
    await detect_runtimes(roots)  # type: ignore[arg-type]
    first = time.perf_counter() - started
    detect, baseline = [], []
    for _ in range(PROBES):
        started = time.perf_counter()
        found = await detect_runtimes(roots)  # type: ignore[arg-type]
        detect.append(time.perf_counter() - started)
        assert not any(runtime.reachable for runtime in found)
        started = time.perf_counter()
        await refused(roots["ollama"])
        baseline.append(time.perf_counter() - started)
    return first, detect, baseline


def cli_seconds(*args: str) -> tuple[float, int]:
    """Median wall time of ``python -m plugin_bridge ARGS`` and its exit code."""
    times, code = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        env = {"AI_BRIDGE_CONFIG": f"{tmp}/none.toml", "XDG_STATE_HOME": tmp, "PATH": ""}
        vault = Path(tmp) / "vault"
        vault.mkdir()
        for _ in range(RUNS):
            started = time.perf_counter()
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "plugin_bridge",
                    *(a.replace("VAULT", str(vault)) for a in args),
                ],
                cwd=ROOT,
                env=env,
                capture_output=True,
                check=False,
            )
            times.append(time.perf_counter() - started)
            code = done.returncode
    return statistics.median(times), code


def main() -> None:
    first, detect, baseline = asyncio.run(probe_times())
    print(f"runtimes/detect, nothing listening ({PROBES} probes after a first one)")
    print(f"{'':<34}{'median ms':>10}{'max ms':>10}")
    for label, times in (
        ("detect (Ollama + LM Studio)", detect),
        ("one refused connect", baseline),
    ):
        print(f"{label:<34}{statistics.median(times) * 1e3:>10.1f}{max(times) * 1e3:>10.1f}")
    print(f"{'first probe (imports httpx)':<34}{first * 1e3:>10.1f}")
    print()
    url = closed_url()
    rows = {
        "--help (interpreter + CLI start)": ("--help",),
        "setup, server not answering": (
            "setup",
            "--provider",
            "ollama",
            "--base-url",
            url,
            "--model",
            "m",
        ),
        "serve, server not answering": (
            "serve",
            "--vault",
            "VAULT",
            "--provider",
            "ollama",
            "--base-url",
            url,
        ),
    }
    print(f"CLI wall time, median of {RUNS}")
    print(f"{'':<34}{'seconds':>10}{'exit':>6}")
    for label, args in rows.items():
        seconds, code = cli_seconds(*args)
        print(f"{label:<34}{seconds:>10.2f}{code:>6}")


if __name__ == "__main__":
    main()
