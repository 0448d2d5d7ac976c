"""The local-model tool routes, for a client that runs its own model (LM Studio, Ollama…) and
lets this server run the vault tools:

- ``GET /api/local-llm/tools?format=…``: the vault tools in any format ``tools/list`` accepts
  (``lmstudio``: strict tools);
- ``POST /api/local-llm/execute-tools {tool_calls: [{id?, function: {name, arguments}}]}``
  (``arguments`` an object or a JSON string) runs them in order and answers
  ``{results: [{name, isError, content}], invalidCalls: [{index, name, reason}]}`` as
  ``tools/execute`` does. Writes are refused (403 ``tool_denied``) unless the setting
  ``http_allow_writes`` is on.
"""

from __future__ import annotations

from typing import Any, Final, get_args

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from plugin_bridge.app.clients import check_tools
from plugin_bridge.handlers.tools import DEFAULT_FORMAT, formatted_tools, run_calls
from plugin_bridge.httpapi.openai_format import BadRequest, arguments_in
from plugin_bridge.httpapi.responses import (
    caller_of,
    chat_of,
    error_response,
    json_body,
    json_response,
)
from plugin_bridge.wire.models import ToolFormat, dump

MAX_CALLS: Final = 32
FORMATS: Final[tuple[ToolFormat, ...]] = get_args(ToolFormat)


async def tools(request: Request) -> Response:
    state = chat_of(request)
    asked = request.query_params.get("format") or state.bridge.providers.name or DEFAULT_FORMAT
    tool_format = next((name for name in FORMATS if name == asked), None)
    if tool_format is None:
        error = BadRequest(f"Unknown format '{asked}': use one of {', '.join(FORMATS)}.")
        return error_response(request.url.path, error)
    specs = state.tools().tool_specs()
    return json_response({"format": tool_format, "tools": formatted_tools(tool_format, specs)})


async def execute_tools(request: Request) -> Response:
    try:
        calls = _calls(await json_body(request))
        registry = chat_of(request).tools()
        check_tools(caller_of(request), (name for name, _ in calls), registry)
        result = await run_calls(registry, calls, "http-execute", set())
    except Exception as exc:
        return error_response(request.url.path, exc)
    return json_response(dump(result))


def _calls(body: object) -> list[tuple[str, dict[str, Any] | str]]:
    """``(name, arguments)`` of each call; arguments that cannot be read become the reason."""
    raw = body.get("tool_calls") if isinstance(body, dict) else None
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_CALLS:
        raise BadRequest(f"'tool_calls' must be a list of 1 to {MAX_CALLS} calls.")
    calls: list[tuple[str, dict[str, Any] | str]] = []
    for index, item in enumerate(raw):
        function = item.get("function") if isinstance(item, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(function, dict) or not isinstance(name, str) or not name:
            raise BadRequest(
                f"'tool_calls[{index}]' must be {{id?, function: {{name, arguments}}}}."
            )
        try:
            calls.append((name, arguments_in(function.get("arguments"), f"tool_calls[{index}]")))
        except BadRequest as exc:
            calls.append((name, str(exc)))
    return calls


ROUTES = [
    Route("/api/local-llm/tools", tools, methods=["GET"]),
    Route("/api/local-llm/execute-tools", execute_tools, methods=["POST"]),
]
