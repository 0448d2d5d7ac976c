"""The user's note writes over the wire: create/append/edit with expectedHash, undo, audit."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.bridge import running_bridge

NOTE = "Projects/Garden redesign.md"


async def test_edit_replaces_each_passage_once_and_returns_the_new_hash(tmp_path: Path) -> None:
    """note/edit applies the edits in order to the version the client read."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        note = await wire.result("note/read", {"path": NOTE})
        first = next(
            line for line in note["content"].splitlines() if note["content"].count(line) == 1
        )
        written = await wire.result(
            "note/edit",
            {
                "path": NOTE,
                "edits": [{"oldText": first, "newText": "# Garden, 2027"}],
                "expectedHash": note["hash"],
            },
        )
        after = await wire.result("note/read", {"path": NOTE})
        assert after["hash"] == written["hash"]
        assert after["content"] == note["content"].replace(first, "# Garden, 2027", 1)


async def test_a_stale_expected_hash_is_32022_and_writes_nothing(tmp_path: Path) -> None:
    """create (overwrite), append and edit all refuse a version the note no longer has."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        stale = (await wire.result("note/read", {"path": NOTE}))["hash"]
        (bridge.vault.root / NOTE).write_text("# Changed elsewhere\n", encoding="utf-8")
        attempts = [
            (
                "note/create",
                {"path": NOTE, "content": "x", "overwrite": True, "expectedHash": stale},
            ),
            ("note/append", {"path": NOTE, "text": "x", "expectedHash": stale}),
            (
                "note/edit",
                {
                    "path": NOTE,
                    "expectedHash": stale,
                    "edits": [{"oldText": "Changed", "newText": "x"}],
                },
            ),
        ]
        for method, params in attempts:
            assert (await wire.error(method, params))["code"] == -32022, method
        assert (bridge.vault.root / NOTE).read_text(encoding="utf-8") == "# Changed elsewhere\n"


async def test_an_edit_whose_old_text_is_not_unique_is_32602_naming_it(tmp_path: Path) -> None:
    """A passage that occurs twice (or not at all) is refused with the edit's number."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        note = await wire.result("note/read", {"path": NOTE})
        error = await wire.error(
            "note/edit",
            {
                "path": NOTE,
                "expectedHash": note["hash"],
                "edits": [{"oldText": "e", "newText": "E"}],
            },
        )
        assert error["code"] == -32602 and "Edit 1" in error["message"]


async def test_undo_restores_the_last_write_and_refuses_after_an_outside_change(
    tmp_path: Path,
) -> None:
    """note/undo rolls back our append; once someone else changed the note it is -32022."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        before = await wire.result("note/read", {"path": NOTE})
        await wire.result("note/append", {"path": NOTE, "text": "- plant tulips"})
        undone = await wire.result("note/undo", {"path": NOTE})
        assert undone == {"path": NOTE, "hash": before["hash"], "removed": False}
        await wire.result("note/append", {"path": NOTE, "text": "- plant roses"})
        with (bridge.vault.root / NOTE).open("a", encoding="utf-8") as note:
            note.write("the user's own line\n")
        assert (await wire.error("note/undo", {"path": NOTE}))["code"] == -32022
        created = await wire.result("note/create", {"path": "Fresh.md", "content": "new"})
        assert (await wire.result("note/undo", {"path": "Fresh.md"}))["removed"] is True
        assert not (bridge.vault.root / "Fresh.md").exists() and created["hash"]


async def test_audit_list_gives_the_newest_writes_first_without_contents(tmp_path: Path) -> None:
    """audit/list: who changed which note when, with hashes, newest first, within limit."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        await wire.result("note/create", {"path": "A.md", "content": "secret words"})
        await wire.result("note/append", {"path": "A.md", "text": "more secret words"})
        entries = (await wire.result("audit/list", {"limit": 1}))["entries"]
        assert [(e["path"], e["action"], e["origin"]) for e in entries] == [
            ("A.md", "append", "user")
        ]
        assert set(entries[0]) == {"time", "path", "action", "oldHash", "newHash", "origin"}
        all_entries = (await wire.result("audit/list"))["entries"]
        assert [e["action"] for e in all_entries] == ["append", "create"]
        assert "secret" not in str(all_entries)


async def test_an_undo_named_with_its_conversation_is_told_to_the_model_once(
    tmp_path: Path,
) -> None:
    """note/undo {conversationId}: the conversation's next turn tells the model the change was
    undone (so it does not build on it), and only that turn."""
    from llm_service import ScriptedProvider

    provider = ScriptedProvider()
    for answer in ("Added.", "Noted.", "Sure."):
        provider.enqueue_text(answer)
    async with running_bridge(tmp_path, provider=provider) as bridge:
        wire = await bridge.wire()
        first = await wire.result("chat/send", {"text": "add a line"})
        await wire.result("note/append", {"path": NOTE, "text": "- plant tulips"})
        conversation = first["conversationId"]
        await wire.result("note/undo", {"path": NOTE, "conversationId": conversation})
        for text in ("what now?", "and then?"):
            await wire.result("chat/send", {"text": text, "conversationId": conversation})
    told = [request.messages[-1].text for request in provider.requests]
    undone = f"The user undid your change to {NOTE}: it is back as it was before it."
    assert [undone in text for text in told] == [False, True, False]
