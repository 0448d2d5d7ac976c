"""The local-model tool routes, for a client that runs its own model (LM Studio, Ollama…) and
lets this server run the vault tools:

- ``GET /api/local-llm/health``: ``GET /health``'s answer, its ``toolCount`` the number of
  tools ``GET /api/local-llm/tools`` lists to the same caller;
- ``GET /api/local-llm/tools?format=…``: the vault tools in any format ``tools/list`` accepts
  (``lmstudio``: strict tools); the write tools only while the access policy lets the caller
  run them (:meth:`~plugin_bridge.app.access.ToolAccess.over_http`);
- ``POST /api/local-llm/execute-tools {tool_calls: [{id?, function: {name, arguments}}]}``
  (``arguments`` an object or a JSON string) runs them in order and answers
  ``{results: [{tool_call_id, role: "tool", name, isError, content}], invalidCalls: [{index,
  tool_call_id, name, reason}]}`` as ``tools/execute`` does, each with its call's ``id`` (or
  one made here), so a client appends the results to its messages as they are. A write the
  policy refuses is a 403 ``tool_denied`` naming the setting that would allow it.
"""

from __future__ import annotations

import uuid
from typing import Any, Final, get_args

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from plugin_bridge.app.access import HTTP_WRITES_OFF
from plugin_bridge.app.tools import DEFAULT_FORMAT, Call, ToolsDenied
from plugin_bridge.app.vault_tools import WRITE_TOOL_NAMES
from plugin_bridge.handlers.session import health_of
from plugin_bridge.httpapi.bodies import ExecuteToolsBody
from plugin_bridge.httpapi.openai_format import BadRequest, arguments_in, body_problem
from plugin_bridge.httpapi.responses import (
    caller_of,
    chat_of,
    error_response,
    json_body,
    json_response,
)
from plugin_bridge.wire.errors import ToolDeniedError
from plugin_bridge.wire.models import ToolFormat, dump

FORMATS: Final[tuple[ToolFormat, ...]] = get_args(ToolFormat)


async def health(request: Request) -> Response:
    result = health_of(chat_of(request).bridge)
    count = len(_listed(request, DEFAULT_FORMAT))
    return json_response(dump(result.model_copy(update={"tool_count": count})))


async def tools(request: Request) -> Response:
    state = chat_of(request)
    asked = request.query_params.get("format") or state.bridge.providers.name or DEFAULT_FORMAT
    tool_format = next((name for name in FORMATS if name == asked), None)
    if tool_format is None:
        error = BadRequest(f"Unknown format '{asked}': use one of {', '.join(FORMATS)}.")
        return error_response(request.url.path, error)
    return json_response({"format": tool_format, "tools": _listed(request, tool_format)})


def _listed(request: Request, tool_format: ToolFormat) -> list[dict[str, Any]]:
    """The tools the caller may run over HTTP, in ``tool_format``."""
    tools = chat_of(request).tools(caller_of(request))
    return tools.listed(tool_format, runnable_only=True)


async def execute_tools(request: Request) -> Response:
    try:
        ids, calls = _calls(await json_body(request))
        tools = chat_of(request).tools(caller_of(request))
        try:
            result = await tools.run(calls, id_prefix="http-execute")
        except ToolsDenied as exc:
            raise _refused(exc, [ids[index] for index in exc.ran]) from None
    except Exception as exc:
        return error_response(request.url.path, exc)
    body = dump(result)
    invalid = set()
    for item in body["invalidCalls"]:
        item["tool_call_id"] = ids[item["index"]]
        invalid.add(item["index"])
    ran = [call_id for index, call_id in enumerate(ids) if index not in invalid]
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


def _calls(raw: object) -> tuple[list[str], list[Call]]:
    """Each call's id (given, or made here) and ``(name, arguments)``; arguments that cannot be
    read become the reason."""
    try:
        body = ExecuteToolsBody.model_validate(raw)
    except ValidationError as exc:
        raise BadRequest(body_problem(exc)) from None
    ids = [item.id or f"call_{uuid.uuid4().hex}" for item in body.tool_calls]
    calls: list[Call] = []
    for index, item in enumerate(body.tool_calls):
        name = item.function.name
        try:
            calls.append((name, arguments_in(item.function.arguments, f"tool_calls[{index}]")))
        except BadRequest as exc:
            calls.append((name, str(exc)))
    return ids, calls


LOCAL_ROUTES = [
    Route("/api/local-llm/health", health, methods=["GET"]),  # the local-LLM bridge's path
    Route("/api/local-llm/tools", tools, methods=["GET"]),
    Route("/api/local-llm/execute-tools", execute_tools, methods=["POST"]),
]
