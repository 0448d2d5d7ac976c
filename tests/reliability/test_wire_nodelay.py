"""Small frames leave at once: every accepted connection has TCP_NODELAY set."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.helpers.bridge import running_bridge


async def test_accepted_connections_disable_nagle(tmp_path: Path) -> None:
    """The server's side of each connection sends without Nagle's delay."""
    async with running_bridge(tmp_path) as bridge:
        await bridge.wire()
        await bridge.wire()
        server = bridge.server._server
        assert server is not None
        sockets = [ws.transport.get_extra_info("socket") for ws in server.connections]
        assert len(sockets) == 2
        assert all(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) for s in sockets)
