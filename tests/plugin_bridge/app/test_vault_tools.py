"""The model's vault tools: schemas a model understands, permissions, compact results, read
truncation, errors the model can act on, and write previews."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema.validators import validator_for

from llm_service import ToolCall, ToolResultBlock
from llm_service.tools import ToolRegistry
from plugin_bridge.app.vault_tools import (
    READ_LIMIT_CHARS,
    VAULT_TOOL_NAMES,
    confirm_title,
    kept_arguments,
    plan_tool_call,
    register_vault_tools,
)
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.notes.store import sha256
from plugin_bridge.vault.vault import Vault

NOTES = {
    "Kafka.md": "---\ntags: [infra]\n---\n# Kafka\nA distributed log for event streams.\n",
    "Reading/Books.md": "# Books\nI read about kafka in a chapter on logs. See [[Kafka]].\n",
    "Projects/Plan.md": "# Plan\nShip the pipeline. Uses [[Kafka|the log]].\n",
    "Projects/Notes.md": "# Notes\nNothing links here.\n",
}
BIG_CHARS = 2 * READ_LIMIT_CHARS + 500


class Confirmations:
    """A confirm callback that records what it was asked and answers ``approve``."""

    def __init__(self, approve: bool = True) -> None:
        self.approve = approve
        self.asked: list[ToolCall] = []

    async def __call__(self, call: ToolCall) -> bool:
        self.asked.append(call)
        return self.approve


@pytest.fixture
async def vault(tmp_path: Path) -> AsyncIterator[Vault]:
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    (root / "Big.md").write_text("".join(f"{i % 10}" for i in range(BIG_CHARS)), encoding="utf-8")
    async with Vault(root, tmp_path / "data", watch=False) as opened:
        await opened.index.wait_until_idle(20)
        yield opened


@pytest.fixture
def confirm() -> Confirmations:
    return Confirmations()


@pytest.fixture
def registry(vault: Vault, confirm: Confirmations) -> ToolRegistry:
    tools = ToolRegistry(confirm=confirm)
    register_vault_tools(tools, vault)
    return tools


async def call(registry: ToolRegistry, name: str, **arguments: Any) -> ToolResultBlock:
    return await registry.run_tool_call(ToolCall(f"call-{name}", name, arguments))


async def ok(registry: ToolRegistry, name: str, **arguments: Any) -> Any:
    """The decoded JSON result of a call that must succeed."""
    result = await call(registry, name, **arguments)
    assert not result.is_error, result.content
    assert isinstance(result.content, str)
    return json.loads(result.content)


# -- registration and schemas --------------------------------------------------------------


def test_registration_returns_the_seven_tool_names_in_order(vault: Vault) -> None:
    """register_vault_tools reports exactly what it registered."""
    tools = ToolRegistry()
    names = register_vault_tools(tools, vault)
    assert names == list(VAULT_TOOL_NAMES) == tools.get_registered_tools()
    assert set(names) == {
        "search_notes",
        "read_note",
        "list_notes",
        "get_backlinks",
        "create_note",
        "append_to_note",
        "edit_note",
    }


def test_every_schema_is_valid_closed_and_described(registry: ToolRegistry) -> None:
    """Valid JSON Schemas, no extra properties, every property explained to the model."""
    for spec in registry.tool_specs():
        schema = dict(spec.input_schema)
        validator_for(schema).check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        assert len(spec.description) > 40, spec.name
        for name, prop in schema["properties"].items():
            assert prop.get("description"), f"{spec.name}.{name} has no description"


def test_limits_are_bounded_with_a_default_of_ten(registry: ToolRegistry) -> None:
    """search_notes and list_notes take limit 1..50, default 10."""
    for spec in registry.tool_specs():
        limit = spec.input_schema["properties"].get("limit")
        if limit is not None:
            assert (limit["minimum"], limit["maximum"], limit["default"]) == (1, 50, 10)


def test_descriptions_teach_the_path_format_and_search_syntax(registry: ToolRegistry) -> None:
    """The model learns relative paths with extensions and every search operator, in two lines
    of search_notes' description; read_note's heading reads the part a result is under."""
    specs = {spec.name: spec for spec in registry.tool_specs()}
    search = specs["search_notes"].description
    operators = ['"', "prefix*", "-word", " OR ", "file:", "path:", "tag:", "content:", "[property"]
    lines = [line for line in search.splitlines() if any(op in line for op in operators)]
    assert len(lines) == 2 and all(op in "\n".join(lines) for op in operators)
    assert "heading" in search
    assert "heading" in specs["read_note"].input_schema["properties"]
    for name in ("read_note", "create_note", "append_to_note", "get_backlinks"):
        path = specs[name].input_schema["properties"]["path"]["description"]
        assert "relative to the vault root" in path and ".md" in path
    assert "never overwrites" in specs["create_note"].description.lower()


@pytest.mark.parametrize("write_permission", ["allow", "ask", "deny"])
def test_reads_are_allowed_and_writes_take_the_given_permission(
    vault: Vault, write_permission: Any
) -> None:
    """Only the writes (create_note, append_to_note, edit_note) are gated."""
    tools = ToolRegistry()
    register_vault_tools(tools, vault, write_permission=write_permission)
    assert {name: tools.permission(name) for name in VAULT_TOOL_NAMES} == {
        "search_notes": "allow",
        "read_note": "allow",
        "list_notes": "allow",
        "get_backlinks": "allow",
        "create_note": write_permission,
        "append_to_note": write_permission,
        "edit_note": write_permission,
    }


def test_writes_ask_by_default(registry: ToolRegistry) -> None:
    """Without an explicit write_permission the user is asked."""
    assert registry.permission("create_note") == registry.permission("append_to_note") == "ask"


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("search_notes", {"query": "kafka", "limit": 51}),
        ("search_notes", {"query": "kafka", "limit": 0}),
        ("search_notes", {"query": ""}),
        ("list_notes", {"folder": "", "recursive": True}),
        ("read_note", {}),
        ("create_note", {"path": "A.md"}),
    ],
)
async def test_arguments_outside_the_schema_are_refused(
    registry: ToolRegistry, vault: Vault, name: str, arguments: dict[str, Any]
) -> None:
    """Out-of-range limits, empty queries, unknown or missing fields never reach the vault."""
    result = await call(registry, name, **arguments)
    assert result.is_error and "Invalid arguments" in str(result.content)
    assert not (vault.root / "A.md").exists()


# -- read tools ----------------------------------------------------------------------------


async def test_search_results_are_compact(registry: ToolRegistry) -> None:
    """Each hit is path, title, the heading it is under and snippet only, best first, in
    compact JSON."""
    result = await call(registry, "search_notes", query="kafka", limit=2)
    assert isinstance(result.content, str)
    decoded = json.loads(result.content)
    assert result.content == json.dumps(decoded, ensure_ascii=False, separators=(",", ":"))
    hits = decoded["results"]
    assert [hit["path"] for hit in hits] == ["Kafka.md", "Reading/Books.md"]
    assert all(set(hit) == {"path", "title", "heading", "snippet"} for hit in hits)
    assert [hit["heading"] for hit in hits] == ["Kafka", "Books"]
    assert hits[0]["title"] == "Kafka" and "**" in hits[1]["snippet"]


async def test_search_understands_the_documented_syntax(registry: ToolRegistry) -> None:
    """Phrases, prefixes, tag: and path: filters reach the index."""

    async def found(query: str) -> list[str]:
        return [hit["path"] for hit in (await ok(registry, "search_notes", query=query))["results"]]

    assert await found('"chapter on logs"') == ["Reading/Books.md"]
    assert "Kafka.md" in await found("kaf*")
    assert await found("tag:infra") == ["Kafka.md"]
    assert await found("pipeline path:Projects") == ["Projects/Plan.md"]
    assert await found("zzzunknownword") == []


async def test_read_note_returns_path_hash_and_content(
    registry: ToolRegistry, vault: Vault
) -> None:
    """The hash is the sha256 of the file, the path canonical."""
    result = await ok(registry, "read_note", path="Reading\\Books.md")
    assert result == {
        "path": "Reading/Books.md",
        "hash": sha256((vault.root / "Reading" / "Books.md").read_bytes()),
        "content": NOTES["Reading/Books.md"],
    }


async def test_read_note_reads_the_part_under_a_heading(
    registry: ToolRegistry, vault: Vault
) -> None:
    """heading (a search result's heading path, or its last part) reads that part alone, with
    its subheadings; the hash stays the file's, for writes."""
    (vault.root / "Setup.md").write_text(
        "Intro.\n# Setup\nAll systems.\n## Linux\napt install x\n### Arch\npacman\n## Mac\nbrew\n",
        encoding="utf-8",
    )
    linux = await ok(registry, "read_note", path="Setup.md", heading="Setup > Linux")
    assert linux["content"] == "## Linux\napt install x\n### Arch\npacman"
    assert linux["heading"] == "Setup > Linux"
    assert linux["hash"] == sha256((vault.root / "Setup.md").read_bytes())
    assert (await ok(registry, "read_note", path="Setup.md", heading="mac"))["content"] == (
        "## Mac\nbrew"
    )


async def test_read_note_names_the_headings_when_one_is_missing(registry: ToolRegistry) -> None:
    """An unknown heading is an error the model can act on: it lists the note's headings."""
    result = await call(registry, "read_note", path="Kafka.md", heading="Setup")
    assert result.is_error
    assert "no heading 'Setup'" in result.content and "'Kafka'" in result.content


async def test_read_note_truncates_huge_notes_with_a_marker(registry: ToolRegistry) -> None:
    """Past ~20,000 characters the text is cut and a marker says how much more exists."""
    first = (await ok(registry, "read_note", path="Big.md"))["content"]
    shown, _, marker = first.partition("\n\n[")
    assert shown == "".join(f"{i % 10}" for i in range(READ_LIMIT_CHARS))
    assert f"{BIG_CHARS - READ_LIMIT_CHARS} more" in marker
    assert f"offset={READ_LIMIT_CHARS}" in marker and "truncated" in marker


async def test_read_note_offset_reads_the_rest(registry: ToolRegistry) -> None:
    """Following the marker's offsets reassembles the whole note; the last part has no marker."""
    parts, offset = [], 0
    while True:
        content = (await ok(registry, "read_note", path="Big.md", offset=offset))["content"]
        text, _, marker = content.partition("\n\n[")
        parts.append(text)
        if not marker:
            break
        offset += len(text)
    assert len(parts) == 3
    assert "".join(parts) == "".join(f"{i % 10}" for i in range(BIG_CHARS))


async def test_read_note_offset_past_the_end_is_an_error(registry: ToolRegistry) -> None:
    """A wrong offset is explained to the model."""
    result = await call(registry, "read_note", path="Kafka.md", offset=10_000)
    assert result.is_error and "past the end" in str(result.content)


async def test_list_notes_lists_paths_and_says_when_there_are_more(registry: ToolRegistry) -> None:
    """A folder lists its notes sorted; 'more' appears only when the limit cut the list."""
    assert await ok(registry, "list_notes", folder="Projects") == {
        "notes": ["Projects/Notes.md", "Projects/Plan.md"]
    }
    assert await ok(registry, "list_notes", limit=2) == {
        "notes": ["Big.md", "Kafka.md"],
        "more": True,
    }
    assert len((await ok(registry, "list_notes"))["notes"]) == 5


async def test_get_backlinks_lists_linking_notes(registry: ToolRegistry) -> None:
    """Links by name and with an alias both count; a note nobody links to has none."""
    assert await ok(registry, "get_backlinks", path="Kafka.md") == {
        "path": "Kafka.md",
        "backlinks": ["Projects/Plan.md", "Reading/Books.md"],
    }
    assert (await ok(registry, "get_backlinks", path="Projects/Notes.md"))["backlinks"] == []


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("read_note", {"path": "../secret.md"}, "leaves the vault"),
        ("read_note", {"path": "/etc/passwd"}, "relative to the vault root"),
        ("read_note", {"path": ".obsidian/app.json"}, "system folder"),
        ("read_note", {"path": "Missing.md"}, "no note 'Missing.md'"),
        ("get_backlinks", {"path": "Missing.md"}, "no note 'Missing.md'"),
        ("list_notes", {"folder": "Nowhere"}, "no folder 'Nowhere'"),
        ("list_notes", {"folder": "../.."}, "not a folder you may use"),
    ],
)
async def test_vault_errors_reach_the_model_as_error_results(
    registry: ToolRegistry, name: str, arguments: dict[str, Any], message: str
) -> None:
    """A refused operation is an error result carrying the VaultError's sentence."""
    result = await call(registry, name, **arguments)
    assert result.is_error
    assert message in str(result.content)


