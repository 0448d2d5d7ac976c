"""The vault tools a model may call, and their registration on a ToolRegistry.

Reads run freely; writes go through the safe note store with ``write_permission`` ("ask" by
default: the user approves each one, shown what :func:`plan_tool_call` works out: the note before
and after, and a title in words). Each write tool says how it plans its write, how it is titled
and how it writes text the user kept instead (:class:`_Write`); nothing else names a write tool.
Writes are made by a ``writer`` (the app's write-through to Obsidian; the note store itself by
default). A refused operation raises VaultError, whose sentence the model reads as an error
result. Results are compact JSON objects with short keys.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Final

from llm_service.messages import ToolCall
from llm_service.tools import Permission, ToolHandler, ToolOutput, ToolRegistry
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.notes.store import NoteStore, PlannedWrite, WriteResult
from plugin_bridge.vault.notes.vault import Vault
from plugin_bridge.vault.semantic.hybrid import NoteHit, related_notes, search_notes

READ_LIMIT_CHARS: Final = 20_000
"""read_note returns at most this many characters per call."""
EXCERPT_CHARS: Final = 800
"""search_notes shows at most this much of a result's best chunk."""
DEFAULT_LIMIT: Final = 10
MAX_LIMIT: Final = 50

Writer = Callable[[PlannedWrite, str], Awaitable[WriteResult]]
"""Makes a planned write for an origin ("model"); VaultError when it is refused."""
RELATED_TOOL: Final = "related_notes"
"""Offered only while the vault has semantic search (an embedder): see :func:`offer_related`."""


def register_vault_tools(
    registry: ToolRegistry,
    vault: Vault,
    *,
    write_permission: Permission = "ask",
    writer: Writer | None = None,
) -> list[str]:
    """Register the seven vault tools on ``registry`` (an ``LLMService``'s is ``service.tools``),
    and related_notes when the vault has an embedder; reads "allow", writes
    ``write_permission``, made by ``writer`` (the note store by default).

    Returns their names: ``VAULT_TOOL_NAMES`` in order, then related_notes if registered.
    """
    tools = _VaultTools(vault, writer or store_writer(vault.notes))
    for spec in _SPECS:
        _register(registry, spec, tools, write_permission)
    return [*VAULT_TOOL_NAMES, *([RELATED_TOOL] if offer_related(registry, vault) else [])]


def offer_related(registry: ToolRegistry, vault: Vault) -> bool:
    """Register related_notes on ``registry`` while ``vault`` has semantic search, remove it
    otherwise (call again after the embedder changes); whether it is offered."""
    wanted = vault.semantic is not None
    present = registry.permission(RELATED_TOOL) is not None
    if wanted and not present:
        _register(registry, _RELATED_SPEC, _VaultTools(vault, store_writer(vault.notes)), "allow")
    elif present and not wanted:
        registry.unregister_tool(
            RELATED_TOOL, "related_notes needs semantic search, and no embedder is configured."
        )
    return wanted


def _register(
    registry: ToolRegistry, spec: _Spec, tools: _VaultTools, write_permission: Permission
) -> None:
    registry.register_tool(
        spec.name,
        spec.description,
        spec.input_schema,
        _bind(spec.run, tools),
        permission=write_permission if spec.name in WRITE_TOOL_NAMES else "allow",
    )


def store_writer(notes: NoteStore) -> Writer:
    """The note store making planned writes itself (no plugin to ask)."""

    async def write(plan: PlannedWrite, origin: str) -> WriteResult:
        return await asyncio.to_thread(notes.write_planned, plan, origin)

    return write


def plan_tool_call(vault: Vault, call: ToolCall) -> PlannedWrite | None:
    """What a write tool call would write (nothing is written); None for other tools.

    Raises VaultError when the write would be refused (bad path, note exists or is missing).
    """
    write = _WRITES.get(call.name)
    return None if write is None else write.plan(vault.notes, call.arguments)


