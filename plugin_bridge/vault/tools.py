"""The vault tools a model may call, and their registration on an LLMService or ToolRegistry.

Reads run freely; writes go through the safe note store and, by default, ask the user first.
A refused operation raises VaultError, whose sentence the model reads as an error result.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, Protocol

from llm_service import ToolCall
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.vault.vault import Vault

Permission = Literal["allow", "ask", "deny"]
READ_LIMIT_CHARS = 20_000
VAULT_TOOL_NAMES = (
    "search_notes",
    "read_note",
    "list_notes",
    "get_backlinks",
    "create_note",
    "append_to_note",
)
WRITE_TOOLS = frozenset({"create_note", "append_to_note"})

_PATH = {
    "type": "string",
    "minLength": 1,
    "description": "Note path relative to the vault root, with extension, e.g. 'Projects/Plan.md'.",
}
_LIMIT = {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}


def _schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


class ToolTarget(Protocol):
    """Anything tools can be registered on: LLMService or llm_service.tools.ToolRegistry."""

    def register_tool(
        self,
        name: str,
        description: str,
        input_schema: dict[str, Any],
        handler: Callable[[dict[str, Any]], Any],
        *,
        permission: Permission = "allow",
        timeout: float = 30.0,
    ) -> None: ...


def register_vault_tools(
    target: ToolTarget, vault: Vault, *, write_permission: Permission = "ask"
) -> list[str]:
    """Register the six vault tools on ``target``; returns their names."""
    notes, index = vault.notes, vault.index

    def search_notes(args: dict[str, Any]) -> dict[str, Any]:
        found = index.search(args["query"], args.get("limit", 10))
        result: dict[str, Any] = {
            "results": [
                {"path": h.path, "title": h.title, "snippet": h.snippet} for h in found.hits
            ]
        }
        if found.pending:
            result["stillIndexing"] = found.pending
        return result

    def read_note(args: dict[str, Any]) -> dict[str, Any]:
        note = notes.read(args["path"])
        content = note.content
        if len(content) > READ_LIMIT_CHARS:
            cut = len(content) - READ_LIMIT_CHARS
            content = (
                content[:READ_LIMIT_CHARS]
                + f"\n\n[… truncated: {cut} more characters of this note are not shown.]"
            )
        return {"path": note.path, "hash": note.hash, "content": content}

    def list_notes(args: dict[str, Any]) -> dict[str, Any]:
        found = notes.list_notes(args.get("folder", ""), args.get("limit", 10))
        return {"notes": [n.path for n in found]}

    def get_backlinks(args: dict[str, Any]) -> dict[str, Any]:
        notes.read(args["path"])  # not_found / forbidden_path for the model to see
        return {"path": args["path"], "backlinks": index.backlinks(args["path"])}

    def create_note(args: dict[str, Any]) -> dict[str, Any]:
        written = notes.create(args["path"], args["content"], origin="model")
        return {"path": written.path, "hash": written.hash, "created": True}

    def append_to_note(args: dict[str, Any]) -> dict[str, Any]:
        written = notes.append(args["path"], args["content"], origin="model")
        return {"path": written.path, "hash": written.hash}

    register = target.register_tool
    register(
        "search_notes",
        "Full-text search over the user's notes. Returns the best matches with a snippet. "
        'Syntax: words (all must match), "exact phrase", prefix*, tag:name, path:Folder.',
        _schema({"query": {"type": "string", "minLength": 1}, "limit": _LIMIT}, ["query"]),
        search_notes,
    )
    register(
        "read_note",
        "Read one note's Markdown content (very long notes are truncated with a marker).",
        _schema({"path": _PATH}, ["path"]),
        read_note,
    )
    register(
        "list_notes",
        "List note paths in a folder and its subfolders ('' for the whole vault).",
        _schema({"folder": {"type": "string", "default": ""}, "limit": _LIMIT}, []),
        list_notes,
    )
    register(
        "get_backlinks",
        "List the notes that link to this note with [[wikilinks]].",
        _schema({"path": _PATH}, ["path"]),
        get_backlinks,
    )
    register(
        "create_note",
        "Create a new Markdown note. Fails if the path exists; never overwrites.",
        _schema({"path": _PATH, "content": {"type": "string"}}, ["path", "content"]),
        create_note,
        permission=write_permission,
    )
    register(
        "append_to_note",
        "Append Markdown to the end of an existing note.",
        _schema(
            {"path": _PATH, "content": {"type": "string", "minLength": 1}}, ["path", "content"]
        ),
        append_to_note,
        permission=write_permission,
    )
    return list(VAULT_TOOL_NAMES)


def preview_tool_call(vault: Vault, call: ToolCall) -> str | None:
    """A unified diff of what a write tool call would change; None for read-only tools."""
    if call.name not in WRITE_TOOLS:
        return None
    path = str(call.arguments.get("path", ""))
    content = str(call.arguments.get("content", ""))
    try:
        if call.name == "append_to_note":
            current = vault.notes.read(path).content.replace("\r\n", "\n")
            separator = "" if not current or current.endswith("\n") else "\n"
            content = current + separator + content
        return vault.notes.preview_write(path, content)
    except VaultError as exc:
        return f"(no preview: {exc})"
