"""The vault tools a model may call, and their registration on a ToolRegistry.

Reads run freely; writes go through the safe note store with ``write_permission`` ("ask" by
default: the user approves each one, shown the diff from :func:`preview_tool_call`). A refused
operation raises VaultError, whose sentence the model reads as an error result. Results are
compact JSON objects with short keys.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final

from llm_service.messages import ToolCall
from llm_service.tools import Permission, ToolHandler, ToolOutput, ToolRegistry
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.notes.store import WriteResult
from plugin_bridge.vault.notes.vault import Vault
from plugin_bridge.vault.semantic.hybrid import NoteHit, search_notes

READ_LIMIT_CHARS: Final = 20_000
"""read_note returns at most this many characters per call."""
EXCERPT_CHARS: Final = 800
"""search_notes shows at most this much of a result's best chunk."""
DEFAULT_LIMIT: Final = 10
MAX_LIMIT: Final = 50

WRITE_TOOL_NAMES: Final = frozenset({"create_note", "append_to_note", "edit_note"})


def register_vault_tools(
    registry: ToolRegistry, vault: Vault, *, write_permission: Permission = "ask"
) -> list[str]:
    """Register the seven vault tools on ``registry`` (an ``LLMService``'s is ``service.tools``);
    reads "allow", writes ``write_permission``.

    Returns their names, ``VAULT_TOOL_NAMES`` in order.
    """
    tools = _VaultTools(vault)
    for spec in _SPECS:
        registry.register_tool(
            spec.name,
            spec.description,
            spec.input_schema,
            _bind(spec.run, tools),
            permission=write_permission if spec.name in WRITE_TOOL_NAMES else "allow",
        )
    return list(VAULT_TOOL_NAMES)


def preview_tool_call(vault: Vault, call: ToolCall) -> str | None:
    """The unified diff a write tool call would make; None for read-only tools.

    Raises VaultError when the write would be refused (bad path, note exists or is missing).
    """
    path = str(call.arguments.get("path", ""))
    content = str(call.arguments.get("content", ""))
    if call.name == "create_note":
        return vault.notes.preview_create(path, content)
    if call.name == "append_to_note":
        return vault.notes.preview_append(path, content)
    if call.name == "edit_note":
        return vault.notes.preview_edit(path, _edits(call.arguments))
    if call.name == "complete_setup":  # the setup conversation's write of the context note
        return vault.notes.preview_write(path, content)
    return None


_REVIEWED: ContextVar[dict[str, str]] = ContextVar("reviewed_versions")
"""The hash of each note (by path) as it was when the user was shown a write to approve, in
the task that runs the tool loop; the approved write must find the note unchanged."""


def reviewed_version(vault: Vault, call: ToolCall) -> str | None:
    """The hash of the note that ``call`` (an append or edit) changes, as it is now: what the
    user is about to review (blocking). None for other calls or a note that cannot be read."""
    if call.name not in ("append_to_note", "edit_note"):
        return None
    try:
        return vault.notes.read(str(call.arguments.get("path", ""))).hash
    except VaultError:
        return None


def remember_review(call: ToolCall, version: str | None) -> None:
    """Hold the approved write of ``call`` to ``version`` of its note (call it in the task
    that runs the tool, as the confirm callback is)."""
    if version is None:
        return
    versions = _REVIEWED.get(None)
    if versions is None:
        versions = {}
        _REVIEWED.set(versions)
    versions[str(call.arguments.get("path", ""))] = version


def _reviewed(path: str) -> str | None:
    """The version of ``path`` the user reviewed for the write about to run (once)."""
    versions = _REVIEWED.get(None)
    return None if versions is None else versions.pop(path, None)


def _as_reviewed(write: Callable[..., WriteResult], path: str, *args: Any) -> ToolOutput:
    """Run a model's write of ``path``, held to the version the user reviewed if any: a note
    changed while the approval was pending is not written (conflict, -32022)."""
    reviewed = _reviewed(path)
    try:
        written = write(path, *args, expected_hash=reviewed, origin="model")
    except VaultError as exc:
        if exc.code == "conflict" and reviewed is not None:
            raise VaultError(
                "conflict",
                f"'{path}' changed while the user was reviewing this change, so nothing was "
                "written: read it again and redo the change.",
                path=path,
            ) from exc
        raise
    return {"path": written.path, "hash": written.hash}


