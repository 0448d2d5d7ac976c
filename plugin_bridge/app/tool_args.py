"""The vault tools' arguments as pydantic models: each tool's JSON Schema is derived from its
model (as MCP's ``Tool.from_function`` derives one from a signature), its handler receives the
model, and ``make schema`` exports the models (the plugin's generated types name them).

The schemas the model sees are plain and closed: no titles, nested objects inline (no ``$ref``),
``additionalProperties: false``, a description on every field.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

from pydantic import BaseModel, ConfigDict, Field

from plugin_bridge.wire.models.vault import PAGES_PATTERN

DEFAULT_LIMIT: Final = 10
MAX_TOOL_LIMIT: Final = 50
READ_LIMIT_CHARS: Final = 20_000
"""read_note returns at most this many characters per call."""
MAX_NOTE_CHARS: Final = 8_000
"""complete_setup writes at most this much: the context note's share of every request
(longer would be cut there)."""


def _path(kinds: str) -> Any:
    return Field(
        min_length=1,
        max_length=1000,
        description=f"Path of the note relative to the vault root, with '/' between folders "
        f"and the {kinds} extension, e.g. 'Projects/Kafka.md'.",
    )


def _limit() -> Any:
    return Field(
        DEFAULT_LIMIT,
        ge=1,
        le=MAX_TOOL_LIMIT,
        description=f"How many results at most (1-{MAX_TOOL_LIMIT}, default {DEFAULT_LIMIT}).",
    )


class ToolArgs(BaseModel):
    """Base of a tool's arguments: unknown fields refused; :meth:`input_schema` is what the
    model is given."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    TOOL: ClassVar[str]
    """The tool these are the arguments of."""

    @classmethod
    def input_schema(cls) -> dict[str, Any]:
        """The tool's JSON Schema: this model's, without titles and with nested models inline."""
        schema = cls.model_json_schema()
        definitions = schema.pop("$defs", {})
        plain: dict[str, Any] = _plain(schema, definitions)
        plain.setdefault("required", [])  # pydantic leaves it out when every field has a default
        return plain


def _plain(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_plain(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _plain(definitions[node["$ref"].rsplit("/", 1)[-1]], definitions)
    variants = node.get("anyOf", [])
    if node.get("default", ...) is None and {"type": "null"} in variants:
        # ``X | None = None``: optional by not being required, so the schema says only X
        (given,) = [v for v in variants if v != {"type": "null"}]
        rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
        return _plain({**given, **rest}, definitions)
    plain: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key == "properties":  # field names, never schema keywords
            plain[key] = {name: _plain(prop, definitions) for name, prop in value.items()}
        else:
            plain[key] = _plain(value, definitions)
    return plain


class SearchNotesArgs(ToolArgs):
    TOOL: ClassVar[str] = "search_notes"
    query: str = Field(
        min_length=1,
        max_length=500,
        description="Words or a question, with Obsidian's search operators, e.g. "
        "'kafka retention tag:#work -draft'.",
    )
    limit: int = _limit()


class ReadNoteArgs(ToolArgs):
    TOOL: ClassVar[str] = "read_note"
    path: str = _path(".md, .canvas, .base or .pdf")
    offset: int = Field(
        0, ge=0, description="Character to start from, for the rest of a long note."
    )
    pages: str | None = Field(
        None,
        max_length=40,
        pattern=PAGES_PATTERN,
        description='A PDF\'s pages, 1-based and inclusive: "3-5", "4" or "7-"; default all.',
    )
    heading: str | None = Field(
        None,
        max_length=1000,
        description="Read only the part under this heading: a search result's heading path "
        "('Setup > Linux') or the heading's own text.",
    )


class ListNotesArgs(ToolArgs):
    TOOL: ClassVar[str] = "list_notes"
    folder: str = Field(
        "",
        max_length=1000,
        description="Folder relative to the vault root, e.g. 'Projects' or 'Projects/2024'; "
        "'' (the default) for the whole vault.",
    )
    limit: int = _limit()


class GetBacklinksArgs(ToolArgs):
    TOOL: ClassVar[str] = "get_backlinks"
    path: str = _path(".md, .canvas or .base")


class CreateNoteArgs(ToolArgs):
    TOOL: ClassVar[str] = "create_note"
    path: str = _path(".md")
    content: str = Field(description="The note's Markdown text.")


def _expected_hash() -> Any:
    return Field(
        None,
        pattern="^[0-9a-f]{64}$",
        description="Optional: the hash read_note returned; the write is refused if the note "
        "changed since, so read it again.",
    )


class AppendToNoteArgs(ToolArgs):
    TOOL: ClassVar[str] = "append_to_note"
    path: str = _path(".md")
    content: str = Field(min_length=1, description="Markdown to add.")
    expected_hash: str | None = _expected_hash()


class NoteEdit(BaseModel):
    """One search-and-replace edit of edit_note."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    old_text: str = Field(min_length=1, description="Text now in the note, exactly once.")
    new_text: str = Field(description="What replaces it ('' deletes it).")


class EditNoteArgs(ToolArgs):
    TOOL: ClassVar[str] = "edit_note"
    path: str = _path(".md")
    edits: list[NoteEdit] = Field(
        min_length=1, max_length=20, description="The replacements, applied one after another."
    )
    expected_hash: str | None = _expected_hash()


class RelatedNotesArgs(ToolArgs):
    TOOL: ClassVar[str] = "related_notes"
    path: str = _path(".md")
    limit: int = _limit()


class CompleteSetupArgs(ToolArgs):
    TOOL: ClassVar[str] = "complete_setup"
    content: str = Field(
        min_length=1, max_length=MAX_NOTE_CHARS, description="The whole note, in Markdown."
    )


class ReplaceNoteArgs(ToolArgs):
    """complete_setup as the review shows it: the context note's path added."""

    TOOL: ClassVar[str] = "complete_setup"
    path: str = _path(".md")
    content: str = Field(description="The whole note, in Markdown.")


class SaveNoteArgs(ToolArgs):
    """command/createNote's answer: the note the model wrote (a forced tool call where the
    provider can force one, else a JSON answer of this schema)."""

    TOOL: ClassVar[str] = "save_note"
    title: str = Field(
        description="Short note title, e.g. Kafka basics; it becomes the file name, so no "
        "extension and no folder.",
    )
    content: str = Field(description="The note body in Markdown, without the title as a heading.")
