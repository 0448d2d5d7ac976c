"""Names: a name no file system holds is a forbidden path (-32023 with the reason) for reads
and the read tools too; paths outside the vault are refused by vault/related and the search
folder filter, which follows the vault's case rules; new notes may not make case-twin
folders, use Windows' reserved names or carry bidirectional overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.bridge import running_bridge

LONG = "n" * 300 + ".md"


async def test_a_name_over_255_bytes_is_a_forbidden_path_for_reads_and_read_tools(
    tmp_path: Path,
) -> None:
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        read = await wire.error("note/read", {"path": LONG})
        nested = await wire.error("note/read", {"path": f"Projects/{'é' * 200}/x.md"})
        tools = await wire.result(
            "tools/execute",
            {
                "calls": [
                    {"name": "read_note", "arguments": {"path": LONG}},
                    {"name": "list_notes", "arguments": {"folder": "f" * 300}},
                ]
            },
        )
    assert read["code"] == nested["code"] == -32023
    assert "255 bytes" in read["message"] and read["data"]["reason"] == "forbidden_path"
    for result in tools["results"]:
        assert result["isError"], result
        assert "Internal" not in result["content"]
    assert "255 bytes" in tools["results"][0]["content"]


@pytest.mark.parametrize("path", ["../outside.md", "/etc/passwd.md", ".obsidian/app.md"])
async def test_related_refuses_outside_paths_even_without_vectors(
    tmp_path: Path, path: str
) -> None:
    async with running_bridge(tmp_path) as bridge:
        error = await (await bridge.wire()).error("vault/related", {"path": path})
    assert error["code"] == -32023


@pytest.mark.parametrize("folder", ["..", "../..", "/etc", ".obsidian", "Projects/../../x"])
async def test_the_search_folder_filter_refuses_outside_paths(tmp_path: Path, folder: str) -> None:
    async with running_bridge(tmp_path) as bridge:
        error = await (await bridge.wire()).error(
            "vault/search", {"query": "the", "folder": folder}
        )
    assert error["code"] == -32023


async def test_the_folder_filter_follows_the_vaults_case_rules(tmp_path: Path) -> None:
    """On a case-sensitive file system 'projects' is another folder than 'Projects'; where
    names ignore case (macOS, Windows) it is the same one, accents' encoding aside too."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()

        async def paths(folder: str) -> set[str]:
            found = await wire.result(
                "vault/search", {"query": "path:", "folder": folder, "limit": 50}
            )
            return {hit["path"] for hit in found["results"]}

        exact = await paths("Projects")
        bridge.vault.index._case_sensitive = True
        other_case_sensitive = await paths("projects")
        bridge.vault.index._case_sensitive = False
        other_case_blind = await paths("PROJECTS")
    assert exact and all(path.startswith("Projects/") for path in exact)
    assert other_case_sensitive == set()
    assert other_case_blind == exact


@pytest.mark.parametrize(
    "path",
    ["con.md", "aux/x.md", "Projects/NUL.md", "com1.notes.md", "LPT9/a.md", "evil\u202egnp.md"],
)
async def test_new_notes_with_names_other_devices_cannot_hold_are_refused(
    tmp_path: Path, path: str
) -> None:
    async with running_bridge(tmp_path) as bridge:
        error = await (await bridge.wire()).error("note/create", {"path": path, "content": "x"})
        assert not (bridge.vault.root / path).exists()
    assert error["code"] == -32023


async def test_a_case_twin_folder_is_refused_for_new_notes(tmp_path: Path) -> None:
    """'projects/' beside 'Projects/' would be one folder on macOS, Windows and sync."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        twin = await wire.error("note/create", {"path": "projects/New.md", "content": "x"})
        deeper = await wire.error("note/create", {"path": "PROJECTS/a/New.md", "content": "x"})
        fine = await wire.result("note/create", {"path": "Projects/New.md", "content": "x"})
        assert not (bridge.vault.root / "projects").exists()
    assert twin["code"] == deeper["code"] == -32023
    assert "Projects" in twin["message"]
    assert fine["path"] == "Projects/New.md"
