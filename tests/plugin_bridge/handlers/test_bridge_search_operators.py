"""Obsidian's search operators and heading reads through every door: vault/search and
note/read over a real WebSocket, the search CLI, and search_notes/read_note over MCP (the
official SDK's client), on the small fruit vault with the tests' fake embedder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from llm_service.embedders import FakeEmbedder
from plugin_bridge.mcp.server import build_server
from plugin_bridge.mcp.tools import LocalTools
from tests.helpers.bridge import running_bridge
from tests.helpers.mcp import json_of, text_of
from tests.helpers.serve import run_cli
from tests.plugin_bridge.vault.test_search_operators import FRUIT_NOTES, OBSIDIAN, write_notes

INVALID_PARAMS = -32602


def allowed(query: str, mode: str) -> set[str]:
    """What a mode may answer: Obsidian's notes; with vectors, "apple -banana"'s plain word
    ranks by meaning, so the one other note without banana may follow."""
    extra = {"Notes/delta.md"} if query == "apple -banana" and mode != "lexical" else set()
    return OBSIDIAN[query] | extra


async def test_operators_over_the_websocket_in_every_mode(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "vault", FRUIT_NOTES)
    async with running_bridge(tmp_path, vault_root=root, embedder=FakeEmbedder()) as bridge:
        wire = await bridge.wire()
        for mode in ("lexical", "semantic", "hybrid"):
            for query in OBSIDIAN:
                result = await wire.result("vault/search", {"query": query, "mode": mode})
                found = {hit["path"] for hit in result["results"]}
                assert OBSIDIAN[query] <= found <= allowed(query, mode), (mode, query)
        error = await wire.error("vault/search", {"query": "apple block:(mix flour)"})
        assert error["code"] == INVALID_PARAMS and "block: is not supported" in error["message"]
        lines = await wire.result("vault/search", {"query": "line:(apple banana)"})
        assert [hit["path"] for hit in lines["results"]] == ["Fruits/alpha.md"]


async def test_hits_name_their_heading_and_note_read_reads_just_it(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "vault", FRUIT_NOTES)
    async with running_bridge(tmp_path, vault_root=root) as bridge:
        wire = await bridge.wire()
        (hit,) = (await wire.result("vault/search", {"query": "pie"}))["results"]
        assert hit["heading"] == "Setup > Linux" and hit["page"] is None
        part = await wire.result("note/read", {"path": hit["path"], "heading": hit["heading"]})
        assert part["content"] == "## Linux\nAn apple cherry pie. #fruit/red"
        assert part["heading"] == "Setup > Linux"
        whole = await wire.result("note/read", {"path": hit["path"]})
        assert part["hash"] == whole["hash"] and whole["heading"] is None
        error = await wire.error("note/read", {"path": hit["path"], "heading": "Windows"})
        assert error["code"] == INVALID_PARAMS
        assert "no heading 'Windows'" in error["message"] and "'Setup > Linux'" in error["message"]


@pytest.mark.parametrize(("query", "expected"), [(q, p) for q, p in OBSIDIAN.items()])
async def test_operators_in_the_search_cli(tmp_path: Path, query: str, expected: set[str]) -> None:
    root = write_notes(tmp_path / "vault", FRUIT_NOTES)
    args = ("search", query, "--vault", str(root), "--data-dir", str(tmp_path / "d"))
    code, out, err = await run_cli(tmp_path, *args)
    assert code == 0, err
    listed = {line.split(". ", 1)[1].split(" — ")[0] for line in out.splitlines()[:-1:2]}
    assert listed == expected


async def test_the_cli_says_which_operator_it_cannot_answer(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "vault", FRUIT_NOTES)
    args = ("search", "task-todo:call", "--vault", str(root), "--data-dir", str(tmp_path / "d"))
    code, out, err = await run_cli(tmp_path, *args)
    assert (code, out) == (2, "")
    assert "task-todo: is not supported" in err


async def test_operators_and_headings_over_mcp(tmp_path: Path) -> None:
    root = write_notes(tmp_path / "vault", FRUIT_NOTES)
    async with running_bridge(tmp_path, vault_root=root, embedder=FakeEmbedder()) as bridge:
        tools = LocalTools(bridge.vault, bridge.app.access, allow_writes=False)
        async with Client(build_server(tools, bridge.vault.name)) as client:
            for query in OBSIDIAN:
                found: dict[str, Any] = json_of(
                    await client.call_tool("search_notes", {"query": query})
                )
                paths = {hit["path"] for hit in found["results"]}
                assert OBSIDIAN[query] <= paths <= allowed(query, "hybrid"), query
            refused = await client.call_tool("search_notes", {"query": "task:call"})
            assert refused.is_error and "task: is not supported" in text_of(refused)
            (hit,) = json_of(await client.call_tool("search_notes", {"query": '"cherry pie"'}))[
                "results"
            ]
            part = await client.call_tool(
                "read_note", {"path": hit["path"], "heading": hit["heading"]}
            )
            # a vector hit names its chunk's heading: "Setup", whose part holds Linux
            assert "## Linux\nAn apple cherry pie." in json_of(part)["content"]
