"""The Vault facade end to end: construction, the data dir, writes searchable at once, a model
conversation using the vault tools through LLMService, and the tools on the shared help vaults."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from llm_service import LLMService, ScriptedProvider, ToolCall, ToolResultBlock
from llm_service.tools import ToolRegistry
from plugin_bridge.app.vault_tools import VAULT_TOOL_NAMES, register_vault_tools
from plugin_bridge.vault.datadir import default_data_dir
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.vault import Vault
from tests.conftest import shared_vault

IDLE_TIMEOUT = 30.0


def make_vault(root: Path, notes: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for rel, text in notes.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def tool_results(provider: ScriptedProvider, request: int) -> list[ToolResultBlock]:
    """The tool results sent to the model in its ``request``-th call."""
    last = provider.requests[request].messages[-1]
    return [block for block in last.content if isinstance(block, ToolResultBlock)]


# -- construction --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["missing", "file"])
def test_a_vault_needs_an_existing_folder(tmp_path: Path, kind: str) -> None:
    """A missing path or a file is refused with a sentence naming it."""
    root = tmp_path / "vault"
    if kind == "file":
        root.write_text("not a folder")
    with pytest.raises(
        ValueError, match=r"vault folder .*vault does not exist or is not a folder: give"
    ):
        Vault(root, tmp_path / "data")


def test_the_default_data_dir_is_the_per_vault_state_folder(tmp_path: Path) -> None:
    """Without data_dir the state lives outside the vault, in the user state folder."""
    root = make_vault(tmp_path / "My Vault", {"A.md": "a"})
    vault = Vault(root / ".." / "My Vault", watch=False)
    assert vault.root == root.resolve() and vault.name == "My Vault"
    assert vault.data_dir == default_data_dir(root.resolve()).resolve()
    assert not vault.data_dir.is_relative_to(vault.root)
    assert vault.notes.root == vault.root and vault.index.root == vault.root


async def test_a_data_dir_inside_the_vault_is_never_a_note(tmp_path: Path) -> None:
    """Notes kept in an in-vault data dir are not listed, searchable or readable."""
    root = make_vault(tmp_path / "v", {"A.md": "alpha", "state/leak.md": "platypus secret"})
    async with Vault(root, root / "state", watch=False) as vault:
        await vault.index.wait_until_idle(IDLE_TIMEOUT)
        vault.notes.create("B.md", "platypus in the open")
        assert [n.path for n in vault.notes.list_notes()] == ["A.md", "B.md"]
        assert [h.path for h in vault.index.search("platypus").hits] == ["B.md"]
        with pytest.raises(VaultError) as caught:
            vault.notes.read("state/leak.md")
        assert caught.value.code == "forbidden_path"
    assert (root / "state" / "audit.jsonl").is_file()


# -- writes and the index ------------------------------------------------------------------


async def test_writes_through_the_vault_are_searchable_as_soon_as_they_return(
    tmp_path: Path,
) -> None:
    """create, append, modify and undo are reflected in search without waiting."""
    root = make_vault(tmp_path / "v", {"A.md": "alpha"})
    async with Vault(root, tmp_path / "data", watch=False) as vault:
        await vault.index.wait_until_idle(IDLE_TIMEOUT)
        notes, index = vault.notes, vault.index

        def found(word: str) -> list[str]:
            return [h.path for h in index.search(word).hits]

        notes.create("New/Quokka.md", "a quokka")
        assert found("quokka") == ["New/Quokka.md"]
        notes.append("A.md", "wombat")
        assert found("wombat") == ["A.md"]
        notes.modify("A.md", "numbat", expected_hash=notes.read("A.md").hash)
        assert (found("wombat"), found("numbat")) == ([], ["A.md"])
        notes.undo("A.md")
        assert (found("wombat"), found("numbat")) == (["A.md"], [])
        notes.undo("New/Quokka.md")
        assert found("quokka") == []


async def test_the_index_is_told_of_writes_only_while_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before start and after close, writes do not wait on an indexer that is not there."""
    root = make_vault(tmp_path / "v", {})
    vault = Vault(root, tmp_path / "data", watch=False)
    told: list[str] = []
    monkeypatch.setattr(vault.index, "notify_changed", told.append)
    vault.notes.create("Before.md", "x")
    await vault.start()
    vault.notes.create("During.md", "x")
    await vault.close()
    vault.notes.create("After.md", "x")
    assert told == ["During.md"]


