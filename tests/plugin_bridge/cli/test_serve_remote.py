"""``serve --remote`` reached from another device: a network namespace joined to this one by a
veth pair, where a client script (tests/helpers/remote_client.py) pins the self-signed
certificate by the fingerprint ``serve`` printed and uses client keys over HTTPS and ``wss://``.

Creating a namespace needs root and iproute2: without them these tests skip and say why.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from plugin_bridge.app.certificate import CERT_FILE, pins
from plugin_bridge.app.clients import ClientKeys
from plugin_bridge.app.settings.config import PLUGIN_CLIENT
from plugin_bridge.wire.client import BridgeClient
from tests.conftest import REPO_ROOT
from tests.fakes import ollama
from tests.fakes.http import FakeHTTPServer, Recorded, Reply
from tests.helpers.netns import Device
from tests.helpers.serve import Served, start_serve

CLIENT_SCRIPT = REPO_ROOT / "tests" / "helpers" / "remote_client.py"
PLAN = "# Plan\n\nStep 1: start.\n"


def _free_port(host: str) -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _ollama_route(server: FakeHTTPServer) -> None:
    """Ollama's model list and details for any GET or /api/show; chats get the queue."""

    def route(request: Recorded) -> Reply:
        if request.path.startswith("/api/chat"):
            if server.replies:
                return server.replies.pop(0)
            return Reply.json({"error": "fake: no reply queued"}, status=500)
        model = {"name": ollama.MODEL, "model": ollama.MODEL, "size": 1}
        return Reply.json(
            {"models": [model], "version": "0.9.0", "capabilities": ["completion", "tools"]}
        )

    server.route = route


