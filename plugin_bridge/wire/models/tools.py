"""Wire models of the tools: tools/list, tools/execute and the tool/confirm server request.

Same rules as :mod:`plugin_bridge.wire.models.base`: camelCase on the wire, params strict.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import Field

from plugin_bridge.wire.models.base import (
    ClientRequest,
    Params,
    ServerRequest,
    ToolFormat,
    WireModel,
)


class ToolsListParams(Params):
    format: ToolFormat | None = Field(
        None,
        description=(
            "Tool format; lmstudio and vllm are OpenAI's; default: the configured provider's, "
            "else anthropic."
        ),
    )


class ToolsListResult(WireModel):
    tools: list[dict[str, Any]]


class ToolCallParams(Params):
    name: str = Field(max_length=100)
    arguments: dict[str, Any] = Field(default_factory=dict)


class ToolsExecuteParams(Params):
    calls: list[ToolCallParams] = Field(min_length=1, max_length=32)


class ToolExecution(WireModel):
    name: str
    is_error: bool
    content: str


class InvalidCall(WireModel):
    index: int
    name: str
    reason: str


class ToolsExecuteResult(WireModel):
    results: list[ToolExecution]
    invalid_calls: list[InvalidCall]


class FileChange(WireModel):
    path: str = Field(description="Vault-relative path of the note the write changes.")
    before: str | None = Field(description="The note's text now; null for a new note.")
    after: str = Field(description="The note's text once written.")


class KeptChange(WireModel):
    path: str
    after: str = Field(description="The text the user kept (some of the hunks of before → after).")


class ToolConfirmParams(WireModel):
    tool: str = Field(description="The tool as the model called it; NAME__tool for an MCP one.")
    server: str | None = Field(
        None, description="The MCP server ([mcp.servers.NAME]) of the tool; null: a vault tool."
    )
    arguments: dict[str, Any]
    title: str = Field(
        description='What the call does, in words: "Edit Plan.md: 4 changes", "Create Kites.md".'
    )
    call_id: str | None = Field(None, description="The id of the call in chat/toolCall.")
    changes: list[FileChange] | None = Field(
        None, description="For writes: each note the call changes, before and after (the server's)."
    )
    preview: str | None = Field(None, description="Unified diff of a write, when known.")


class ToolConfirmResult(WireModel):
    approved: bool
    changes: list[KeptChange] | None = Field(
        None,
        description=(
            "With approved: write exactly these texts instead (the user kept only some hunks); "
            "each is written only while its note still has the change's before."
        ),
    )
    arguments: dict[str, Any] | None = Field(
        None,
        description=(
            "With approved: run the call with these arguments instead; checked against the "
            "tool's schema like any call."
        ),
    )


TOOL_CONFIRM: Final = ServerRequest("tool/confirm", ToolConfirmParams, ToolConfirmResult)
"""May the assistant run this tool (a write shows its change)?"""


TOOLS_LIST: Final = ClientRequest("tools/list", ToolsListParams, ToolsListResult)
TOOLS_EXECUTE: Final = ClientRequest("tools/execute", ToolsExecuteParams, ToolsExecuteResult)