def confirm_title(call: ToolCall, plan: PlannedWrite | None) -> str:
    """The sentence the review shows: "Edit Plan.md: 4 changes", "Create Ideas/Kites.md"."""
    write = _WRITES.get(call.name)
    if write is None or plan is None:
        return f"Allow the assistant to run {call.name}?"
    return write.title(plan, call.arguments)


def kept_arguments(call: ToolCall, plan: PlannedWrite, after: str) -> dict[str, Any]:
    """Arguments for ``call``'s tool that write exactly ``after`` (the text the user kept) over
    the note as planned (ValueError when the tool cannot write that text)."""
    return _WRITES[call.name].kept(plan, call.arguments, after)


_REVIEWED: ContextVar[dict[str, str | None]] = ContextVar("reviewed_versions")
"""The hash of each note (by path) as it was when the user was shown a write to approve, in
the task that runs the tool loop; the approved write must find the note unchanged."""


def remember_review(path: str, version: str | None) -> None:
    """Hold the approved write of ``path`` to ``version`` of the note (None: a new note); call
    it in the task that runs the tool, as the confirm callback is."""
    versions = _REVIEWED.get(None)
    if versions is None:
        versions = {}
        _REVIEWED.set(versions)
    versions[path] = version


def _check_reviewed(plan: PlannedWrite) -> None:
    """VaultError(conflict) when the note changed since the user reviewed this write (once)."""
    versions = _REVIEWED.get(None)
    if versions is None or plan.path not in versions:
        return
    if versions.pop(plan.path) != plan.old_hash:
        raise VaultError(
            "conflict",
            f"'{plan.path}' changed while the user was reviewing this change, so nothing was "
            "written: read it again and redo the change.",
            path=plan.path,
        )


def _check_expected(plan: PlannedWrite, expected: str | None) -> None:
    """VaultError(conflict) when the caller read another version than the note has now (the
    tools' optional ``expected_hash``, from read_note)."""
    if expected is not None and plan.old_hash != expected:
        raise VaultError(
            "conflict",
            f"'{plan.path}' changed since it was read (its hash is not expected_hash), so "
            "nothing was written: read it again and redo the change.",
            path=plan.path,
        )


def _edits(args: dict[str, Any]) -> list[tuple[str, str]]:
    return [(str(e.get("old_text", "")), str(e.get("new_text", ""))) for e in args["edits"]]


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _kept_append(plan: PlannedWrite, args: dict[str, Any], after: str) -> dict[str, Any]:
    before = plan.before or ""
    if not after.startswith(before):
        raise ValueError("the kept text does not keep the note's text before the addition")
    added = after[len(before) :]
    if before and not before.endswith("\n"):
        added = added.removeprefix("\n")
    return {**args, "content": added}


@dataclass(frozen=True)
class _Write:
    """How a write tool works out its write, says it in words, and writes kept text instead."""

    plan: Callable[[NoteStore, dict[str, Any]], PlannedWrite]
    title: Callable[[PlannedWrite, dict[str, Any]], str]
    kept: Callable[[PlannedWrite, dict[str, Any], str], dict[str, Any]]


_CREATE: Final = _Write(
    plan=lambda notes, args: notes.plan_create(str(args["path"]), str(args["content"])),
    title=lambda plan, args: f"Create {plan.path}",
    kept=lambda plan, args, after: {**args, "content": after},
)
_APPEND: Final = _Write(
    plan=lambda notes, args: notes.plan_append(str(args["path"]), str(args["content"])),
    title=lambda plan, args: f"Append to {plan.path}",
    kept=_kept_append,
)
_EDIT: Final = _Write(
    plan=lambda notes, args: notes.plan_edit(str(args["path"]), _edits(args)),
    title=lambda plan, args: f"Edit {plan.path}: {_plural(len(args['edits']), 'change')}",
    # The whole note as it was reviewed becomes the kept text: the edit fails if it changed.
    kept=lambda plan, args, after: {
        "path": args["path"],
        "edits": [{"old_text": plan.before, "new_text": after}],
    },
)


