"""A client that sends requests and never reads the replies stops being read, then is closed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from websockets.client import ClientProtocol
from websockets.uri import parse_uri

from plugin_bridge.wire.connection import OUTGOING_LIMIT
from plugin_bridge.wire.protocol import MAX_IN_FLIGHT
from tests.helpers.bridge import WAIT, init_params, running_bridge, wait_for

REQUESTS = 300
"""note/read requests of a 1 MB note: 300 MB of replies if the server kept answering."""


async def test_a_client_that_never_reads_is_cut_off_and_closed(tmp_path: Path) -> None:
    """Past the outgoing bound the server reads nothing more from a client that reads nothing,
    closes it once it has not drained within the drain timeout, and serves others meanwhile."""
    async with running_bridge(tmp_path, drain_timeout=0.5) as bridge:
        (bridge.vault.root / "Big.md").write_text("word " * 200_000, encoding="utf-8")
        bridge.vault.index.notify_changed("Big.md")
        protocol = ClientProtocol(parse_uri(bridge.url), max_size=None)
        host, port = bridge.url.removeprefix("ws://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        protocol.send_request(protocol.connect())
        writer.write(b"".join(protocol.data_to_send()))
        async with asyncio.timeout(WAIT):
            while protocol.handshake_exc is None and protocol.state.name == "CONNECTING":
                protocol.receive_data(await reader.read(65536))
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": init_params(bridge.app.token),
        }
        protocol.send_text(json.dumps(init).encode())
        for request_id in range(1, REQUESTS + 1):
            read = {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "note/read",
                "params": {"path": "Big.md"},
            }
            protocol.send_text(json.dumps(read).encode())
        writer.write(b"".join(protocol.data_to_send()))  # and never read another byte
        await wait_for(lambda: len(bridge.server.connections) == 1)
        (greedy,) = bridge.server.connections
        await wait_for(lambda: greedy.outgoing > OUTGOING_LIMIT)
        other = await bridge.wire()
        assert (await other.result("health"))["status"] == "ok"
        await wait_for(lambda: greedy not in bridge.server.connections)
        assert greedy.protocol.in_flight <= MAX_IN_FLIGHT
        assert (await other.result("health"))["status"] == "ok"
        writer.close()
