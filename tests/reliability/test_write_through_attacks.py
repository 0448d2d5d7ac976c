"""Writes made where they are reported (attack item 4 of issue 32, and the temp files of item
13): a "plugin" that answers note/apply with a made-up hash is found out, logged, and undo
still works; a client key is never asked; a kill -9 between the plugin's write and the
server's audit line loses neither; a crash's temp file is gone at the next start."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import signal
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import connect

from llm_service.providers.scripted import ScriptedProvider
from plugin_bridge.app.settings.config import PLUGIN_CLIENT
from plugin_bridge.vault.paths import TEMP_PREFIX
from tests.helpers.bridge import Bridge, Wire, init_params, running_bridge
from tests.helpers.serve import START_WAIT, start_serve

NOTE = "# Plan\n\nStep 1.\nStep 2.\n"
EDIT = [{"oldText": "Step 2.", "newText": "Step 2: done."}]
AFTER = NOTE.replace("Step 2.", "Step 2: done.")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


EDIT_PARAMS = {"path": "Plan.md", "edits": EDIT, "expectedHash": sha(NOTE)}


async def _plugin(url: str, token: str) -> Wire:
    wire = Wire(await connect(url, open_timeout=START_WAIT))
    client = {"name": PLUGIN_CLIENT, "version": "0"}
    await wire.result("initialize", {"token": token, "protocolVersion": 1, "client": client})
    return wire


async def _next_request(wire: Wire, method: str) -> dict[str, Any]:
    while True:
        message = await wire.recv()
        if message.get("method") == method and "id" in message:
            return message


async def _lying_plugin(bridge: Bridge, note: Path, writes: str | None) -> dict[str, Any]:
    """A note/edit from another client, answered by a "plugin" that claims AFTER's hash and
    writes ``writes`` (None: nothing); the edit's reply."""
    bridge.app.writes.confirm_seconds = 0.5
    user, plugin = await bridge.wire(), await _plugin(bridge.url, bridge.app.token)
    request_id = await user.request("note/edit", EDIT_PARAMS)
    asked = await _next_request(plugin, "note/apply")
    if writes is not None:
        await asyncio.to_thread(note.write_text, writes, encoding="utf-8")
    result = {"applied": True, "hash": sha(AFTER)}
    await plugin.send({"jsonrpc": "2.0", "id": asked["id"], "result": result})
    return await user.reply_to(request_id)


async def test_a_made_up_hash_is_found_out_logged_and_undo_restores_the_note(
    tmp_path: Path,
) -> None:
    async with running_bridge(tmp_path) as bridge:
        note = bridge.vault.root / "Plan.md"
        note.write_text(NOTE, encoding="utf-8")
        reply = await _lying_plugin(bridge, note, "something else\n")
        wire = await bridge.wire()
        (entry, *_) = (await wire.result("audit/list", {"limit": 1}))["entries"]
        undone = await wire.result("note/undo", {"path": "Plan.md"})
    error = reply["error"]
    assert error["code"] == -32025 and "did not change within" in error["message"]
    assert "undo restores it" in error["message"] and "Traceback" not in error["message"]
    assert (entry["action"], entry["oldHash"]) == ("unconfirmed", sha(AFTER))
    assert entry["newHash"] == sha("something else\n")
    assert undone["hash"] == sha(NOTE) and note.read_text(encoding="utf-8") == NOTE


