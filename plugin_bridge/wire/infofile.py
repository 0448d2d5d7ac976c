"""The server info file: how a client finds the running server's URL and token.

``<user state dir>/obsidian-ai-bridge/vaults/<vault key>/server.json`` by default (see
docs/protocol.md for the exact algorithm), written atomically with mode 0600 once the server
listens, removed when it stops::

    {"url": "ws://127.0.0.1:PORT", "token": "...", "pid": 1234, "protocolVersion": 1,
     "httpUrl": "http://127.0.0.1:PORT2"}

``httpUrl`` is the HTTP API's address (docs/http.md), with the same token as a bearer token.
With ``serve --remote``, also ``remoteUrl`` (the remote listener as it listens,
``https://0.0.0.0:8443``) and ``remoteFingerprint`` (its certificate's SHA-256 in hex, empty
over plain HTTP): what ``clients add --pair`` pairs with.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, NamedTuple


class InfoFileError(Exception):
    """The info file is missing or unreadable; ``str(error)`` says what to do."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing
        """No file at all: no server runs for the vault."""


class InfoRecord(NamedTuple):
    """What the info file holds (a NamedTuple: this module is on the fast start-up path)."""

    url: str
    token: str
    pid: int
    protocol_version: int
    http_url: str | None = None
    remote_url: str | None = None
    remote_fingerprint: str = ""

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "url": self.url,
            "token": self.token,
            "pid": self.pid,
            "protocolVersion": self.protocol_version,
        }
        if self.http_url is not None:
            data["httpUrl"] = self.http_url
        if self.remote_url is not None:
            data["remoteUrl"] = self.remote_url
            data["remoteFingerprint"] = self.remote_fingerprint
        return data


def write_info_file(path: Path, info: InfoRecord) -> None:
    """Write ``info`` to ``path`` atomically, readable by the user only (0600).

    No fsync: readers on this machine see the whole file after the rename, and after a crash
    the file is stale anyway.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, json.dumps(info.to_json()).encode())
    finally:
        os.close(fd)
    os.replace(tmp, path)


def read_info_file(path: Path) -> InfoRecord:
    """The info at ``path``, or :class:`InfoFileError` with a sentence saying what to do."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return InfoRecord(
            url=str(raw["url"]),
            token=str(raw["token"]),
            pid=int(raw["pid"]),
            protocol_version=int(raw["protocolVersion"]),
            http_url=None if raw.get("httpUrl") is None else str(raw["httpUrl"]),
            remote_url=None if raw.get("remoteUrl") is None else str(raw["remoteUrl"]),
            remote_fingerprint=str(raw.get("remoteFingerprint") or ""),
        )
    except FileNotFoundError:
        raise InfoFileError(
            f"No server is running for this vault ({path} is missing): "
            "start one with `obsidian-ai-bridge serve --vault PATH`.",
            missing=True,
        ) from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InfoFileError(
            f"The server info file {path} is unreadable ({type(exc).__name__}): "
            "restart the server to rewrite it."
        ) from None


def remove_info_file(path: Path, token: str) -> None:
    """Remove ``path`` if it is still ours (another server may have replaced it since)."""
    try:
        if read_info_file(path).token != token:
            return
        path.unlink()
    except (InfoFileError, FileNotFoundError):
        return
