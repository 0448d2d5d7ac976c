"""The vault tools a model may call, and their registration on a ToolRegistry.

Reads run freely; writes go through the safe note store with ``write_permission`` ("ask" by
default: the user approves each one, shown what :func:`plan_tool_call` works out: the note before
and after, and a title in words). Each write tool says how it plans its write, how it is titled
and how it writes text the user kept instead (:class:`_Write`); nothing else names a write tool.
Writes are made by a ``writer`` (the app's write-through to Obsidian; the note store itself by
default) for the caller of the :class:`ToolRun` the handlers are bound to
(:func:`write_handlers`: the audit line names it). A refused operation raises VaultError, whose
sentence the model reads as an error result. Results are compact JSON objects with short keys.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, Generic, TypeVar

from llm_service.messages import ToolCall
from llm_service.tools import Permission, ToolHandler, ToolOutput, ToolRegistry
from plugin_bridge.app.clients import OWNER_CALLER, Caller, audit_origin
from plugin_bridge.app.tool_args import (
    READ_LIMIT_CHARS,
    AppendToNoteArgs,
    CompleteSetupArgs,
    CreateNoteArgs,
    EditNoteArgs,
    GetBacklinksArgs,
    ListNotesArgs,
    NoteEdit,
    ReadNoteArgs,
    RelatedNotesArgs,
    ReplaceNoteArgs,
    SearchNotesArgs,
    ToolArgs,
)
from plugin_bridge.vault.attachments import read_pdf
from plugin_bridge.vault.door import FILES
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.notes.results import NoteContent
from plugin_bridge.vault.notes.store import NoteStore, PlannedWrite, WriteResult
from plugin_bridge.vault.pdf import is_pdf_name
from plugin_bridge.vault.sections import PDF_HEADINGS, section
from plugin_bridge.vault.vault import NoteHit, Vault

EXCERPT_CHARS: Final = 800
"""search_notes shows at most this much of a result's best chunk."""
RELATED_TOOL: Final = RelatedNotesArgs.TOOL
"""Offered only while the vault has semantic search (an embedder): see :func:`offer_related`."""

Writer = Callable[[PlannedWrite, str, Caller], Awaitable[WriteResult]]
"""Makes a planned write for an origin ("model") and a caller (the audit line names both);
VaultError when it is refused."""


@dataclass(slots=True)
class ToolRun:
    """One run of tools (a chat turn's tool loop, one ``tools/execute``, one HTTP or MCP call):
    who it runs for, and what its user reviewed. The access policy
    (:class:`~plugin_bridge.app.access.ToolAccess`) makes one per run and binds the write tools
    and the confirm callback to it; nothing finds it through a context variable."""

    caller: Caller
    """Who asked: its scope decides what runs, and the audit line of each write names it."""
    reviewed: dict[str, str | None] = field(default_factory=dict)
    """The hash of each note (by path) as it was when the user was shown a write to approve
    (None: a new note); the approved write must find the note unchanged."""
    denied: set[str] = field(default_factory=set)
    """Ids of the calls the user did not approve."""

    def remember_review(self, path: str, version: str | None) -> None:
        """Hold the approved write of ``path`` to ``version`` of the note (None: a new note)."""
        self.reviewed[path] = version

    def check_reviewed(self, plan: PlannedWrite) -> None:
        """VaultError(conflict) when the note changed since the user reviewed this write
        (checked once)."""
        if plan.path not in self.reviewed:
            return
        if self.reviewed.pop(plan.path) != plan.old_hash:
            raise VaultError(
                "conflict",
                f"'{plan.path}' changed while the user was reviewing this change, so nothing "
                "was written: read it again and redo the change.",
                path=plan.path,
            )


def register_vault_tools(
    registry: ToolRegistry,
    vault: Vault,
    *,
    write_permission: Permission = "ask",
    writer: Writer | None = None,
) -> list[str]:
    """Register the seven vault tools on ``registry`` (an ``LLMService``'s is ``service.tools``),
    and related_notes when the vault has an embedder; reads "allow", writes
    ``write_permission``, made by ``writer`` (the note store by default) as the owner's (a view
    of the registry runs them for another caller: :func:`write_handlers`).

    Returns their names: ``VAULT_TOOL_NAMES`` in order, then related_notes if registered.
    """
    tools = _VaultTools(vault, writer or store_writer(vault.notes), ToolRun(OWNER_CALLER))
    for spec in _SPECS:
        _register(registry, spec, tools, write_permission)
    return [*VAULT_TOOL_NAMES, *([RELATED_TOOL] if offer_related(registry, vault) else [])]


