"""An attacker on "another device" (run inside the network namespace, no test imports):

- ``silent N``: opens N TCP connections to the remote listener that never start TLS, prints
  ``{"open": N}`` and holds them until stdin closes, opening a new one for each the server
  closes;
- ``keyless N``: N workers open WebSocket upgrades without a key, again and again until stdin
  closes, then print ``{"refused": R, "opened": O}`` (O: upgrades the server accepted).

Usage: ``python remote_flood.py HOST PORT SOURCE MODE N``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import ssl
import sys

from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus


async def silent(host: str, port: int, source: str, count: int) -> None:
    opened = 0
    all_open = asyncio.Event()

    async def hold() -> None:
        nonlocal opened
        first = True
        while True:
            try:
                reader, writer = await asyncio.open_connection(host, port, local_addr=(source, 0))
            except OSError:
                await asyncio.sleep(0.1)
                continue
            opened += first
            first = False
            if opened == count:
                all_open.set()
            await reader.read()  # until the server closes it
            writer.close()
            await asyncio.sleep(0.1)

    holders = [asyncio.create_task(hold()) for _ in range(count)]
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(30):
            await all_open.wait()
    print(json.dumps({"open": opened}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    for task in holders:
        task.cancel()


async def keyless(host: str, port: int, source: str, count: int) -> None:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    tally = {"refused": 0, "opened": 0}
    stop = asyncio.Event()

    async def worker() -> None:
        while not stop.is_set():
            try:
                async with connect(
                    f"wss://{host}:{port}/ws",
                    ssl=context,
                    local_addr=(source, 0),
                    open_timeout=10,
                ) as ws:
                    tally["opened"] += 1
                    await ws.wait_closed()
            except InvalidStatus:
                tally["refused"] += 1
            except (OSError, TimeoutError):
                await asyncio.sleep(0.05)

    workers = [asyncio.create_task(worker()) for _ in range(count)]
    print(json.dumps({"started": count}), flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    stop.set()
    for task in workers:
        task.cancel()
    await asyncio.gather(*workers, return_exceptions=True)
    print(json.dumps(tally), flush=True)


def main() -> None:
    host, port, source, mode, count = sys.argv[1:6]
    run = silent if mode == "silent" else keyless
    asyncio.run(run(host, int(port), source, int(count)))


if __name__ == "__main__":
    main()
