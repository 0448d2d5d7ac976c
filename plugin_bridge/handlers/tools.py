"""Tool methods: tools/list (in a provider's format) and tools/execute (no model needed), over
the app's :class:`~plugin_bridge.app.tools.Tools`."""

from __future__ import annotations

from typing import Any

from plugin_bridge.app.tools import DEFAULT_FORMAT, Tools
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
    return ToolsListResult(tools=Tools(app.tools).listed(tool_format, caller=caller_of(ctx)))


async def execute(ctx: Context, params: ToolsExecuteParams) -> ToolsExecuteResult:
    """Run the calls with the app's tools (see :meth:`Tools.run`)."""
    calls: list[tuple[str, dict[str, Any] | str]] = [
        (item.name, dict(item.arguments)) for item in params.calls
    ]
    return await Tools(ctx.app.tools).run(
        calls, caller=caller_of(ctx), id_prefix=f"execute-{ctx.request_id}", denied=ctx.denied
    )


def register(router: AppRouter) -> None:
    router.register(TOOLS_LIST, list_tools)
    router.register(TOOLS_EXECUTE, execute)