def _edits(args: dict[str, Any]) -> list[tuple[str, str]]:
    return [(str(e.get("old_text", "")), str(e.get("new_text", ""))) for e in args["edits"]]


class _VaultTools:
    """The handlers: sync (the tool registry runs them in a worker thread)."""

    def __init__(self, vault: Vault) -> None:
        self.vault = vault
        self.notes = vault.notes
        self.index = vault.index

    async def search_notes(self, args: dict[str, Any]) -> ToolOutput:
        found = await search_notes(
            self.index, self.vault.semantic, args["query"], args.get("limit", DEFAULT_LIMIT)
        )
        result: dict[str, Any] = {"results": [_hit(h) for h in found.hits]}
        if found.pending:
            result["pending"] = found.pending
            result["note"] = "The index is still being built: results may be incomplete."
        return result

    def read_note(self, args: dict[str, Any]) -> ToolOutput:
        note = self.notes.read(args["path"])
        text, offset = note.content, args.get("offset", 0)
        if offset > len(text):
            raise ValueError(
                f"offset {offset} is past the end of '{note.path}' ({len(text)} characters)."
            )
        content = text[offset : offset + READ_LIMIT_CHARS]
        end = offset + len(content)
        if end < len(text):
            content += (
                f"\n\n[… truncated: characters {offset}-{end} of {len(text)} shown; "
                f"{len(text) - end} more exist. Call read_note with offset={end} to read on.]"
            )
        result: dict[str, Any] = {"path": note.path, "hash": note.hash, "content": content}
        if note.lossy:
            result["lossy"] = "some bytes were not UTF-8 and show as U+FFFD; do not rewrite it"
        return result

    def list_notes(self, args: dict[str, Any]) -> ToolOutput:
        limit = args.get("limit", DEFAULT_LIMIT)
        found = self.notes.list_notes(args.get("folder", ""), limit + 1)
        result: dict[str, Any] = {"notes": [n.path for n in found[:limit]]}
        if len(found) > limit:
            result["more"] = True
        return result

    def get_backlinks(self, args: dict[str, Any]) -> ToolOutput:
        path = self.notes.info(args["path"]).path
        return {"path": path, "backlinks": self.index.backlinks(path)}

    def create_note(self, args: dict[str, Any]) -> ToolOutput:
        written = self.notes.create(args["path"], args["content"], origin="model")
        return {"path": written.path, "hash": written.hash}

    def append_to_note(self, args: dict[str, Any]) -> ToolOutput:
        return _as_reviewed(self.notes.append, args["path"], args["content"])

    def edit_note(self, args: dict[str, Any]) -> ToolOutput:
        return _as_reviewed(self.notes.edit, args["path"], _edits(args))


@dataclass(frozen=True)
class _Spec:
    name: str
    description: str
    input_schema: dict[str, Any]
    run: Callable[[_VaultTools, dict[str, Any]], ToolOutput | Awaitable[ToolOutput]]


def _hit(hit: NoteHit) -> dict[str, Any]:
    """A search result for the model: found by vectors, its best chunk (bounded) instead of a
    snippet, so the answer can often come without reading the whole note."""
    item: dict[str, Any] = {"path": hit.path, "title": hit.title}
    if hit.chunks:
        best = hit.chunks[0]
        item["section"] = best.heading
        item["excerpt"] = best.text[:EXCERPT_CHARS]
    else:
        item["snippet"] = hit.snippet
    return item


def _bind(
    run: Callable[[_VaultTools, dict[str, Any]], ToolOutput | Awaitable[ToolOutput]],
    tools: _VaultTools,
) -> ToolHandler:
    if inspect.iscoroutinefunction(run):

        async def handler_async(args: dict[str, Any]) -> ToolOutput:
            output = run(tools, args)
            result: ToolOutput = await output if inspect.isawaitable(output) else output
            return result

        return handler_async

    def handler(args: dict[str, Any]) -> ToolOutput:
        output = run(tools, args)
        assert not inspect.isawaitable(output)
        return output

    return handler


