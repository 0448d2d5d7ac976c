"""Client keys over real sockets: each scope allowed and refused on the HTTP API (httpx, the
openai SDK) and on the WebSocket, revocation on a running server, the keys file."""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from llm_service import Message, Usage
from plugin_bridge.app import mcp_approval
from plugin_bridge.app.clients import Caller, ClientKeys
from plugin_bridge.app.settings.config import PLUGIN_CLIENT
from plugin_bridge.cli import main
from tests.fakes import anthropic as anthropic_fake
from tests.helpers.bridge import init_params, wait_for
from tests.plugin_bridge.httpapi.conftest import Served

pytestmark = pytest.mark.asyncio(loop_scope="module")

QUESTION = [{"role": "user", "content": "Hello?"}]
FORBIDDEN = -32004
PLUGIN = {"name": PLUGIN_CLIENT, "version": "0"}


def keys_of(served: Served) -> ClientKeys:
    """The keys as the CLI sees them: its own store over the server's data folder."""
    return ClientKeys(served.bridge.vault.data_dir)


def add(served: Served, name: str, scope: str) -> str:
    return keys_of(served).add(f"{name}-{time.monotonic_ns()}", scope)  # type: ignore[arg-type]


async def test_read_key_reads_and_is_refused_chat(served: Served) -> None:
    key = add(served, "reader", "read")
    assert key.startswith("oab_") and len(key) >= 47
    async with served.http(key) as http:
        assert (await http.get("/health")).status_code == 200
        assert (await http.get("/api/local-llm/health")).status_code == 200
        assert (await http.get("/api/local-llm/tools")).status_code == 200
        refused = await http.post("/chat", json={"messages": QUESTION})
        written = await http.post(
            "/api/local-llm/execute-tools",
            json={"tool_calls": [{"function": {"name": "create_note", "arguments": {}}}]},
        )
    assert refused.status_code == 403
    assert refused.json()["error"] == "forbidden_scope"
    assert "scope chat" in refused.json()["message"]
    assert written.status_code == 403 and "scope write" in written.json()["message"]
    client = openai.AsyncOpenAI(api_key=key, base_url=served.bridge.http_url + "/v1")
    with pytest.raises(openai.PermissionDeniedError) as caught:
        await client.chat.completions.create(model="claude-test", messages=QUESTION)  # type: ignore[arg-type]
    assert caught.value.code == "forbidden_scope"
    assert not served.chats(served.anthropic)


@pytest.mark.parametrize(("scope", "status"), [("read", 403), ("chat", 200)])
async def test_the_model_list_needs_chat_like_the_rest_of_v1(
    served: Served, scope: str, status: int
) -> None:
    key = add(served, f"lister-{scope}", scope)
    async with served.http(key) as http:
        response = await http.get("/v1/models")
    assert response.status_code == status
    if status == 403:
        assert response.json()["error"]["code"] == "forbidden_scope"
        assert "scope chat" in response.json()["error"]["message"]
    else:
        assert response.json()["data"][0]["id"] == "vault"


async def test_chat_key_chats_over_openai_and_websocket(served: Served) -> None:
    key = add(served, "chatter", "chat")
    served.anthropic.enqueue(anthropic_fake.text_reply("Hi.", stream=False))
    client = openai.AsyncOpenAI(api_key=key, base_url=served.bridge.http_url + "/v1")
    reply = await client.chat.completions.create(model="claude-test", messages=QUESTION)  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "Hi."
    wire = await served.bridge.wire(token=key)
    try:
        assert "results" in await wire.result("vault/search", {"query": "note"})
        for method, params in (
            ("settings/update", {"maxTokens": 100}),
            ("settings/get", None),
            ("note/create", {"path": "x.md", "content": "x"}),
            ("audit/list", None),
            ("embedder/download", {}),
            ("tools/execute", {"calls": [{"name": "create_note", "arguments": {}}]}),
        ):
            error = await wire.error(method, params)
            assert error["code"] == FORBIDDEN, (method, error)
            assert "scope" in error["message"] or "info file" in error["message"]
    finally:
        await wire.ws.close()
    assert not (served.bridge.vault.root / "x.md").exists()


