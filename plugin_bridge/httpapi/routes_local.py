"""The local-model tool routes, for a client that runs its own model (LM Studio, Ollama…) and
lets this server run the vault tools:

- ``GET /api/local-llm/tools?format=…``: the vault tools in any format ``tools/list`` accepts
  (``lmstudio``: strict tools); the write tools only while the setting ``http_allow_writes``
  lets them run;
- ``POST /api/local-llm/execute-tools {tool_calls: [{id?, function: {name, arguments}}]}``
  (``arguments`` an object or a JSON string) runs them in order and answers
  ``{results: [{tool_call_id, role: "tool", name, isError, content}], invalidCalls: [{index,
  tool_call_id, name, reason}]}`` as ``tools/execute`` does, each with its call's ``id`` (or
  one made here), so a client appends the results to its messages as they are. Writes are
  refused (403 ``tool_denied``, naming the setting) unless ``http_allow_writes`` is on.
"""

from __future__ import annotations

import uuid
from typing import Any, Final, get_args

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from plugin_bridge.app.clients import check_tools
from plugin_bridge.app.vault_tools import HTTP_WRITES_OFF, WRITE_TOOL_NAMES
from plugin_bridge.handlers.tools import DEFAULT_FORMAT, check_calls, formatted_tools, run_checked
from plugin_bridge.httpapi.openai_format import BadRequest, arguments_in
from plugin_bridge.httpapi.responses import (
    caller_of,
    chat_of,
    error_response,
    json_body,
    json_response,
)
from plugin_bridge.wire.errors import ToolDeniedError
from plugin_bridge.wire.models import ToolFormat, ToolsExecuteResult, dump

MAX_CALLS: Final = 32
FORMATS: Final[tuple[ToolFormat, ...]] = get_args(ToolFormat)


async def tools(request: Request) -> Response:
    state = chat_of(request)
    asked = request.query_params.get("format") or state.bridge.providers.name or DEFAULT_FORMAT
    tool_format = next((name for name in FORMATS if name == asked), None)
    if tool_format is None:
        error = BadRequest(f"Unknown format '{asked}': use one of {', '.join(FORMATS)}.")
        return error_response(request.url.path, error)
    registry = state.tools()
    specs = [spec for spec in registry.tool_specs() if registry.permission(spec.name) != "deny"]
    return json_response({"format": tool_format, "tools": formatted_tools(tool_format, specs)})


async def execute_tools(request: Request) -> Response:
    try:
        ids, calls = _calls(await json_body(request))
        registry = chat_of(request).tools()
        runnable, invalid = check_calls(registry, calls, "http-execute")
        check_tools(caller_of(request), (name for name, _ in calls), registry)
        ran = [ids[index] for index, _ in runnable]
        try:
            results = await run_checked(registry, runnable, set())
        except ToolDeniedError as exc:
            raise _refused(exc, ran) from None
    except Exception as exc:
        return error_response(request.url.path, exc)
    body = dump(ToolsExecuteResult(results=results, invalid_calls=invalid))
    for item in body["invalidCalls"]:
        item["tool_call_id"] = ids[item["index"]]
    body["results"] = _with_ids(body["results"], ran)
    return json_response(body)


def _with_ids(results: list[dict[str, Any]], ids: list[str]) -> list[dict[str, Any]]:
    """Each result as a tool message: its call's id and ``role: "tool"`` first."""
    return [
        {"tool_call_id": call_id, "role": "tool", **result}
        for call_id, result in zip(ids, results, strict=False)
    ]


def _refused(exc: ToolDeniedError, ran: list[str]) -> ToolDeniedError:
    """The 403 of a refused call: the results before it carry their calls' ids (``ran``: the
    ids of the valid calls, in order), and a write refused because HTTP writes are off names
    the setting."""
    data = exc.data or {}
    index, name = int(data["index"]), str(data["name"])
    reason = HTTP_WRITES_OFF if name in WRITE_TOOL_NAMES else None
    return ToolDeniedError(index, name, _with_ids(data["results"], ran), reason=reason)


def _calls(body: object) -> tuple[list[str], list[tuple[str, dict[str, Any] | str]]]:
    """Each call's id (given, or made here) and ``(name, arguments)``; arguments that cannot be
    read become the reason."""
    raw = body.get("tool_calls") if isinstance(body, dict) else None
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_CALLS:
        raise BadRequest(f"'tool_calls' must be a list of 1 to {MAX_CALLS} calls.")
    ids: list[str] = []
    calls: list[tuple[str, dict[str, Any] | str]] = []
    for index, item in enumerate(raw):
        function = item.get("function") if isinstance(item, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(function, dict) or not isinstance(name, str) or not name:
            raise BadRequest(
                f"'tool_calls[{index}]' must be {{id?, function: {{name, arguments}}}}."
            )
        given = item.get("id")
        ids.append(given if isinstance(given, str) and given else f"call_{uuid.uuid4().hex}")
        try:
            calls.append((name, arguments_in(function.get("arguments"), f"tool_calls[{index}]")))
        except BadRequest as exc:
            calls.append((name, str(exc)))
    return ids, calls


LOCAL_ROUTES = [
    Route("/api/local-llm/tools", tools, methods=["GET"]),
    Route("/api/local-llm/execute-tools", execute_tools, methods=["POST"]),
]