# -- write tools ---------------------------------------------------------------------------


async def test_create_note_asks_then_writes_and_is_searchable_at_once(
    registry: ToolRegistry, vault: Vault, confirm: Confirmations
) -> None:
    """After approval the note exists, its result is compact, and search finds it immediately."""
    result = await ok(
        registry, "create_note", path="Inbox/Idea.md", content="# Idea\nA quokka pipeline.\n"
    )
    assert [c.name for c in confirm.asked] == ["create_note"]
    path = vault.root / "Inbox" / "Idea.md"
    assert result == {"path": "Inbox/Idea.md", "hash": sha256(path.read_bytes())}
    assert [h.path for h in vault.index.search("quokka").hits] == ["Inbox/Idea.md"]


async def test_a_denied_write_changes_nothing(vault: Vault) -> None:
    """When the user says no, the note is not created and the model is told."""
    confirm = Confirmations(approve=False)
    tools = ToolRegistry(confirm=confirm)
    register_vault_tools(tools, vault)
    result = await call(tools, "create_note", path="Nope.md", content="x")
    assert result.is_error and "did not approve" in str(result.content)
    assert not (vault.root / "Nope.md").exists()


async def test_create_note_never_overwrites(registry: ToolRegistry, vault: Vault) -> None:
    """An existing path is an error telling the model to pick another path."""
    result = await call(registry, "create_note", path="Kafka.md", content="gone")
    assert result.is_error and "already exists" in str(result.content)
    assert (vault.root / "Kafka.md").read_text(encoding="utf-8") == NOTES["Kafka.md"]


