"""Tool methods: tools/list (in a provider's format) and tools/execute (no model needed).

:func:`formatted_tools`, :func:`check_calls` and :func:`run_checked` also serve the HTTP API's
local-model routes
(``/api/local-llm/tools`` and ``/api/local-llm/execute-tools``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from llm_service import ToolCall
from llm_service.factory import provider_class as of_provider
from llm_service.providers.common import strict_function_tool
from plugin_bridge.app.clients import check_tools
from plugin_bridge.handlers.context import AppRouter, Context, caller_of
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
    from llm_service import Provider, ToolSpec
    from llm_service.tools import ToolRegistry

DEFAULT_FORMAT: ToolFormat = "anthropic"


def provider_class(name: ToolFormat) -> type[Provider]:
    """The provider class whose ``format_tool`` speaks ``name``'s format (no SDK import)."""
    if name == "lmstudio" or name == "vllm":
        return of_provider("openai")
    return of_provider(name)


def formatted_tools(tool_format: ToolFormat, specs: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """``specs`` in ``tool_format``: LM Studio's is OpenAI's with ``"strict": true`` and
    schemas that satisfy strict mode (optional arguments nullable)."""
    if tool_format == "lmstudio":
        return [strict_function_tool(spec) for spec in specs]
    cls = provider_class(tool_format)
    return [cls.format_tool(spec) for spec in specs]


async def list_tools(ctx: Context, params: ToolsListParams) -> ToolsListResult:
    """The vault tools, in the given provider's tool format."""
    app = ctx.app
    tool_format = params.format or app.providers.name or DEFAULT_FORMAT
    return ToolsListResult(tools=formatted_tools(tool_format, app.tools.tool_specs()))


async def execute(ctx: Context, params: ToolsExecuteParams) -> ToolsExecuteResult:
    """Run the calls (see :func:`run_calls`) with the app's tools."""
    calls: list[tuple[str, dict[str, Any] | str]] = [
        (item.name, dict(item.arguments)) for item in params.calls
    ]
    check_tools(caller_of(ctx), (name for name, _ in calls), ctx.app.tools)
    return await run_calls(ctx.app.tools, calls, f"execute-{ctx.request_id}", ctx.denied)


async def run_calls(
    registry: ToolRegistry,
    calls: Sequence[tuple[str, dict[str, Any] | str]],
    id_prefix: str,
    denied: set[str],
) -> ToolsExecuteResult:
    """Validate every ``(name, arguments)`` call (:func:`check_calls`), then run the valid ones
    in order under their permissions (:func:`run_checked`)."""
    runnable, invalid = check_calls(registry, calls, id_prefix)
    results = await run_checked(registry, runnable, denied)
    return ToolsExecuteResult(results=results, invalid_calls=invalid)


Runnable = list[tuple[int, ToolCall]]
"""The valid calls, each with its index among the calls given."""


def check_calls(
    registry: ToolRegistry, calls: Sequence[tuple[str, dict[str, Any] | str]], id_prefix: str
) -> tuple[Runnable, list[InvalidCall]]:
    """The calls that may run and the invalid ones. ``arguments`` may instead be why the
    client's arguments could not be read (an invalid call). Nulls for optional arguments count
    as not given (the registry's one rule, :func:`llm_service.tools.without_null_optionals`)."""
    invalid: list[InvalidCall] = []
    runnable: Runnable = []
    for index, (name, arguments) in enumerate(calls):
        if isinstance(arguments, str):
            invalid.append(InvalidCall(index=index, name=name, reason=arguments))
            continue
        call = ToolCall(f"{id_prefix}-{index}", name, arguments)
        reason = registry.validate_tool_call(call)
        if reason is None:
            runnable.append((index, call))
        else:
            invalid.append(InvalidCall(index=index, name=name, reason=reason))
    return runnable, invalid


async def run_checked(
    registry: ToolRegistry, runnable: Runnable, denied: set[str]
) -> list[ToolExecution]:
    """Run the valid calls in order, one result each. A call that is not approved (permission
    "deny", or "ask" answered no / not answered: its id lands in ``denied``) stops the run with
    -32030; its data carries the results of the calls that ran before it."""
    results: list[ToolExecution] = []
    for index, call in runnable:
        block = await registry.run_tool_call(call)
        if call.id in denied or registry.permission(call.name) == "deny":
            raise ToolDeniedError(index, call.name, [dump(result) for result in results])
        results.append(
            ToolExecution(name=call.name, is_error=block.is_error, content=block.content)
        )
    return results


def register(router: AppRouter) -> None:
    router.register("tools/list", ToolsListParams, list_tools)
    router.register("tools/execute", ToolsExecuteParams, execute)
