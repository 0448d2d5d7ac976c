"""The servers running on this machine (their info files at the default place), and whether
each has taken up a change of the settings file: ``setup`` says so instead of "Next: serve".

A server follows the settings file and applies a change within a second or so (the file's
watch, then a cheap call that checks a new provider); each one is asked for its ``health``
until it uses the saved provider and model, for up to :data:`TAKE_UP_SECONDS`. An info file
whose server is gone (it crashed) is passed over.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Final

from websockets.exceptions import WebSocketException

from plugin_bridge.vault.datadir import INFO_FILE_NAME, vaults_dir
from plugin_bridge.wire.client import BridgeClient, RpcCallError
from plugin_bridge.wire.infofile import InfoFileError, InfoRecord, read_info_file
from plugin_bridge.wire.models import HEALTH, Empty

TAKE_UP_SECONDS: Final = 5.0
"""How long a running server may take to apply the settings file's change."""
CONNECT_SECONDS: Final = 2.0
"""How long connecting to a server may take (a stale info file's port may hang)."""
POLL_SECONDS: Final = 0.1


@dataclass(frozen=True, slots=True)
class RunningServer:
    vault: str
    """The vault's name."""
    took_up: bool
    """Whether it uses the saved provider and model."""


async def running_servers(
    provider: str, model: str, *, wait: float = TAKE_UP_SECONDS
) -> list[RunningServer]:
    """Every server running on this machine, and whether it uses ``provider`` and ``model``
    within ``wait`` seconds; by vault name."""
    records = []
    for path in sorted(vaults_dir().glob(f"*/{INFO_FILE_NAME}")):
        try:
            records.append(read_info_file(path))
        except InfoFileError:
            continue
    found = await asyncio.gather(*(_asked(r, provider, model, wait) for r in records))
    return sorted((server for server in found if server is not None), key=lambda s: s.vault)


async def _asked(
    record: InfoRecord, provider: str, model: str, wait: float
) -> RunningServer | None:
    try:
        async with asyncio.timeout(CONNECT_SECONDS):
            client = await BridgeClient.connect(
                record.url, record.token, client_name="obsidian-ai-bridge setup"
            )
    except (OSError, TimeoutError, WebSocketException, RpcCallError):
        return None  # not running any more
    try:
        assert client.initialize_result is not None  # connect initialized it
        vault = client.initialize_result.vault.name
        deadline = asyncio.get_running_loop().time() + wait
        while True:
            health = await client.call(HEALTH, Empty())
            if (health.provider, health.model) == (provider, model):
                return RunningServer(vault, took_up=True)
            if asyncio.get_running_loop().time() >= deadline:
                return RunningServer(vault, took_up=False)
            await asyncio.sleep(POLL_SECONDS)
    except (OSError, WebSocketException, RpcCallError):
        return None  # it stopped meanwhile
    finally:
        await client.close()