async def test_unknown_key_is_refused(served: Served) -> None:
    """Every HTTP 401 says the same sentence, in the route's own error shape, and never sends
    a client to the info file (its token is not for clients)."""
    async with served.http("oab_" + "x" * 43) as http:
        refused = await http.get("/health")
        openai_refused = await http.get("/v1/models")
        mcp_refused = await http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    async with httpx.AsyncClient(base_url=served.bridge.http_url) as http:
        missing = await http.get("/api/local-llm/tools")
    for answer in (refused, missing):
        assert answer.status_code == 401
        assert answer.json()["error"] == "auth_failed"
        assert "missing or wrong client key" in answer.json()["message"]
        assert "info file" not in answer.text
    assert openai_refused.status_code == 401 and mcp_refused.status_code == 401
    assert "missing or wrong client key" in openai_refused.json()["error"]["message"]
    assert "missing or wrong client key" in mcp_refused.json()["error"]["message"]
    assert "info file" not in openai_refused.text + mcp_refused.text
    wire = await served.bridge.wire(initialize=False)
    try:
        error = await wire.error("initialize", init_params("oab_" + "x" * 43))
        assert error["code"] == -32001
    finally:
        await wire.ws.close()


async def test_revoke_takes_effect_on_a_running_server_within_a_second(served: Served) -> None:
    name = f"gone-{time.monotonic_ns()}"
    key = keys_of(served).add(name, "write")
    wire = await served.bridge.wire(token=key)
    try:
        async with served.http(key) as http:
            assert (await http.get("/health")).status_code == 200
            assert (
                main(
                    [
                        "clients",
                        "revoke",
                        name,
                        "--vault",
                        str(served.bridge.vault.root),
                        "--data-dir",
                        str(served.bridge.vault.data_dir),
                    ]
                )
                == 0
            )
            started = time.monotonic()
            refused = await http.get("/health")
            assert refused.status_code == 401 and refused.json()["error"] == "auth_failed"
            assert f"'{name}' was revoked" in refused.json()["message"]
            assert key not in refused.text and "info file" not in refused.text
            error = await wire.error("health")
            assert error["code"] == -32001 and "revoked" in error["message"]
            assert time.monotonic() - started < 1.0
    finally:
        await wire.ws.close()
    again = await served.bridge.wire(initialize=False)
    try:
        error = await again.error("initialize", init_params(key))
        assert error["code"] == -32001 and f"'{name}' was revoked" in error["message"]
    finally:
        await again.ws.close()


async def test_revoke_then_add_again_closes_the_old_keys_connection(served: Served) -> None:
    """A connection is tied to its key's hash: the same name and scope added again after a
    revoke is a new key, so the old one's open WebSocket is refused and closed (4401), while
    the new key connects."""
    name = f"reused-{time.monotonic_ns()}"
    old = keys_of(served).add(name, "read")
    wire = await served.bridge.wire(token=old)
    try:
        assert await wire.result("health")
        keys_of(served).revoke(name)
        new = keys_of(served).add(name, "read")
        error = await wire.error("health")
        assert error["code"] == -32001 and "revoked" in error["message"]
        async with asyncio.timeout(5):
            await wire.ws.wait_closed()
        assert wire.ws.close_code == 4401
        fresh = await served.bridge.wire(token=new)
        try:
            assert await fresh.result("health")
        finally:
            await fresh.ws.close()
    finally:
        await wire.ws.close()


async def test_keys_file_holds_hashes_only_with_mode_0600(served: Served) -> None:
    key = add(served, "secret", "read")
    store = keys_of(served)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    data = served.bridge.vault.data_dir
    for path in data.rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path
    async with served.http(key) as http:
        assert (await http.get("/health")).status_code == 200
    served.bridge.app.clients.flush_used()
    assert any(record.last_used is not None for record in keys_of(served).list())


async def test_plugin_manages_keys_over_the_websocket(served: Served) -> None:
    owner = await served.bridge.wire()
    try:
        name = f"wired-{time.monotonic_ns()}"
        added = await owner.result("clients/add", {"name": name, "scope": "write"})
        assert added["name"] == name and added["key"].startswith("oab_")
        listed = await owner.result("clients/list")
        assert {"name": name, "scope": "write"}.items() <= next(
            c for c in listed["clients"] if c["name"] == name
        ).items()
        assert added["key"] not in str(listed)
        again = await owner.error("clients/add", {"name": name})
        assert again["code"] == -32602
        keyed = await served.bridge.wire(token=added["key"])
        try:
            for method, params in (
                ("clients/list", None),
                ("clients/add", {"name": "x"}),
                ("clients/revoke", {"name": name}),
            ):
                error = await keyed.error(method, params)
                assert error["code"] == FORBIDDEN and "info file" in error["message"]
            await owner.result("clients/revoke", {"name": name})
            assert (await keyed.error("health"))["code"] == -32001
        finally:
            await keyed.ws.close()
    finally:
        await owner.ws.close()


