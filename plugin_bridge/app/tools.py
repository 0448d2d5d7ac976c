"""The tools as clients run them without a model: :meth:`Tools.run` checks a batch of calls
(the run's caller's scope, each call's arguments) and runs the valid ones in order under their
permissions; :meth:`Tools.listed` gives the tool list in a provider's format.

Every transport runs tools through here, each with the tools the access policy hands it
(:class:`~plugin_bridge.app.access.ToolAccess`): ``tools/execute`` and ``tools/list`` on the
WebSocket, ``/api/local-llm/execute-tools`` and ``/api/local-llm/tools`` over HTTP, and MCP's
``tools/call`` (:mod:`plugin_bridge.mcp.tools`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from llm_service import ToolCall
from llm_service.factory import provider_class as of_provider
from llm_service.providers.common import strict_function_tool
from plugin_bridge.app.vault_tools import WRITE_TOOLS, ToolRun
from plugin_bridge.wire.errors import ToolDeniedError
from plugin_bridge.wire.models import InvalidCall, ToolExecution, ToolsExecuteResult, dump
from plugin_bridge.wire.models.base import ToolFormat

if TYPE_CHECKING:
    from llm_service import Provider, ToolSpec
    from llm_service.tools import ToolRegistry
    from plugin_bridge.app.clients import Caller

DEFAULT_FORMAT: ToolFormat = "anthropic"
Call = tuple[str, dict[str, Any] | str]
"""A call as a client gives it: the tool's name and its arguments, or why the client's
arguments could not be read (then it is an invalid call)."""
Runnable = list[tuple[int, ToolCall]]
"""The valid calls, each with its index among the calls given."""


class ToolsDenied(ToolDeniedError):
    """A run stopped at a call that was not approved (-32030); ``ran``: the indices, among the
    calls given, of those that ran before it (their results are in the error's data)."""

    def __init__(self, index: int, name: str, results: list[dict[str, Any]], ran: list[int]):
        super().__init__(index, name, results)
        self.ran = ran


class Tools:
    """The calls of one run (:class:`ToolRun`: whose they are) over a registry bound to it."""

    def __init__(self, registry: ToolRegistry, run: ToolRun) -> None:
        self.registry = registry
        self.tool_run = run

    def listed(
        self, tool_format: ToolFormat, *, runnable_only: bool = False
    ) -> list[dict[str, Any]]:
        """The tools the run's caller may run, in ``tool_format`` (``runnable_only``: without
        those whose permission is ``deny``)."""
        usable = set(self.usable(runnable_only=runnable_only))
        specs = [spec for spec in self.registry.tool_specs() if spec.name in usable]
        return formatted_tools(tool_format, specs)

    def usable(self, *, runnable_only: bool = True) -> list[str]:
        """The names of the tools the run's caller's scope lets it run (``runnable_only``: and
        whose permission is not ``deny``), in registration order."""
        registry, caller = self.registry, self.tool_run.caller
        return [
            name
            for name in registry.get_registered_tools()
            if caller.allows(tool_scope(name, registry))
            and not (runnable_only and registry.permission(name) == "deny")
        ]

    async def run(self, calls: Sequence[Call], *, id_prefix: str = "call") -> ToolsExecuteResult:
        """Run ``calls`` for the run's caller: ForbiddenScope (-32004) at the first tool its
        key may not run; the invalid calls reported, the valid ones run in order. A call that
        is not approved (permission ``deny``, or ``ask`` answered no: its id,
        ``{id_prefix}-{index}``, lands in the run's ``denied``) stops the run with
        :class:`ToolsDenied` (-32030)."""
        caller = self.tool_run.caller
        check_tools(caller, (name for name, _ in calls), self.registry)
        runnable, invalid = self._checked(calls, id_prefix, self.usable())
        results = await self._run(runnable)
        return ToolsExecuteResult(results=results, invalid_calls=invalid)

    def _checked(
        self, calls: Sequence[Call], id_prefix: str, usable: Sequence[str]
    ) -> tuple[Runnable, list[InvalidCall]]:
        """The calls that may run and the invalid ones (an unknown tool's names the ``usable``
        ones). Nulls for optional arguments count as not given (the registry's one rule,
        :func:`llm_service.tools.without_null_optionals`)."""
        invalid: list[InvalidCall] = []
        runnable: Runnable = []
        for index, (name, arguments) in enumerate(calls):
            if isinstance(arguments, str):
                invalid.append(InvalidCall(index=index, name=name, reason=arguments))
                continue
            call = ToolCall(f"{id_prefix}-{index}", name, arguments)
            reason = self.registry.validate_tool_call(call, usable)
            if reason is None:
                runnable.append((index, call))
            else:
                invalid.append(InvalidCall(index=index, name=name, reason=reason))
        return runnable, invalid

    async def _run(self, runnable: Runnable) -> list[ToolExecution]:
        registry, denied = self.registry, self.tool_run.denied
        results: list[ToolExecution] = []
        ran: list[int] = []
        for index, call in runnable:
            block = await registry.run_tool_call(call)
            if call.id in denied or registry.permission(call.name) == "deny":
                raise ToolsDenied(index, call.name, [dump(result) for result in results], ran)
            results.append(
                ToolExecution(name=call.name, is_error=block.is_error, content=block.content)
            )
            ran.append(index)
        return results


def tool_scope(name: str, registry: ToolRegistry) -> str:
    """``write`` for a tool that writes or that the user reviews (an MCP server's), else
    ``read``."""
    if name in WRITE_TOOLS or registry.permission(name) not in (None, "allow"):
        return "write"
    return "read"


def check_tools(caller: Caller, names: Iterable[str], registry: ToolRegistry) -> None:
    """Raise :class:`ForbiddenScope` at the first tool ``caller`` may not run."""
    for name in names:
        caller.require(tool_scope(name, registry), f"the tool {name[:80]}")


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