class RemoteClient:
    """The client script inside the namespace, one JSON step at a time."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def step(self, **step: Any) -> dict[str, Any]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write((json.dumps(step) + "\n").encode())
        await self.process.stdin.drain()
        async with asyncio.timeout(30):
            line = await self.process.stdout.readline()
        assert line, "the client in the namespace stopped"
        result: dict[str, Any] = json.loads(line)
        return result


@dataclass
class Remote:
    served: Served
    client: RemoteClient
    fingerprint: str
    pin: str
    keys: dict[str, str]
    model: FakeHTTPServer
    device: Device


@pytest.fixture
async def remote(
    tmp_path: Path, another_device: Device, fake_http: FakeHTTPServer
) -> AsyncIterator[Remote]:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Plan.md").write_text(PLAN, encoding="utf-8")
    (vault / "Bread.md").write_text("# Bread\n\nFeed the starter daily.\n", encoding="utf-8")
    store = ClientKeys(tmp_path / "data")
    keys = {scope: store.add(f"{scope}-device", scope) for scope in ("read", "chat", "write")}
    _ollama_route(fake_http)
    port = _free_port(another_device.host)
    served = await start_serve(
        tmp_path,
        "--info-file",
        str(tmp_path / "info.json"),
        "--remote",
        f"{another_device.host}:{port}",
        "--provider",
        "ollama",
        "--base-url",
        fake_http.url,
        "--model",
        ollama.MODEL,
        vault=vault,
        stderr=None if os.environ.get("DEBUG_SERVE") else asyncio.subprocess.PIPE,
    )
    assert served.process.stderr is not None
    printed: dict[str, str] = {}
    while "pin" not in printed:
        line = (await served.process.stderr.readline()).decode()
        assert line, "serve stopped before printing the certificate's fingerprint"
        if line.startswith("TLS certificate fingerprint (SHA-256): "):
            printed["fingerprint"] = line.split(": ")[1].strip()
        if line.startswith("Public key pin (curl --pinnedpubkey): "):
            printed["pin"] = line.split(": ")[1].strip()
    drain = asyncio.create_task(_drain(served.process.stderr))
    process = await asyncio.create_subprocess_exec(
        "ip",
        "netns",
        "exec",
        another_device.namespace,
        sys.executable,
        str(CLIENT_SCRIPT),
        another_device.host,
        str(port),
        printed["fingerprint"],
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        yield Remote(
            served,
            RemoteClient(process),
            printed["fingerprint"],
            printed["pin"],
            keys,
            fake_http,
            another_device,
        )
    finally:
        for running in (process, served.process):
            if running.returncode is None:
                running.kill()
                await running.wait()
        drain.cancel()


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.readline():
        pass


async def test_another_device_reads_chats_writes_loses_access_and_is_rate_limited(
    remote: Remote, tmp_path: Path
) -> None:
    client = remote.client
    keys = remote.keys
    # TLS with the pinned fingerprint; the printed pins are the served certificate's.
    health = await client.step(op="http", path="/health", key=keys["read"])
    assert health["status"] == 200, health
    assert health["fingerprint"] == remote.fingerprint
    cert = x509.load_pem_x509_certificate((tmp_path / "data" / CERT_FILE).read_bytes())
    assert pins(cert) == (remote.fingerprint, remote.pin)
    assert (await client.step(op="bad-pin")) == {"refused": True}
    local = await client.step(op="http", path="/api/local-llm/health", key=keys["read"])
    assert local["status"] == 200

    # A read key: search and list notes over the WebSocket; no model call, no write.
    opened = await client.step(op="open", name="reader", key=keys["read"])
    assert opened["result"]["vault"]["noteCount"] == 2, opened
    found = await client.step(
        op="call", name="reader", method="vault/search", params={"query": "starter"}
    )
    assert [hit["path"] for hit in found["result"]["results"]] == ["Bread.md"]
    listed = await client.step(op="call", name="reader", method="vault/list", params={})
    assert sorted(note["path"] for note in listed["result"]["notes"]) == ["Bread.md", "Plan.md"]
    refused = await client.step(op="call", name="reader", method="chat/send", params={"text": "hi"})
    assert refused["error"]["code"] == -32004 and "scope chat" in refused["error"]["message"]
    chat = await client.step(
        op="http", method="POST", path="/chat", key=keys["read"], body={"messages": QUESTION}
    )
    assert chat["status"] == 403 and json.loads(chat["body"])["error"] == "forbidden_scope"

    # A chat key: the thin client's two rounds with both block shapes; a write is refused.
    for round_2 in (ANTHROPIC_ROUND_2, RUST_ROUND_2):
        remote.model.enqueue(
            ollama.tool_reply([("call_1", "get_weather", {"city": "Oslo"})], stream=False),
            ollama.text_reply("Sunny in Oslo.", stream=False),
        )
        body = {"messages": QUESTION, "tools": [WEATHER]}
        first = await client.step(
            op="http", method="POST", path="/chat", key=keys["chat"], body=body
        )
        assert first["status"] == 200, first
        assert json.loads(first["body"])["tool_calls"][0]["function"]["name"] == "get_weather"
        body = {"messages": [*QUESTION, *round_2], "tools": [WEATHER]}
        second = await client.step(
            op="http", method="POST", path="/chat", key=keys["chat"], body=body
        )
        assert second["status"] == 200, second
        assert json.loads(second["body"])["content"] == "Sunny in Oslo."
    sent = [r.json() for r in remote.model.requests if r.path.startswith("/api/chat")][-1]
    assert [m["role"] for m in sent["messages"]][-2:] == ["assistant", "tool"]
    await client.step(op="open", name="chatter", key=keys["chat"])
    write = await client.step(
        op="call",
        name="chatter",
        method="tools/execute",
        params={"calls": [{"name": "create_note", "arguments": {"path": "X.md", "content": "x"}}]},
    )
    assert write["error"]["code"] == -32004 and "scope write" in write["error"]["message"]
    assert not (tmp_path / "vault" / "X.md").exists()

    # The info file's token is the plugin's and the user's: refused here like a wrong key.
    token = remote.served.info["token"]
    assert isinstance(token, str)
    owner = await client.step(op="http", path="/health", key=token)
    assert owner["status"] == 401 and json.loads(owner["body"])["error"] == "auth_failed"
    refused_owner = await client.step(op="open", name="owner", key=token)
    assert refused_owner == {"refused": 401}, refused_owner  # at the handshake, no slot taken
    keyless = await client.step(op="open", name="keyless", key=keys["read"], keyless=True)
    assert keyless == {"refused": 401}, keyless

    # A write key: the device reviews the write (tool/confirm), the local plugin applies it.
    applied: list[dict[str, Any]] = []
    note = tmp_path / "vault" / "Plan.md"

    reviewed: list[str] = []

    async def plugin_answers(method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "tool/confirm":
            reviewed.append(params["title"])
            return {"approved": True}
        applied.append(params)
        note.write_text(params["after"], encoding="utf-8")  # as Obsidian's editor saves it
        return {"applied": True, "hash": hashlib.sha256(params["after"].encode()).hexdigest()}

    plugin = await BridgeClient.connect(
        str(remote.served.info["url"]),
        token,
        client_name=PLUGIN_CLIENT,
        on_request=plugin_answers,
    )
    try:
        edit = {"path": "Plan.md", "edits": [{"old_text": "start.", "new_text": "started."}]}
        remote.model.enqueue(
            ollama.tool_reply([("call_2", "edit_note", edit)]), ollama.text_reply("Done.")
        )
        await client.step(op="open", name="writer", key=keys["write"], client=PLUGIN_CLIENT)
        sent_chat = await client.step(
            op="call",
            name="writer",
            method="chat/send",
            params={"text": "mark step 1 started"},
            confirm=True,
        )
        assert "result" in sent_chat, sent_chat
        assert note.read_text(encoding="utf-8") == PLAN.replace("start.", "started.")
        assert [a["path"] for a in applied] == ["Plan.md"]
        audit = await plugin.request("audit/list", {"limit": 1})
        assert "key:write-device" in audit["entries"][0]["origin"]
        undone = await client.step(
            op="call", name="writer", method="note/undo", params={"path": "Plan.md"}
        )
        assert "result" in undone, undone
        assert note.read_text(encoding="utf-8") == PLAN
        assert reviewed == []  # the device reviewed its own chat's write

        # Over HTTP nobody is on the connection to ask: the local plugin reviews the write.
        call = {"id": "c1", "function": {"name": "edit_note", "arguments": json.dumps(edit)}}
        executed = await client.step(
            op="http",
            method="POST",
            path="/api/local-llm/execute-tools",
            key=keys["write"],
            body={"tool_calls": [call]},
        )
        assert executed["status"] == 200, executed
        assert len(reviewed) == 1 and "Plan.md" in reviewed[0]
        assert note.read_text(encoding="utf-8") == PLAN.replace("start.", "started.")
        assert len(applied) == 2
    finally:
        await plugin.close()

    # Revoked: the next request is refused, on a new connection and an open one alike.
    ClientKeys(tmp_path / "data").revoke("read-device")
    gone = await client.step(op="http", path="/health", key=keys["read"])
    assert gone["status"] == 401
    after = await client.step(
        op="call", name="reader", method="vault/search", params={"query": "x"}
    )
    assert after["error"]["code"] == -32001 or after.get("closed") == 4401, after

    # 20 failed authentications within a minute block that address, and only that one.
    quiet, noisy = remote.device.addresses  # the client sent from the first so far
    for _ in range(20):
        wrong = await client.step(op="http", path="/health", key="oab_wrong", source=noisy)
        assert wrong["status"] == 401
    blocked = await client.step(op="http", path="/health", key=keys["chat"], source=noisy)
    assert blocked["status"] == 429, blocked
    assert 1 <= int(blocked["headers"]["retry-after"]) <= 60
    handshake = await client.step(op="open", name="blocked", key=keys["chat"], source=noisy)
    assert handshake == {"refused": 429}, handshake
    other = await client.step(op="http", path="/health", key=keys["chat"], source=quiet)
    assert other["status"] == 200


QUESTION = [{"role": "user", "content": "Weather in Oslo?"}]
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
RESULT_BLOCKS = {
    "role": "user",
    "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "sunny"}],
}
ANTHROPIC_ROUND_2 = [
    {
        "role": "assistant",
        "content": [
            {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Oslo"}}
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "sunny"}],
    },
]
RUST_ROUND_2 = [
    {
        "role": "assistant",
        "content": [
            {
                "type": "tool_use",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
                    }
                ],
            }
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "call_1", "content": "sunny"}],
    },
]