async def test_create_note_refuses_other_file_types(registry: ToolRegistry, vault: Vault) -> None:
    """The model can only write Markdown."""
    result = await call(registry, "create_note", path="Board.canvas", content="{}")
    assert result.is_error and ".md" in str(result.content)
    assert not (vault.root / "Board.canvas").exists()


async def test_append_to_note_adds_a_line_and_is_searchable_at_once(
    registry: ToolRegistry, vault: Vault
) -> None:
    """Appended text lands on its own line and search sees it without waiting."""
    result = await ok(registry, "append_to_note", path="Projects/Notes.md", content="- wombat")
    path = vault.root / "Projects" / "Notes.md"
    assert path.read_text(encoding="utf-8") == NOTES["Projects/Notes.md"] + "- wombat"
    assert result == {"path": "Projects/Notes.md", "hash": sha256(path.read_bytes())}
    assert [h.path for h in vault.index.search("wombat").hits] == ["Projects/Notes.md"]


async def test_append_to_a_missing_note_is_an_error(registry: ToolRegistry, vault: Vault) -> None:
    """append never creates; the model is told to create instead."""
    result = await call(registry, "append_to_note", path="Ghost.md", content="x")
    assert result.is_error and "no note 'Ghost.md'" in str(result.content)
    assert not (vault.root / "Ghost.md").exists()


