"""The vault as an MCP server, on the official SDK's low-level ``Server``: the tools, notes
(resources, :mod:`plugin_bridge.mcp.resources`) and custom prompts
(:mod:`plugin_bridge.mcp.prompts`) of a :class:`~plugin_bridge.mcp.tools.VaultTools`, over stdio
(``obsidian-ai-bridge mcp``) or over streamable HTTP (:class:`plugin_bridge.mcp.McpHttpApp`, at
``/mcp`` on the HTTP listener).

Results are the vault tools' own: JSON text (also given as ``structuredContent``), ``isError``
for a refused call with the one sentence that says why.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

import mcp_types as types
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from plugin_bridge import DISTRIBUTION, __version__
from plugin_bridge.app.clients import CALLER, OWNER, Caller
from plugin_bridge.app.vault_tools import WRITE_TOOL_NAMES
from plugin_bridge.mcp.prompts import mcp_prompt, prompt_messages
from plugin_bridge.mcp.resources import (
    ListChanges,
    NoteFollower,
    mime_type,
    note_path,
    resource,
)
from plugin_bridge.mcp.tools import Outcome, VaultTools

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext
    from mcp.server.models import InitializationOptions
    from starlette.types import Scope

    from llm_service.messages import ToolSpec

DESTRUCTIVE: Final = frozenset({"edit_note"})
"""Writes that change text already in a note (undoable with note/undo, but not additive)."""


def build_server(tools: VaultTools, vault_name: str, *, stateless: bool = False) -> Server[Any]:
    """An MCP server offering ``tools`` (list and call), the notes as resources (listed, read,
    followed) and the custom prompts, for the vault named ``vault_name``. ``stateless`` (``/mcp``):
    its connections cannot carry notifications, so handshake-era clients are offered no
    ``resources/subscribe`` (they follow notes with ``subscriptions/listen``)."""
    follower = NoteFollower(
        tools.root, changes=getattr(tools, "changes", None), client_of=client_name
    )
    changes = ListChanges(follower.listen.bus)
    tools.on_list_changed(changes.changed)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        try:
            specs = await tools.list_tools(caller_of(ctx))
        except ConnectionError as exc:  # forwarding, and the vault's server went away
            raise MCPError(
                types.INTERNAL_ERROR,
                f"Lost the bridge server for this vault ({exc}): restart the MCP client.",
            ) from exc
        return types.ListToolsResult(tools=[mcp_tool(spec) for spec in specs])

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        return call_result(await tools.call_tool(params.name, arguments, caller_of(ctx)))

    async def list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        try:
            page = await tools.notes_page(params.cursor if params is not None else None)
        except ValueError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from exc
        changes.listed(ctx.session)
        return types.ListResourcesResult(
            resources=[resource(note) for note in page.notes], next_cursor=page.next_cursor
        )

    async def list_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=[NOTE_TEMPLATE])

    async def read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            path, text = await tools.read_text(note_path(uri))
        except ValueError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from exc
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=mime_type(path), text=text)]
        )

    async def list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[mcp_prompt(p) for p in await tools.prompts()])

    async def get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        found = [prompt for prompt in await tools.prompts() if prompt.name == params.name]
        if not found:
            raise MCPError(
                types.INVALID_PARAMS,
                f"There is no prompt {params.name!r}: prompts/list names them.",
            )
        return await prompt_messages(found[0], params.arguments or {}, tools.read_text)

    writes = " Writes are atomic, logged and undoable." if tools.allow_writes else ""
    return Server(
        DISTRIBUTION,
        version=__version__,
        instructions=f"Search, read and list the notes of the Obsidian vault “{vault_name}”."
        + writes,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=None if stateless else follower.subscribe,
        on_unsubscribe_resource=None if stateless else follower.unsubscribe,
        on_subscriptions_listen=follower.listen,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


NOTE_TEMPLATE: Final = types.ResourceTemplate(
    name="note",
    uri_template="note://{path}",
    description="A note of the vault, whole, by its path: note://Projects/Kafka%20pipeline.md",
    mime_type="text/markdown",
)


def owned(scope: Scope) -> None:
    """Mark an HTTP request with its caller as the SDK's SSE transport reads a credential's
    owner, so a connection's messages are taken only with the key (or token) that opened it."""
    caller = scope.get(CALLER)
    if isinstance(caller, Caller):
        token = AccessToken(token="", client_id=caller.label, scopes=[caller.scope])
        scope["user"] = AuthenticatedUser(token)


def client_name(ctx: ServerRequestContext[Any]) -> str:
    """The client a request counts against: its key's name, or the owner (stdio, the info
    file's token)."""
    caller = caller_of(ctx)
    return caller.label if caller is not None else OWNER


def caller_of(ctx: ServerRequestContext[Any]) -> Caller | None:
    """Who is behind an HTTP session's request (its key's caller); None for stdio's session,
    the user's own."""
    request = getattr(ctx, "request", None)
    caller = getattr(request, "scope", {}).get(CALLER)
    return caller if isinstance(caller, Caller) else None


def mcp_tool(spec: ToolSpec) -> types.Tool:
    """A vault tool as MCP lists it: its schema as it is, with hints for clients' approvals."""
    write = spec.name in WRITE_TOOL_NAMES
    return types.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=dict(spec.input_schema),
        annotations=types.ToolAnnotations(
            read_only_hint=not write,
            destructive_hint=spec.name in DESTRUCTIVE,
            idempotent_hint=not write,
            open_world_hint=False,
        ),
    )


def call_result(outcome: Outcome) -> types.CallToolResult:
    structured: dict[str, Any] | None = None
    if not outcome.is_error and outcome.content.startswith("{"):
        try:
            structured = json.loads(outcome.content)
        except ValueError:
            structured = None
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=outcome.content)],
        structured_content=structured,
        is_error=outcome.is_error,
    )


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one MCP client on this process's stdin and stdout until stdin closes. While it
    runs, file descriptor 1 points at stderr, so nothing else can write into the channel."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, initialization_options(server))


def initialization_options(server: Server[Any]) -> InitializationOptions:
    """What a connection that can carry notifications declares: the resource list changes
    (``notifications/resources/list_changed``) besides ``subscribe``."""
    return server.create_initialization_options(NotificationOptions(resources_changed=True))