def offer_related(registry: ToolRegistry, vault: Vault) -> bool:
    """Register related_notes on ``registry`` while ``vault`` has semantic search, remove it
    otherwise (call again after the embedder changes); whether it is offered."""
    wanted = vault.semantic is not None
    present = registry.permission(RELATED_TOOL) is not None
    if wanted and not present:
        tools = _VaultTools(vault, store_writer(vault.notes), ToolRun(OWNER_CALLER))
        _register(registry, _RELATED_SPEC, tools, "allow")
    elif present and not wanted:
        registry.unregister_tool(
            RELATED_TOOL, "related_notes needs semantic search, and no embedder is configured."
        )
    return wanted


def _register(
    registry: ToolRegistry, spec: _Spec, tools: _VaultTools, write_permission: Permission
) -> None:
    registry.register_tool(
        spec.args.TOOL,
        spec.description,
        spec.args.input_schema(),
        _bind(spec, tools),
        permission=write_permission if spec.args.TOOL in WRITE_TOOL_NAMES else "allow",
    )


def write_handlers(vault: Vault, writer: Writer, run: ToolRun) -> dict[str, ToolHandler]:
    """The write tools' handlers for ``run`` (a registry's view runs them instead of those
    :func:`register_vault_tools` registered): each write is held to the version its user
    reviewed, and made for ``run``'s caller."""
    tools = _VaultTools(vault, writer, run)
    return {spec.args.TOOL: _bind(spec, tools) for spec in _SPECS if spec.write is not None}


def store_writer(notes: NoteStore) -> Writer:
    """The note store making planned writes itself (no plugin to ask)."""

    async def write(plan: PlannedWrite, origin: str, caller: Caller) -> WriteResult:
        return await FILES.run(notes.write_planned, plan, audit_origin(origin, caller))

    return write


def plan_tool_call(vault: Vault, call: ToolCall) -> PlannedWrite | None:
    """What a write tool call would write (nothing is written); None for other tools.

    Raises VaultError when the write would be refused (bad path, note exists or is missing).
    """
    write = _WRITES.get(call.name)
    if write is None:
        return None
    return write.plan(vault.notes, write.args.model_validate(call.arguments))


def confirm_title(call: ToolCall, plan: PlannedWrite | None) -> str:
    """The sentence the review shows: "Edit Plan.md: 4 changes", "Create Ideas/Kites.md"."""
    write = _WRITES.get(call.name)
    if write is None or plan is None:
        return f"Allow the assistant to run {call.name}?"
    return write.title(plan, write.args.model_validate(call.arguments))


def kept_arguments(call: ToolCall, plan: PlannedWrite, after: str) -> dict[str, Any]:
    """Arguments for ``call``'s tool that write exactly ``after`` (the text the user kept) over
    the note as planned (ValueError when the tool cannot write that text)."""
    write = _WRITES[call.name]
    kept: ToolArgs = write.kept(plan, write.args.model_validate(call.arguments), after)
    return kept.model_dump(exclude_none=True)


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


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _kept_append(plan: PlannedWrite, args: AppendToNoteArgs, after: str) -> AppendToNoteArgs:
    before = plan.before or ""
    if not after.startswith(before):
        raise ValueError("the kept text does not keep the note's text before the addition")
    added = after[len(before) :]
    if before and not before.endswith("\n"):
        added = added.removeprefix("\n")
    return args.model_copy(update={"content": added})


A = TypeVar("A", bound=ToolArgs)


@dataclass(frozen=True)
class _Write(Generic[A]):
    """How a write tool works out its write, says it in words, and writes kept text instead."""

    args: type[A]
    plan: Callable[[NoteStore, A], PlannedWrite]
    title: Callable[[PlannedWrite, A], str]
    kept: Callable[[PlannedWrite, A, str], A]


_CREATE: Final = _Write(
    CreateNoteArgs,
    plan=lambda notes, args: notes.plan_create(args.path, args.content),
    title=lambda plan, args: f"Create {plan.path}",
    kept=lambda plan, args, after: args.model_copy(update={"content": after}),
)
_APPEND: Final = _Write(
    AppendToNoteArgs,
    plan=lambda notes, args: notes.plan_append(args.path, args.content),
    title=lambda plan, args: f"Append to {plan.path}",
    kept=_kept_append,
)
_EDIT: Final = _Write(
    EditNoteArgs,
    plan=lambda notes, args: notes.plan_edit(
        args.path, [(edit.old_text, edit.new_text) for edit in args.edits]
    ),
    title=lambda plan, args: f"Edit {plan.path}: {_plural(len(args.edits), 'change')}",
    # The whole note as it was reviewed becomes the kept text: the edit fails if it changed.
    kept=lambda plan, args, after: EditNoteArgs(
        path=args.path, edits=[NoteEdit(old_text=plan.before or "", new_text=after)]
    ),
)
_REPLACE: Final = _Write(  # complete_setup (app/turn/setup.py): the context note, whole
    ReplaceNoteArgs,
    plan=lambda notes, args: notes.plan_create(args.path, args.content, overwrite=True),
    title=lambda plan, args: f"{'Create' if plan.before is None else 'Rewrite'} {plan.path}",
    kept=lambda plan, args, after: args.model_copy(update={"content": after}),
)