async def test_the_model_is_told_when_the_plugin_wrote_nothing(tmp_path: Path) -> None:
    provider = ScriptedProvider()
    provider.enqueue_tool_call(
        "edit_note", {"path": "Plan.md", "edits": [{"old_text": "Step 2.", "new_text": "x"}]}
    )
    provider.enqueue_text("Sorry.")
    async with running_bridge(tmp_path, provider=provider) as bridge:
        note = bridge.vault.root / "Plan.md"
        note.write_text(NOTE, encoding="utf-8")
        bridge.app.writes.confirm_seconds = 0.5
        plugin = await _plugin(bridge.url, bridge.app.token)

        def answer(method: str, params: dict[str, Any]) -> dict[str, Any]:
            if method == "tool/confirm":
                return {"approved": True}
            return {"applied": True, "hash": sha("made up")}

        reply = await plugin.call("chat/send", {"text": "edit"}, answer=answer)
        (result,) = plugin.notes_of("chat/toolResult", reply["id"])
        sent = provider.requests[-1].messages[-1].content[0]
    assert result["isError"] and "did not change within" in result["content"]
    assert "did not change within" in str(sent)
    assert note.read_text(encoding="utf-8") == NOTE


async def test_a_client_key_is_never_asked_to_apply(tmp_path: Path) -> None:
    """WriteThrough.attach refuses a connection whose credential is a client key."""
    async with running_bridge(tmp_path) as bridge:
        plugin = await _plugin(bridge.url, bridge.app.token)
        writes = bridge.app.writes
        writes._plugins.clear()
        peer = next(iter(bridge.server.connections))
        assert writes.attach(peer, "client-key") is False and writes._newest() is None
        note = bridge.vault.root / "Plan.md"
        note.write_text(NOTE, encoding="utf-8")
        written = await (await bridge.wire()).result("note/edit", EDIT_PARAMS)
        await plugin.ws.close()
    assert written["hash"] == sha(AFTER) and not plugin.server_requests


async def _serve(tmp_path: Path, vault: Path) -> tuple[asyncio.subprocess.Process, dict[str, Any]]:
    info_file = tmp_path / "info.json"
    info_file.unlink(missing_ok=True)
    served = await start_serve(
        tmp_path, "--info-file", str(info_file), vault=vault, stderr=asyncio.subprocess.DEVNULL
    )
    return served.process, served.info


@pytest.mark.timeout(300)  # two starts of serve, on a loaded machine
async def test_kill_9_after_obsidian_wrote_keeps_audit_and_undo_and_temp_files_go(
    tmp_path: Path,
) -> None:
    """The plugin writes the note; the server is killed before it records the answer. After
    the restart the audit log has the edit, undo restores the note, and a temp file a crash
    left (however young) is gone."""
    vault = tmp_path / "vault"
    vault.mkdir()
    note = vault / "Plan.md"
    note.write_text(NOTE, encoding="utf-8")
    process, info = await _serve(tmp_path, vault)
    try:
        plugin = await _plugin(str(info["url"]), str(info["token"]))
        user = Wire(await connect(str(info["url"]), open_timeout=START_WAIT))
        await user.result("initialize", init_params(str(info["token"])))
        await user.request("note/edit", EDIT_PARAMS)
        await _next_request(plugin, "note/apply")
        note.write_text(AFTER, encoding="utf-8")  # Obsidian saved; the answer never arrives
        process.send_signal(signal.SIGKILL)
        await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    leftover = vault / "sub" / f"{TEMP_PREFIX}0123456789abcdef"
    leftover.parent.mkdir()
    leftover.write_bytes(b"half a note")
    process, info = await _serve(tmp_path, vault)
    try:
        wire = Wire(await connect(str(info["url"]), open_timeout=START_WAIT))
        await wire.result("initialize", init_params(str(info["token"])))
        (entry, *_) = (await wire.result("audit/list", {"limit": 1}))["entries"]
        undone = await wire.result("note/undo", {"path": "Plan.md"})
    finally:
        process.send_signal(signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(START_WAIT):
                await process.wait()
    assert (entry["path"], entry["action"]) == ("Plan.md", "edit")
    assert (entry["oldHash"], entry["newHash"]) == (sha(NOTE), sha(AFTER))
    assert undone["hash"] == sha(NOTE) and note.read_text(encoding="utf-8") == NOTE
    assert not leftover.exists()
    assert json.loads(json.dumps(entry))  # the line is whole JSON
