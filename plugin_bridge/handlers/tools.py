"""Tool methods: tools/list (in a provider's format) and tools/execute (no model needed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from llm_service import ToolCall
from plugin_bridge.handlers.context import AppRouter, Context
from plugin_bridge.wire.errors import ToolDeniedError
from plugin_bridge.wire.models import (
    InvalidCall,
    ToolExecution,
    ToolsExecuteParams,
    ToolsExecuteResult,
    ToolsListParams,
    ToolsListResult,
    dump,
)
from plugin_bridge.wire.models.base import ToolFormat

if TYPE_CHECKING:
    from llm_service import Provider

DEFAULT_FORMAT: ToolFormat = "anthropic"


def provider_class(name: ToolFormat) -> type[Provider]:
    """The provider class whose ``format_tool`` speaks ``name``'s format (no SDK import)."""
    from llm_service.factory import provider_class as of_provider

    if name == "lmstudio" or name == "vllm":
        return of_provider("openai")
    return of_provider(name)


async def list_tools(ctx: Context, params: ToolsListParams) -> ToolsListResult:
    """The vault tools, in the given provider's tool format."""
    app = ctx.app
    cls = provider_class(params.format or app.providers.name or DEFAULT_FORMAT)
    return ToolsListResult(tools=[cls.format_tool(spec) for spec in app.tools.tool_specs()])


async def execute(ctx: Context, params: ToolsExecuteParams) -> ToolsExecuteResult:
    """Validate every call, then run the valid ones in order under their permissions.

    A call that is not approved (permission "deny", or "ask" answered no / not answered) stops
    the run with -32030; its data carries the results of the calls that ran before it.
    """
    registry = ctx.app.tools
    invalid: list[InvalidCall] = []
    runnable: list[tuple[int, ToolCall]] = []
    for index, item in enumerate(params.calls):
        call = ToolCall(f"execute-{ctx.request_id}-{index}", item.name, dict(item.arguments))
        reason = registry.validate_tool_call(call)
        if reason is None:
            runnable.append((index, call))
        else:
            invalid.append(InvalidCall(index=index, name=item.name, reason=reason))
    results: list[ToolExecution] = []
    for index, call in runnable:
        block = await registry.run_tool_call(call)
        if call.id in ctx.denied or registry.permission(call.name) == "deny":
            raise ToolDeniedError(index, call.name, [dump(result) for result in results])
        results.append(
            ToolExecution(name=call.name, is_error=block.is_error, content=block.content)
        )
    return ToolsExecuteResult(results=results, invalid_calls=invalid)


def register(router: AppRouter) -> None:
    router.register("tools/list", ToolsListParams, list_tools)
    router.register("tools/execute", ToolsExecuteParams, execute)
