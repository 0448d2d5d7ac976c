"""A fixed address: the WebSocket and HTTP ports persist per vault, in ``ports.json`` in the
data folder, so a client configured once keeps working across restarts.

The first start picks free ports and saves them; later starts reuse them. When a saved port is
taken, the server picks another for this run, logs one line and writes it to the info file (the
saved one stays, for the next start). ``--port N`` / ``--http-port N`` override for one run; an
explicit ``0`` is a free port for this run only; neither is saved.
"""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path
from typing import Final

from plugin_bridge.vault.notes.atomic import write_atomic
from plugin_bridge.wire.security import bind_socket

logger = logging.getLogger(__name__)

PORTS_FILE: Final = "ports.json"
LISTENERS: Final = (("ws", "--port"), ("http", "--http-port"))


class PortTaken(Exception):
    """A port given with a flag cannot be bound; ``str()`` is the user's sentence."""


def saved_ports(data_dir: Path) -> dict[str, int]:
    try:
        raw = json.loads((data_dir / PORTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(raw, dict):
        return {}
    return {k: v for k, v in raw.items() if isinstance(v, int) and 0 < v < 65536}


def bind_ports(
    host: str, data_dir: Path, given: tuple[int | None, int | None]
) -> list[socket.socket]:
    """The listening sockets of the WebSocket and the HTTP API (see the module docstring)."""
    saved = saved_ports(data_dir)
    sockets: list[socket.socket] = []
    fresh: dict[str, int] = {}
    try:
        for (name, flag), port in zip(LISTENERS, given, strict=True):
            sockets.append(_bind(host, name, flag, port, saved, fresh))
    except BaseException:
        for bound in sockets:
            bound.close()
        raise
    if fresh:
        try:
            data = json.dumps({**saved, **fresh}).encode()
            write_atomic(data_dir / PORTS_FILE, data, mode=0o600)
        except OSError as exc:
            logger.warning("cannot save the ports for the next start (%s)", exc)
    return sockets


def _bind(
    host: str, name: str, flag: str, port: int | None, saved: dict[str, int], fresh: dict[str, int]
) -> socket.socket:
    if port is not None:
        try:
            return bind_socket(host, port)
        except OSError as exc:
            raise PortTaken(
                f"Cannot listen on {host}:{port} ({exc.strerror}): choose another {flag}, "
                "or 0 for a free one."
            ) from exc
    if name in saved:
        try:
            return bind_socket(host, saved[name])
        except OSError as exc:
            sock = bind_socket(host, 0)
            logger.warning(
                "port %d (%s) is taken (%s): listening on %d for this run",
                saved[name],
                flag.removeprefix("--"),
                exc.strerror,
                sock.getsockname()[1],
            )
            return sock
    sock = bind_socket(host, 0)
    fresh[name] = sock.getsockname()[1]
    return sock