# -- a conversation with a model -----------------------------------------------------------


async def test_a_model_searches_then_reads_a_note_through_the_service(tmp_path: Path) -> None:
    """The model gets the six tools, a compact search result, then the note it asked for."""
    root = make_vault(
        tmp_path / "v",
        {"Kafka.md": "# Kafka\nA distributed log.\n", "Other.md": "# Other\nUnrelated.\n"},
    )
    provider = ScriptedProvider()
    provider.enqueue_tool_call("search_notes", {"query": "kafka", "limit": 5})
    provider.enqueue_tool_call("read_note", {"path": "Kafka.md"})
    provider.enqueue_text("Kafka is a distributed log, see [[Kafka]].")
    async with Vault(root, tmp_path / "data", watch=False) as vault:
        await vault.index.wait_until_idle(IDLE_TIMEOUT)
        service = LLMService(provider, model="scripted")
        register_vault_tools(service.tools, vault)
        reply = await service.process_message("What is Kafka?")

    assert reply.text == "Kafka is a distributed log, see [[Kafka]]."
    assert [tool.name for tool in provider.requests[0].tools] == list(VAULT_TOOL_NAMES)
    [searched] = tool_results(provider, 1)
    assert not searched.is_error
    assert [hit["path"] for hit in json.loads(str(searched.content))["results"]] == ["Kafka.md"]
    [read] = tool_results(provider, 2)
    assert json.loads(str(read.content))["content"] == "# Kafka\nA distributed log.\n"


async def test_a_model_write_the_user_denies_is_not_made(tmp_path: Path) -> None:
    """With the default "ask", a refusal reaches the model as an error and nothing is written."""
    root = make_vault(tmp_path / "v", {})
    asked: list[ToolCall] = []

    async def deny(call: ToolCall) -> bool:
        asked.append(call)
        return False

    provider = ScriptedProvider()
    provider.enqueue_tool_call("create_note", {"path": "Spam.md", "content": "spam"})
    provider.enqueue_text("I could not create it.")
    async with Vault(root, tmp_path / "data", watch=False) as vault:
        service = LLMService(provider, model="scripted", confirm=deny)
        register_vault_tools(service.tools, vault)
        await service.process_message("Make a note")

    assert [call.name for call in asked] == ["create_note"]
    [result] = tool_results(provider, 1)
    assert result.is_error and "not approve" in str(result.content)
    assert not (root / "Spam.md").exists()


# -- the shared help vaults ----------------------------------------------------------------


@pytest.mark.shared_vault
@pytest.mark.parametrize(
    ("lang", "query", "note", "linked_from"),
    [
        ("en", "backlinks", "Plugins/Backlinks.md", "Linking notes and files/Aliases.md"),
        ("zh", "反向链接", "插件/反向链接.md", "链接笔记与文件/别名.md"),
    ],
)
async def test_tools_on_a_copy_of_the_shared_help_vault(
    tmp_path: Path, lang: str, query: str, note: str, linked_from: str
) -> None:
    """Search, read, list and backlinks work on real notes, including non-Latin paths."""
    root = tmp_path / lang
    shutil.copytree(shared_vault(lang), root)
    tools = ToolRegistry()
    async with Vault(root, tmp_path / "data", watch=False) as vault:
        await vault.index.wait_until_idle(IDLE_TIMEOUT)
        register_vault_tools(tools, vault)

        async def ok(name: str, **arguments: Any) -> Any:
            result = await tools.run_tool_call(ToolCall("1", name, arguments))
            assert not result.is_error, result.content
            return json.loads(str(result.content))

        hits = (await ok("search_notes", query=query, limit=10))["results"]
        assert note in [hit["path"] for hit in hits]
        read = await ok("read_note", path=note)
        assert read["content"] == (root / note).read_text(encoding="utf-8-sig")
        folder = note.rsplit("/", 1)[0]
        listed = (await ok("list_notes", folder=folder, limit=50))["notes"]
        assert note in listed and listed == sorted(listed)
        assert linked_from in (await ok("get_backlinks", path=note))["backlinks"]