class _VaultTools:
    """The handlers, each given its tool's typed arguments: reads are sync (the tool registry
    runs them in a worker thread), writes async (their writer may ask Obsidian)."""

    def __init__(self, vault: Vault, writer: Writer, run: ToolRun) -> None:
        self.vault = vault
        self.notes = vault.notes
        self.index = vault.index
        self.writer = writer
        self.run = run

    async def search_notes(self, args: SearchNotesArgs) -> ToolOutput:
        found = await self.vault.search(args.query, args.limit)
        result: dict[str, Any] = {"results": [_hit(h) for h in found.hits]}
        if found.pending:
            result["pending"] = found.pending
            result["note"] = "The index is still being built: results may be incomplete."
        return result

    def read_note(self, args: ReadNoteArgs) -> ToolOutput:
        heading = None
        if is_pdf_name(args.path.strip()):
            if args.heading is not None:
                raise ValueError(PDF_HEADINGS)
            pdf = read_pdf(self.notes, args.path, args.pages)
            note = NoteContent(pdf.path, pdf.content, pdf.hash, False)
        else:
            note = self.notes.read(args.path)
            if args.heading is not None:
                heading, part = section(note.path, note.content, args.heading)
                note = NoteContent(note.path, part, note.hash, note.lossy)
        text, offset = note.content, args.offset
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
        if heading is not None:
            result["heading"] = heading
        if note.lossy:
            result["lossy"] = "some bytes were not UTF-8 and show as U+FFFD; do not rewrite it"
        return result

    def list_notes(self, args: ListNotesArgs) -> ToolOutput:
        found = self.notes.list_notes(args.folder, args.limit + 1)
        result: dict[str, Any] = {"notes": [n.path for n in found[: args.limit]]}
        if len(found) > args.limit:
            result["more"] = True
        return result

    def get_backlinks(self, args: GetBacklinksArgs) -> ToolOutput:
        path = self.notes.info(args.path).path
        return {"path": path, "backlinks": self.index.backlinks(path)}

    async def related_notes(self, args: RelatedNotesArgs) -> ToolOutput:
        if self.vault.semantic is None:
            raise ValueError("related_notes needs semantic search, and no embedder is configured.")
        found = await self.vault.related(args.path, args.limit)
        if not found.ready:
            return {
                "path": found.path,
                "related": [],
                "pending": "the note vectors are being computed",
            }
        return {
            "path": found.path,
            "related": [
                {"path": r.path, "title": r.title, "linked": r.links_to or r.linked_from}
                for r in found.notes
            ],
        }

    async def write(self, write: _Write[A], args: A) -> ToolOutput:
        plan = await self.vault.run(write.plan, self.notes, args)
        _check_expected(plan, getattr(args, "expected_hash", None))
        self.run.check_reviewed(plan)
        written = await self.writer(plan, "model", self.run.caller)
        return {"path": written.path, "hash": written.hash}


def _hit(hit: NoteHit) -> dict[str, Any]:
    """A search result for the model: found by vectors, its best chunk (bounded) instead of a
    snippet, so the answer can often come without reading the whole note."""
    item: dict[str, Any] = {"path": hit.path, "title": hit.title}
    if hit.page is not None:  # cite it as the link, so the user lands on that page
        item["page"] = hit.page
        item["link"] = f"[[{hit.path}#page={hit.page}]]"
    if hit.heading:  # read_note reads just that part with heading=
        item["heading"] = hit.heading
    if hit.chunks:
        item["excerpt"] = hit.chunks[0].text[:EXCERPT_CHARS]
    else:
        item["snippet"] = hit.snippet
    return item


@dataclass(frozen=True)
class _Spec:
    """A vault tool: its typed arguments (name and schema come from them), what it tells the
    model, and how it runs."""

    args: type[ToolArgs]
    description: str
    write: _Write[Any] | None = None