class _VaultTools:
    """The handlers: reads are sync (the tool registry runs them in a worker thread), writes
    async (their writer may ask Obsidian)."""

    def __init__(self, vault: Vault, writer: Writer) -> None:
        self.vault = vault
        self.notes = vault.notes
        self.index = vault.index
        self.writer = writer

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

    def related_notes(self, args: dict[str, Any]) -> ToolOutput:
        semantic = self.vault.semantic
        if semantic is None:
            raise ValueError("related_notes needs semantic search, and no embedder is configured.")
        path = self.notes.info(args["path"]).path
        if not semantic.ready:
            return {"path": path, "related": [], "pending": "the note vectors are being computed"}
        found = related_notes(self.index, semantic, path, args.get("limit", DEFAULT_LIMIT))
        return {
            "path": path,
            "related": [
                {"path": r.path, "title": r.title, "linked": r.links_to or r.linked_from}
                for r in found
            ],
        }

    async def write(self, write: _Write, args: dict[str, Any]) -> ToolOutput:
        plan = await asyncio.to_thread(write.plan, self.notes, args)
        _check_expected(plan, args.get("expected_hash"))
        _check_reviewed(plan)
        written = await self.writer(plan, "model")
        return {"path": written.path, "hash": written.hash}


def _writing(write: _Write) -> Callable[[_VaultTools, dict[str, Any]], Awaitable[ToolOutput]]:
    async def run(tools: _VaultTools, args: dict[str, Any]) -> ToolOutput:
        return await tools.write(write, args)

    return run


@dataclass(frozen=True)
class _Spec:
    name: str
    description: str
    input_schema: dict[str, Any]
    run: Callable[[_VaultTools, dict[str, Any]], ToolOutput | Awaitable[ToolOutput]]
    write: _Write | None = None


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


_EXPECTED_HASH: Final = {
    "type": "string",
    "pattern": "^[0-9a-f]{64}$",
    "description": "Optional: the hash read_note returned; the write is refused if the note "
    "changed since, so read it again.",
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
                "description": "Words or a plain question: notes with every word rank first, "
                "other word forms and typos match too; +word for a word that must appear; "
                '"an exact phrase" in double quotes; prefix* for words starting so; tag:name '
                "for notes with that tag; "
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
        _writing(_CREATE),
        _CREATE,
    ),
    _Spec(
        "append_to_note",
        "Add Markdown at the end of an existing .md note, on a new line; the text already in the "
        "note is kept as it is. The user may be asked to approve. Returns the path and hash.",
        _object(
            ["path", "content"],
            path=_path(".md"),
            content={"type": "string", "minLength": 1, "description": "Markdown to add."},
            expected_hash=_EXPECTED_HASH,
        ),
        _writing(_APPEND),
        _APPEND,
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
            expected_hash=_EXPECTED_HASH,
        ),
        _writing(_EDIT),
        _EDIT,
    ),
)

_RELATED_SPEC: Final = _Spec(
    RELATED_TOOL,
    "List the notes closest in meaning to one note (not itself), best first, each with its "
    "path, title and whether the two already link. Use it to suggest links or find notes on the "
    "same subject worded differently.",
    _object(["path"], path=_path(".md"), limit=_LIMIT),
    _VaultTools.related_notes,
)

VAULT_TOOL_NAMES: Final[tuple[str, ...]] = tuple(spec.name for spec in _SPECS)
"""The tools every registry gets; related_notes (:data:`RELATED_TOOL`) comes on top with an
embedder."""
WRITE_TOOL_NAMES: Final = frozenset(spec.name for spec in _SPECS if spec.write)
_REPLACE: Final = _Write(  # complete_setup (app/turn/setup.py): the context note, whole
    plan=lambda notes, args: notes.plan_create(
        str(args["path"]), str(args["content"]), overwrite=True
    ),
    title=lambda plan, args: f"{'Create' if plan.before is None else 'Rewrite'} {plan.path}",
    kept=lambda plan, args, after: {**args, "content": after},
)
_WRITES: Final[dict[str, _Write]] = {
    **{spec.name: spec.write for spec in _SPECS if spec.write},
    "complete_setup": _REPLACE,
}
