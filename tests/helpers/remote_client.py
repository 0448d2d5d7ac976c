"""A client on "another device": run inside a network namespace, it talks to the bridge's remote
listener over TLS, checking the certificate by its pinned fingerprint, as a script or a bot
would. The test drives it one JSON line at a time on stdin and reads one JSON line per step:

- ``{"op": "http", "method", "path", "key", "body"?, "source"?, "headers"?}`` →
  ``{"status", "headers", "body", "fingerprint"}`` (``source``: the address to send from);
- ``{"op": "open", "name", "key", "client"?, "source"?, "keyless"?}`` → the ``initialize``
  reply, ``{"closed": code}``, or ``{"refused": status}`` when the handshake is refused (the
  key goes in the handshake's ``Authorization`` too, unless ``keyless``);
- ``{"op": "call", "name", "method", "params", "confirm"?}`` → the reply to that request (the
  notifications before it are skipped; a ``tool/confirm`` asked meanwhile is answered
  ``{"approved": confirm}``), or ``{"closed": code}``;
- ``{"op": "bad-pin"}`` → ``{"refused": true}`` when a wrong pin stops the connection.

Usage: ``python remote_client.py HOST PORT FINGERPRINT`` (no test imports: it runs as a script).
"""

from __future__ import annotations

import asyncio
import hashlib
import http.client
import json
import ssl
import sys
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus


class PinMismatch(Exception):
    pass


def pinned_context() -> ssl.SSLContext:
    """TLS without the CA check: the certificate is checked by its fingerprint after the
    handshake (what a script that pins a self-signed certificate does)."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    return context


def check_pin(der: bytes | None, pin: str) -> str:
    seen = hashlib.sha256(der or b"").hexdigest()
    if seen != pin:
        raise PinMismatch(seen)
    return seen


class Client:
    def __init__(self, host: str, port: int, pin: str) -> None:
        self.host, self.port, self.pin = host, port, pin
        self.sockets: dict[str, ClientConnection] = {}
        self.ids = 0

    def http(self, step: dict[str, Any]) -> dict[str, Any]:
        source = (step["source"], 0) if step.get("source") else None
        conn = http.client.HTTPSConnection(
            self.host, self.port, context=pinned_context(), timeout=15, source_address=source
        )
        conn.connect()
        assert conn.sock is not None
        seen = check_pin(conn.sock.getpeercert(binary_form=True), self.pin)
        headers = {"Authorization": f"Bearer {step['key']}", **step.get("headers", {})}
        body = None if step.get("body") is None else json.dumps(step["body"])
        if body is not None:
            headers["Content-Type"] = "application/json"
        conn.request(step.get("method", "GET"), step["path"], body=body, headers=headers)
        response = conn.getresponse()
        text = response.read().decode()
        conn.close()
        return {
            "status": response.status,
            "headers": {k.lower(): v for k, v in response.getheaders()},
            "body": text,
            "fingerprint": seen,
        }

    async def open(self, step: dict[str, Any]) -> dict[str, Any]:
        source: dict[str, Any] = {"local_addr": (step["source"], 0)} if step.get("source") else {}
        headers = {} if step.get("keyless") else {"Authorization": f"Bearer {step['key']}"}
        try:
            ws = await connect(
                f"wss://{self.host}:{self.port}/ws",
                ssl=pinned_context(),
                additional_headers=headers,
                open_timeout=10,
                **source,
            )
        except InvalidStatus as exc:
            return {"refused": exc.response.status_code}
        ssl_object = ws.transport.get_extra_info("ssl_object")
        check_pin(ssl_object.getpeercert(binary_form=True), self.pin)
        self.sockets[step["name"]] = ws
        client = {"name": step.get("client", "remote-test"), "version": "0"}
        params = {"token": step["key"], "protocolVersion": 1, "client": client}
        return await self.call({"name": step["name"], "method": "initialize", "params": params})

    async def call(self, step: dict[str, Any]) -> dict[str, Any]:
        ws = self.sockets[step["name"]]
        self.ids += 1
        request_id = self.ids
        message = {"jsonrpc": "2.0", "id": request_id, "method": step["method"]}
        message["params"] = step.get("params") or {}
        try:
            await ws.send(json.dumps(message))
            while True:
                got = json.loads(await ws.recv())
                if got.get("method") == "tool/confirm" and "id" in got:
                    answer = {"approved": bool(step.get("confirm"))}
                    await ws.send(json.dumps({"jsonrpc": "2.0", "id": got["id"], "result": answer}))
                elif got.get("id") == request_id and "method" not in got:
                    return dict(got)
        except ConnectionClosed as exc:
            return {"closed": exc.rcvd.code if exc.rcvd is not None else None}

    async def bad_pin(self) -> dict[str, Any]:
        saved, self.pin = self.pin, "0" * 64
        try:
            self.http({"path": "/health", "key": "x"})
        except PinMismatch:
            return {"refused": True}
        finally:
            self.pin = saved
        return {"refused": False}


async def main() -> None:
    host, port, pin = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    client = Client(host, port, pin)
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        step = json.loads(line)
        try:
            if step["op"] == "http":
                result = await asyncio.to_thread(client.http, step)
            elif step["op"] == "open":
                result = await client.open(step)
            elif step["op"] == "call":
                result = await client.call(step)
            else:
                result = await client.bad_pin()
        except Exception as exc:  # the test reads what went wrong
            result = {"exception": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    asyncio.run(main())