async def test_model_writes_are_audited_as_the_model(registry: ToolRegistry, vault: Vault) -> None:
    """The audit log records tool writes with origin 'model'."""
    await ok(registry, "create_note", path="A.md", content="a")
    await ok(registry, "append_to_note", path="A.md", content="b")
    lines = (vault.data_dir / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    assert [(e["action"], e["origin"]) for e in map(json.loads, lines)] == [
        ("create", "model"),
        ("append", "model"),
    ]


async def test_edit_note_replaces_each_quoted_passage_and_keeps_the_rest(
    registry: ToolRegistry, vault: Vault
) -> None:
    """Each old_text occurring once is replaced in order; everything else stays byte for byte."""
    original = NOTES["Projects/Notes.md"]
    first_line = original.splitlines()[0]
    edits = [{"old_text": first_line, "new_text": "# Renamed"}]
    result = await ok(registry, "edit_note", path="Projects/Notes.md", edits=edits)
    path = vault.root / "Projects" / "Notes.md"
    assert path.read_text(encoding="utf-8") == original.replace(first_line, "# Renamed", 1)
    assert result == {"path": "Projects/Notes.md", "hash": sha256(path.read_bytes())}


@pytest.mark.parametrize(
    ("old_text", "why"), [("no such words", "is not in the note"), ("e", "times")]
)
async def test_edit_note_with_a_missing_or_ambiguous_passage_changes_nothing(
    registry: ToolRegistry, vault: Vault, old_text: str, why: str
) -> None:
    """The model is told which edit failed and why; the note is untouched."""
    edits = [{"old_text": old_text, "new_text": "x"}]
    result = await call(registry, "edit_note", path="Projects/Notes.md", edits=edits)
    assert result.is_error and "Edit 1" in str(result.content) and why in str(result.content)
    path = vault.root / "Projects" / "Notes.md"
    assert path.read_text(encoding="utf-8") == NOTES["Projects/Notes.md"]


# -- previews ------------------------------------------------------------------------------


def preview_tool_call(vault: Vault, call_: ToolCall) -> str | None:
    plan = plan_tool_call(vault, call_)
    return None if plan is None else plan.diff


def test_titles_say_what_a_write_does_in_words(vault: Vault) -> None:
    """The review's title names the note and the number of edits, never the tool."""
    calls = {
        "Create Ideas/Kites.md": ToolCall(
            "1", "create_note", {"path": "Ideas/Kites.md", "content": "# Kites\n"}
        ),
        "Append to Projects/Notes.md": ToolCall(
            "2", "append_to_note", {"path": "Projects/Notes.md", "content": "- new"}
        ),
        "Edit Projects/Notes.md: 2 changes": ToolCall(
            "3",
            "edit_note",
            {
                "path": "Projects/Notes.md",
                "edits": [
                    {"old_text": "# Notes", "new_text": "# Renamed"},
                    {"old_text": "Nothing links", "new_text": "No link"},
                ],
            },
        ),
    }
    for title, call_ in calls.items():
        assert confirm_title(call_, plan_tool_call(vault, call_)) == title
    search = ToolCall("4", "search_notes", {"query": "x"})
    assert confirm_title(search, None) == "Allow the assistant to run search_notes?"


def test_kept_text_becomes_arguments_that_write_exactly_it(vault: Vault) -> None:
    """Whatever the user kept, the tool run with the kept arguments writes exactly that text."""
    before = NOTES["Projects/Notes.md"]
    kept = before.replace("# Notes", "# Renamed")
    edit = ToolCall(
        "1",
        "edit_note",
        {
            "path": "Projects/Notes.md",
            "edits": [
                {"old_text": "# Notes", "new_text": "# Renamed"},
                {"old_text": "Nothing links", "new_text": "No link"},
            ],
        },
    )
    plan = plan_tool_call(vault, edit)
    assert plan is not None and plan.before == before
    arguments = kept_arguments(edit, plan, kept)
    vault.notes.edit(
        "Projects/Notes.md", [(e["old_text"], e["new_text"]) for e in arguments["edits"]]
    )
    assert (vault.root / "Projects" / "Notes.md").read_text(encoding="utf-8") == kept

    create = ToolCall("2", "create_note", {"path": "N.md", "content": "a\nb\n"})
    create_plan = plan_tool_call(vault, create)
    assert create_plan is not None and create_plan.before is None
    assert kept_arguments(create, create_plan, "a\n") == {"path": "N.md", "content": "a\n"}

    append = ToolCall("3", "append_to_note", {"path": "Projects/Notes.md", "content": "- new\n"})
    append_plan = plan_tool_call(vault, append)
    assert append_plan is not None
    assert kept_arguments(append, append_plan, kept + "- new\n") == {
        "path": "Projects/Notes.md",
        "content": "- new\n",
    }
    with pytest.raises(ValueError):
        kept_arguments(append, append_plan, "something else entirely\n")


def test_preview_of_create_note_is_an_all_added_diff(vault: Vault) -> None:
    """The user sees the new note's lines before approving."""
    preview = preview_tool_call(
        vault, ToolCall("1", "create_note", {"path": "N.md", "content": "a\n"})
    )
    assert preview == "--- /dev/null\n+++ b/N.md\n@@ -0,0 +1 @@\n+a\n"


def test_preview_of_append_to_note_shows_the_added_lines(vault: Vault) -> None:
    """Only the appended line is added; nothing is written by previewing."""
    call_ = ToolCall("1", "append_to_note", {"path": "Projects/Notes.md", "content": "- new"})
    preview = preview_tool_call(vault, call_)
    assert preview is not None
    assert [line for line in preview.splitlines() if line.startswith("+")][1:] == ["+- new"]
    assert (vault.root / "Projects" / "Notes.md").read_text() == NOTES["Projects/Notes.md"]


def test_preview_of_edit_note_is_the_diff_of_the_edits(vault: Vault) -> None:
    """The user sees exactly the replaced lines before approving."""
    first = NOTES["Projects/Notes.md"].splitlines()[0]
    call_ = ToolCall(
        "1",
        "edit_note",
        {"path": "Projects/Notes.md", "edits": [{"old_text": first, "new_text": "# New"}]},
    )
    preview = preview_tool_call(vault, call_)
    assert preview is not None and f"-{first}" in preview and "+# New" in preview


@pytest.mark.parametrize("name", ["search_notes", "read_note", "list_notes", "get_backlinks"])
def test_read_only_tools_have_no_preview(vault: Vault, name: str) -> None:
    """Nothing to confirm for reads."""
    assert preview_tool_call(vault, ToolCall("1", name, {"path": "Kafka.md"})) is None


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"path": "Kafka.md", "content": "x"}, "exists"),
        ({"path": "../x.md", "content": "x"}, "forbidden_path"),
    ],
)
def test_preview_of_a_write_that_would_fail_raises_its_vault_error(
    vault: Vault, arguments: dict[str, Any], code: str
) -> None:
    """The caller learns the write would be refused, with the same code as the write."""
    with pytest.raises(VaultError) as caught:
        preview_tool_call(vault, ToolCall("1", "create_note", arguments))
    assert caught.value.code == code