def _bind(spec: _Spec, tools: _VaultTools) -> ToolHandler:
    """The registry's handler for ``spec``: the arguments (already checked against the schema)
    as the tool's model, then its method (or its write)."""
    if spec.write is not None:
        write = spec.write

        async def writing(args: dict[str, Any]) -> ToolOutput:
            return await tools.write(write, write.args.model_validate(args))

        return writing
    run = getattr(tools, spec.args.TOOL)
    if inspect.iscoroutinefunction(run):

        async def reading_async(args: dict[str, Any]) -> ToolOutput:
            result: ToolOutput = await run(spec.args.model_validate(args))
            return result

        return reading_async

    def reading(args: dict[str, Any]) -> ToolOutput:
        result: ToolOutput = run(spec.args.model_validate(args))
        return result

    return reading


_SPECS: Final = (
    _Spec(
        SearchNotesArgs,
        "Search the user's notes, best matches first: full-text (title matches rank highest), "
        "and by meaning when semantic search is set up. Returns each match's path, title, the "
        "heading it is under (read just that part with read_note's heading) or a PDF's page, "
        "and a snippet with the matched words in **bold** or the best matching section as an "
        "excerpt. Read a note in full with read_note.\n"
        'Words rank (most first; word forms and typos too); "exact phrase", prefix*, +required.\n'
        "Obsidian's operators narrow: -word, a OR b, (groups), file:name, path:Folder, tag:#x, "
        "content:word, [property], [property:value], line:(a b), section:(a b); filters alone "
        "list the notes they match.",
    ),
    _Spec(
        ReadNoteArgs,
        "Read one note: returns its path, hash and content (Markdown; .canvas and .base files "
        "as their JSON/YAML text; a PDF as its text, each page after a '--- page N of M ---' "
        "line, and `pages` reads part of it, e.g. '3-5'; `heading` reads one part of a note, "
        "e.g. 'Setup > Linux'). Long notes come in parts of "
        f"{READ_LIMIT_CHARS} characters "
        "ending with a marker that says how much is left and which offset reads on.",
    ),
    _Spec(
        ListNotesArgs,
        "List the paths of the notes in a folder and all its subfolders, sorted by path; "
        '"more": true means there are more than limit.',
    ),
    _Spec(
        GetBacklinksArgs,
        "List the paths of the notes that link to a note with [[wikilinks]] or ![[embeds]].",
    ),
    _Spec(
        CreateNoteArgs,
        "Create a new Markdown note; missing folders are created. Never overwrites: if a note "
        "exists at the path this fails, so pick another path or use append_to_note. The user "
        "may be asked to approve. Returns the path and hash.",
        _CREATE,
    ),
    _Spec(
        AppendToNoteArgs,
        "Add Markdown at the end of an existing .md note, on a new line; the text already in the "
        "note is kept as it is. The user may be asked to approve. Returns the path and hash.",
        _APPEND,
    ),
    _Spec(
        EditNoteArgs,
        "Change parts of an existing .md note with search-and-replace edits, applied in order. "
        "Each old_text must be copied exactly from the note (read it first) and occur exactly "
        "once; include a few surrounding words to make it unique. The rest of the note is kept "
        "as it is. The user may be asked to approve. Returns the path and hash.",
        _EDIT,
    ),
)
_RELATED_SPEC: Final = _Spec(
    RelatedNotesArgs,
    "List the notes closest in meaning to one note (not itself), best first, each with its "
    "path, title and whether the two already link. Use it to suggest links or find notes on the "
    "same subject worded differently.",
)

VAULT_TOOL_NAMES: Final[tuple[str, ...]] = tuple(spec.args.TOOL for spec in _SPECS)
"""The tools every registry gets; related_notes (:data:`RELATED_TOOL`) comes on top with an
embedder."""
WRITE_TOOL_NAMES: Final = frozenset(spec.args.TOOL for spec in _SPECS if spec.write)
TOOL_ARGS: Final[tuple[type[ToolArgs], ...]] = (
    *(spec.args for spec in _SPECS),
    RelatedNotesArgs,
    CompleteSetupArgs,
)
"""Every tool's arguments (the vault tools, related_notes and complete_setup): what the
schema exports."""
WRITE_TOOLS: Final[tuple[str, ...]] = (*sorted(WRITE_TOOL_NAMES), CompleteSetupArgs.TOOL)
"""Every tool that writes a note; the user reviews each call (``tool/confirm``)."""
_WRITES: Final[dict[str, _Write[Any]]] = {
    **{spec.args.TOOL: spec.write for spec in _SPECS if spec.write},
    "complete_setup": _REPLACE,
}
