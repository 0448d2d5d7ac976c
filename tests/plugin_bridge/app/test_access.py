"""The access policy (app/access.py): which tools a caller sees, which writes run and who reviews
them, decided in one place from the caller's scope, the setting and whether the plugin is open;
each run carries its own caller (the audit line names it) and the versions its user reviewed."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from llm_service.tools import ConfirmCallback
from plugin_bridge.app.access import ToolAccess
from plugin_bridge.app.clients import OWNER_CALLER, AppUser, Caller, ForbiddenScope
from plugin_bridge.app.settings.config import BridgeSettings
from plugin_bridge.app.tools import ToolsDenied
from plugin_bridge.app.turn.confirm import ask_client, nobody_asks
from plugin_bridge.app.vault_tools import WRITE_TOOL_NAMES, ToolRun
from plugin_bridge.app.write_through import WriteThrough
from plugin_bridge.vault.vault import Vault
from plugin_bridge.wire.protocol import RequestId, Response

PHONE = Caller("phone", "write")
READER = Caller("reader", "read")
CREATE = ("create_note", {"path": "New.md", "content": "hello"})


class Plugin:
    """A connection that answers ``tool/confirm`` with ``approve`` (after ``meanwhile``: what
    happens while the user looks) and ``note/apply`` with "not open"."""

    def __init__(self, approve: bool = True, meanwhile: Callable[[], None] = lambda: None):
        self.approve = approve
        self.meanwhile = meanwhile
        self.asked: list[dict[str, Any]] = []

    async def request(self, method: str, params: dict[str, Any]) -> Response:
        if method == "tool/confirm":
            self.asked.append(params)
            self.meanwhile()
            return Response(1, {"approved": self.approve})
        return Response(1, {"applied": False})

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        """Notifications go nowhere."""

    async def hold(self, request_id: RequestId, size: int) -> None:
        """Every reply fits."""

    @property
    def closed(self) -> bool:
        return False


class Setting:
    """The settings in effect, changed by the test as a user would with settings/update."""

    def __init__(self) -> None:
        self.now = BridgeSettings.model_construct(http_allow_writes=False)

    def writes(self, on: bool) -> None:
        self.now = BridgeSettings.model_construct(http_allow_writes=on)


@pytest.fixture
async def vault(tmp_path: Path) -> AsyncIterator[Vault]:
    root = tmp_path / "vault"
    root.mkdir()
    (root / "Plan.md").write_text("# Plan\nShip it.\n", encoding="utf-8")
    async with Vault(root, tmp_path / "data", watch=False) as opened:
        await opened.index.wait_until_idle(20)
        yield opened


@pytest.fixture
def setting() -> Setting:
    return Setting()


@pytest.fixture
def writes(vault: Vault) -> WriteThrough:
    return WriteThrough(vault.notes)


@pytest.fixture
def access(vault: Vault, writes: WriteThrough, setting: Setting) -> ToolAccess:
    return ToolAccess(vault, writes, lambda: setting.now, ask_client(vault, timeout=5))


def audit(vault: Vault) -> list[dict[str, Any]]:
    text = (vault.data_dir / "audit.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


async def test_http_writes_run_only_with_the_setting_and_a_write_scope(
    access: ToolAccess, vault: Vault, setting: Setting
) -> None:
    listed = {
        tool["name"] for tool in access.over_http(PHONE).listed("anthropic", runnable_only=True)
    }
    assert listed and not listed & WRITE_TOOL_NAMES, "writes off: not listed as runnable"
    with pytest.raises(ToolsDenied):
        await access.over_http(PHONE).run([CREATE])
    assert not (vault.root / "New.md").exists()

    setting.writes(True)
    with pytest.raises(ForbiddenScope, match="scope write"):
        await access.over_http(READER).run([CREATE])
    ran = await access.over_http(PHONE).run([CREATE])
    assert not ran.results[0].is_error
    assert (vault.root / "New.md").read_text(encoding="utf-8") == "hello"
    assert audit(vault)[-1]["origin"] == "model (key:phone)"


async def test_a_write_key_over_http_is_reviewed_by_the_open_plugin(
    access: ToolAccess, vault: Vault, writes: WriteThrough
) -> None:
    """Whatever the setting: while the plugin is open, a write key's writes go to its review."""
    plugin = Plugin(approve=True)
    assert writes.attach(plugin, "token")
    assert access.plugin_reviews(PHONE) and not access.plugin_reviews(OWNER_CALLER)
    ran = await access.over_http(PHONE).run([CREATE])
    assert [asked["tool"] for asked in plugin.asked] == ["create_note"]
    assert not ran.results[0].is_error and (vault.root / "New.md").exists()
    assert audit(vault)[-1]["origin"] == "model (key:phone)"

    plugin.approve = False
    refused = await access.over_http(PHONE).run(
        [("create_note", {"path": "No.md", "content": "x"})]
    )
    assert refused.results[0].is_error and not (vault.root / "No.md").exists()


