"""WebSocket settings that the server and the client share.

Frames over :data:`MAX_FRAME_BYTES` close the connection with 1009 (websockets ``max_size``);
keepalive pings go every :data:`PING_INTERVAL` seconds and a peer silent for
:data:`PING_TIMEOUT` seconds more is dropped.
"""

from __future__ import annotations

import logging
from typing import Final

MAX_FRAME_BYTES: Final = 4 * 1024 * 1024
PING_INTERVAL: Final = 20.0
PING_TIMEOUT: Final = 20.0


def quiet_websockets_logger(name: str) -> logging.Logger:
    """A logger for websockets that never logs frames: they carry the token and note text."""
    ws_logger = logging.getLogger(name)
    ws_logger.setLevel(logging.INFO)
    return ws_logger
