"""Tool methods: tools/list (in a provider's format) and tools/execute (no model needed), over
the :class:`~plugin_bridge.app.tools.Tools` the access policy gives the caller."""

from __future__ import annotations

from typing import Any

from plugin_bridge.app.tools import DEFAULT_FORMAT
from plugin_bridge.handlers.context import AppRouter, Context, caller_of
from plugin_bridge.wire.models import (
    TOOLS_EXECUTE,
    TOOLS_LIST,
    ToolsExecuteParams,
    ToolsExecuteResult,
    ToolsListParams,
    ToolsListResult,
)


async def list_tools(ctx: Context, params: ToolsListParams) -> ToolsListResult:
    """The vault tools the caller may run, in the given provider's tool format."""
    app = ctx.app
    tool_format = params.format or app.providers.name or DEFAULT_FORMAT
    tools = app.access.for_client(ctx.peer, caller_of(ctx))
    return ToolsListResult(tools=tools.listed(tool_format))


async def execute(ctx: Context, params: ToolsExecuteParams) -> ToolsExecuteResult:
    """Run the calls with the app's tools (see :meth:`Tools.run`)."""
    calls: list[tuple[str, dict[str, Any] | str]] = [
        (item.name, dict(item.arguments)) for item in params.calls
    ]
    tools = ctx.app.access.for_client(ctx.peer, caller_of(ctx))
    return await tools.run(calls, id_prefix=f"execute-{ctx.request_id}")


def register(router: AppRouter) -> None:
    router.register(TOOLS_LIST, list_tools)
    router.register(TOOLS_EXECUTE, execute)