async def test_mcp_writes_follow_the_switch_the_scope_and_the_plugin(
    access: ToolAccess, writes: WriteThrough, setting: Setting
) -> None:
    assert access.mcp_writes(None, True) and not access.mcp_writes(None, False)
    assert not access.mcp_writes(None, None), "/mcp follows the setting: off"
    setting.writes(True)
    assert access.mcp_writes(None, None) and access.mcp_writes(PHONE, None)
    assert not access.mcp_writes(READER, None), "never to a key without write"
    setting.writes(False)
    assert not access.mcp_writes(PHONE, None)
    writes.attach(Plugin(), "token")
    assert access.mcp_writes(PHONE, None), "the plugin reviews a write key's writes"

    refused = await access.for_mcp(None, False).run([CREATE])
    assert refused.invalid_calls[0].reason == (
        "create_note changes notes, and this MCP server is read-only: start it with "
        "--allow-writes to let clients write."
    )


async def test_a_chat_app_user_who_may_not_write_is_not_offered_the_writes(
    access: ToolAccess,
) -> None:
    reader = AppUser("1", "chat", "telegram")
    writer = AppUser("2", "write", "telegram")

    def nobody(run: ToolRun) -> ConfirmCallback:
        return nobody_asks

    hidden = access.for_turn(reader, reviewer=nobody).get_registered_tools()
    offered = access.for_turn(writer, reviewer=nobody).get_registered_tools()
    assert not set(hidden) & WRITE_TOOL_NAMES
    assert set(offered) >= WRITE_TOOL_NAMES
    setup = access.for_turn(OWNER_CALLER, setup=True).get_registered_tools()
    assert "complete_setup" in setup and "complete_setup" not in offered


async def test_an_approved_write_must_find_the_note_as_its_user_saw_it(
    access: ToolAccess, vault: Vault
) -> None:
    """The reviewed version belongs to the run that asked: the note changed during the review,
    so nothing is written, and the client's run of the same call without a change writes."""
    note = vault.root / "Plan.md"
    edit = ("append_to_note", {"path": "Plan.md", "content": "More."})

    def someone_edits() -> None:
        note.write_text("# Plan\nChanged meanwhile.\n", encoding="utf-8")

    changed = await access.for_client(Plugin(meanwhile=someone_edits), PHONE).run([edit])
    assert changed.results[0].is_error and "changed while the user was reviewing" in (
        changed.results[0].content
    )
    assert note.read_text(encoding="utf-8") == "# Plan\nChanged meanwhile.\n"

    ran = await access.for_client(Plugin(), PHONE).run([edit])
    assert not ran.results[0].is_error
    assert note.read_text(encoding="utf-8") == "# Plan\nChanged meanwhile.\nMore."
    assert audit(vault)[-1]["origin"] == "model (key:phone)"