def _object(required: list[str], **properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _path(kinds: str) -> dict[str, Any]:
    return {
        "type": "string",
        "minLength": 1,
        "maxLength": 1000,
        "description": f"Path of the note relative to the vault root, with '/' between folders "
        f"and the {kinds} extension, e.g. 'Projects/Kafka.md'.",
    }


_LIMIT: Final = {
    "type": "integer",
    "minimum": 1,
    "maximum": MAX_LIMIT,
    "default": DEFAULT_LIMIT,
    "description": f"How many results at most (1-{MAX_LIMIT}, default {DEFAULT_LIMIT}).",
}

_SPECS: Final = (
    _Spec(
        "search_notes",
        "Search the user's notes, best matches first: full-text (title matches rank highest), "
        "and by meaning when semantic search is set up. Returns each match's path, title and "
        "either a snippet with the matched words in **bold** or the best matching section as "
        "an excerpt. Read a note in full with read_note.",
        _object(
            ["query"],
            query={
                "type": "string",
                "minLength": 1,
                "maxLength": 500,
                "description": 'Words that must all appear (any order); "an exact phrase" in '
                "double quotes; prefix* for words starting so; tag:name for notes with that tag; "
                "path:Folder for notes under that folder. Combine them, e.g. "
                "'kafka retention tag:project path:Work'.",
            },
            limit=_LIMIT,
        ),
        _VaultTools.search_notes,
    ),
    _Spec(
        "read_note",
        "Read one note: returns its path, hash and content (Markdown; .canvas and .base files "
        f"as their JSON/YAML text). Long notes come in parts of {READ_LIMIT_CHARS} characters "
        "ending with a marker that says how much is left and which offset reads on.",
        _object(
            ["path"],
            path=_path(".md, .canvas or .base"),
            offset={
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "Character to start from, for the rest of a long note.",
            },
        ),
        _VaultTools.read_note,
    ),
    _Spec(
        "list_notes",
        "List the paths of the notes in a folder and all its subfolders, sorted by path; "
        '"more": true means there are more than limit.',
        _object(
            [],
            folder={
                "type": "string",
                "maxLength": 1000,
                "default": "",
                "description": "Folder relative to the vault root, e.g. 'Projects' or "
                "'Projects/2024'; '' (the default) for the whole vault.",
            },
            limit=_LIMIT,
        ),
        _VaultTools.list_notes,
    ),
    _Spec(
        "get_backlinks",
        "List the paths of the notes that link to a note with [[wikilinks]] or ![[embeds]].",
        _object(["path"], path=_path(".md, .canvas or .base")),
        _VaultTools.get_backlinks,
    ),
    _Spec(
        "create_note",
        "Create a new Markdown note; missing folders are created. Never overwrites: if a note "
        "exists at the path this fails, so pick another path or use append_to_note. The user "
        "may be asked to approve. Returns the path and hash.",
        _object(
            ["path", "content"],
            path=_path(".md"),
            content={"type": "string", "description": "The note's Markdown text."},
        ),
        _VaultTools.create_note,
    ),
    _Spec(
        "append_to_note",
        "Add Markdown at the end of an existing .md note, on a new line; the text already in the "
        "note is kept as it is. The user may be asked to approve. Returns the path and hash.",
        _object(
            ["path", "content"],
            path=_path(".md"),
            content={"type": "string", "minLength": 1, "description": "Markdown to add."},
        ),
        _VaultTools.append_to_note,
    ),
    _Spec(
        "edit_note",
        "Change parts of an existing .md note with search-and-replace edits, applied in order. "
        "Each old_text must be copied exactly from the note (read it first) and occur exactly "
        "once; include a few surrounding words to make it unique. The rest of the note is kept "
        "as it is. The user may be asked to approve. Returns the path and hash.",
        _object(
            ["path", "edits"],
            path=_path(".md"),
            edits={
                "type": "array",
                "description": "The replacements, applied one after another.",
                "minItems": 1,
                "maxItems": 20,
                "items": {
                    "type": "object",
                    "properties": {
                        "old_text": {
                            "type": "string",
                            "minLength": 1,
                            "description": "Text now in the note, exactly once.",
                        },
                        "new_text": {
                            "type": "string",
                            "description": "What replaces it ('' deletes it).",
                        },
                    },
                    "required": ["old_text", "new_text"],
                    "additionalProperties": False,
                },
            },
        ),
        _VaultTools.edit_note,
    ),
)

VAULT_TOOL_NAMES: Final[tuple[str, ...]] = tuple(spec.name for spec in _SPECS)