def marker_server(marker: Path) -> dict[str, Any]:
    """An MCP server whose start leaves ``marker`` behind (then it exits)."""
    return {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w').close()"]}


def saved_text() -> str:
    path = Path(os.environ["AI_BRIDGE_CONFIG"])
    return path.read_text(encoding="utf-8") if path.exists() else ""


async def test_a_client_key_cannot_add_an_mcp_server(served: Served, tmp_path: Path) -> None:
    key = add(served, "attacker", "write")
    wire = await served.bridge.wire(token=key)
    marker = tmp_path / "ran"
    try:
        error = await wire.error("settings/update", {"mcpServers": {"x": marker_server(marker)}})
    finally:
        await wire.ws.close()
    assert error["code"] == FORBIDDEN
    await asyncio.sleep(0.5)
    assert not marker.exists() and "ran" not in saved_text()


async def test_an_mcp_server_waits_for_settings_confirm(served: Served, tmp_path: Path) -> None:
    bridge = served.bridge
    plugin = await bridge.wire(initialize=False)
    await plugin.result("initialize", {**init_params(bridge.app.token), "client": PLUGIN})
    owner = await bridge.wire()  # the info file's token, not the plugin (a script, the CLI)
    try:
        denied, approved = tmp_path / "denied", tmp_path / "approved"
        asked = await owner.request("settings/update", {"mcpServers": {"d": marker_server(denied)}})
        request = await plugin.recv()
        assert request["method"] == "settings/confirm"
        assert (
            request["params"]["server"] == "d" and str(denied) in request["params"]["commandLine"]
        )
        await plugin.send({"jsonrpc": "2.0", "id": request["id"], "result": {"approved": False}})
        refused = await owner.reply_to(asked)
        assert refused["error"]["code"] == -32030
        await asyncio.sleep(0.5)
        assert not denied.exists() and str(denied) not in saved_text()
        assert "d" not in bridge.app.config.mcp.servers

        asked = await owner.request(
            "settings/update", {"mcpServers": {"a": marker_server(approved)}}
        )
        request = await plugin.recv()
        await plugin.send({"jsonrpc": "2.0", "id": request["id"], "result": {"approved": True}})
        assert "result" in await owner.reply_to(asked)
        await wait_for(approved.exists)
        assert "a" in bridge.app.config.mcp.servers and str(approved) in saved_text()
        await owner.result("settings/update", {"mcpServers": {"a": None}})  # no question
    finally:
        await plugin.ws.close()
        await owner.ws.close()


async def test_no_plugin_to_ask_starts_nothing(served: Served, tmp_path: Path) -> None:
    owner = await served.bridge.wire()
    marker = tmp_path / "alone"
    try:
        error = await owner.error("settings/update", {"mcpServers": {"n": marker_server(marker)}})
    finally:
        await owner.ws.close()
    assert error["code"] == -32030 and "no Obsidian plugin" in error["message"]
    await asyncio.sleep(0.3)
    assert not marker.exists()


async def test_usage_and_audit_logs_name_the_key(served: Served) -> None:
    chat_name, write_name = f"talker-{time.monotonic_ns()}", f"writer-{time.monotonic_ns()}"
    chat_key = keys_of(served).add(chat_name, "chat")
    served.anthropic.enqueue(anthropic_fake.text_reply("Hi.", stream=False))
    async with served.http(chat_key) as http:
        assert (await http.post("/chat", json={"messages": QUESTION})).status_code == 200
    rows = await served.bridge.app.usage_log.execute(
        lambda log: log.by_model(0, f"key:{chat_name}")
    )
    assert [row.calls for row in rows] == [1]
    wire = await served.bridge.wire(token=keys_of(served).add(write_name, "write"))
    try:
        path = f"by-{write_name}.md"
        await wire.result(
            "tools/execute",
            {"calls": [{"name": "create_note", "arguments": {"path": path, "content": "x"}}]},
            answer=lambda method, params: {"approved": True},
        )
    finally:
        await wire.ws.close()
    audit = (served.bridge.vault.data_dir / "audit.jsonl").read_text(encoding="utf-8")
    assert f"key:{write_name}" in audit and path in audit


async def test_a_keys_turns_and_commands_are_its_own(served: Served) -> None:
    """The caller goes with every model call over the WebSocket: a key's chat turn, its
    conversation and its command are recorded under the key, not the owner."""
    name = f"turner-{time.monotonic_ns()}"
    key = keys_of(served).add(name, "chat")
    served.anthropic.enqueue(anthropic_fake.text_reply("Hello."), anthropic_fake.text_reply("Ok."))
    wire = await served.bridge.wire(token=key)
    try:
        sent = await wire.result("chat/send", {"text": "hi"})
        await wire.result("command/rewrite", {"text": "bad", "instruction": "better"})
    finally:
        await wire.ws.close()
    app = served.bridge.app
    store = await app.conversations.stored()
    assert await store.execute(lambda s: s.client_of(sent["conversationId"])) == f"key:{name}"
    rows = await app.usage_log.execute(
        lambda log: log._conn.execute(
            "SELECT purpose FROM usage WHERE client = ? ORDER BY time", (f"key:{name}",)
        ).fetchall()
    )
    assert rows == [("chat",), ("rewrite",)]


async def test_a_chat_key_sees_its_own_conversations_and_usage(served: Served) -> None:
    app = served.bridge.app
    name = f"own-{time.monotonic_ns()}"
    key = keys_of(served).add(name, "chat")
    store = await app.conversations.stored()
    mine = [Message.user("mine"), Message.assistant("ok")]
    await store.execute(lambda s: s.append("owners-talk", mine, "m", "owner"))
    theirs = [Message.user("theirs"), Message.assistant("ok")]
    await store.execute(lambda s: s.append(f"{name}-talk", theirs, "m", Caller(name, "chat").label))
    app.usage_log.post(None, "http", "anthropic", "key-model", Usage(7, 3), 0.5, f"key:{name}")
    wire = await served.bridge.wire(token=key)
    try:
        listed = await wire.result("conversations/list", {})
        assert [c["id"] for c in listed["conversations"]] == [f"{name}-talk"]
        assert (await wire.error("conversations/get", {"id": "owners-talk"}))["code"] == -32602
        assert (await wire.error("conversations/delete", {"id": "owners-talk"}))["code"] == -32602
        assert (await wire.result("conversations/get", {"id": f"{name}-talk"}))["messages"]
        usage = await wire.result("usage/summary")
        assert [row["model"] for row in usage["today"]["byModel"]] == ["key-model"]
    finally:
        await wire.ws.close()
    owner = await served.bridge.wire()
    try:
        ids = {c["id"] for c in (await owner.result("conversations/list", {}))["conversations"]}
        assert {"owners-talk", f"{name}-talk"} <= ids
    finally:
        await owner.ws.close()


@pytest.mark.parametrize(("scope", "written"), [("chat", False), ("write", True)])
async def test_the_vault_model_writes_only_for_a_write_key(
    served: Served, scope: str, written: bool
) -> None:
    """With http_allow_writes on, the vault model's writes still need a key of scope write."""
    app = served.bridge.app
    settings = app.config
    app.settings = settings.model_copy(update={"http_allow_writes": True})
    path = f"by-{scope}-{time.monotonic_ns()}.md"
    served.anthropic.enqueue(
        anthropic_fake.tool_reply(
            [("toolu_w", "create_note", {"path": path, "content": "x"})], stream=False
        ),
        anthropic_fake.text_reply("Done or not.", stream=False),
    )
    client = openai.AsyncOpenAI(
        api_key=add(served, scope, scope), base_url=served.bridge.http_url + "/v1"
    )
    try:
        await client.chat.completions.create(
            model="vault", messages=[{"role": "user", "content": "Write."}]
        )
    finally:
        app.settings = settings
    assert (served.bridge.vault.root / path).exists() is written


async def test_no_answer_to_settings_confirm_starts_nothing(
    served: Served, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_approval, "CONFIRM_TIMEOUT", 0.3)  # 60 s in use
    bridge = served.bridge
    plugin = await bridge.wire(initialize=False)
    await plugin.result("initialize", {**init_params(bridge.app.token), "client": PLUGIN})
    marker = tmp_path / "unanswered"
    try:
        error = await plugin.error(
            "settings/update", {"mcpServers": {"u": marker_server(marker)}}
        )  # its settings/confirm is kept unanswered
    finally:
        await plugin.ws.close()
    assert plugin.server_requests[0]["method"] == "settings/confirm"
    assert error["code"] == -32030 and "no answer" in error["message"]
    await asyncio.sleep(0.3)
    assert not marker.exists() and "u" not in bridge.app.config.mcp.servers
