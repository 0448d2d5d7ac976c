"""What the HTTP routes share: reading a JSON body, errors in each route family's shape, and
Server-Sent Events."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import TYPE_CHECKING, Any, TypeVar, cast

from starlette.requests import ClientDisconnect
from starlette.responses import Response

from plugin_bridge.app.clients import CALLER, OWNER_CALLER, Caller
from plugin_bridge.httpapi.guard import error_body
from plugin_bridge.httpapi.openai_format import BadRequest
from plugin_bridge.wire import jsontext
from plugin_bridge.wire.errors import to_http_error

if TYPE_CHECKING:
    from starlette.requests import Request

    from plugin_bridge.httpapi.chat import HttpChat

EventT = TypeVar("EventT")
SSE_HEADERS = {"cache-control": "no-cache", "x-accel-buffering": "no"}


def chat_of(request: Request) -> HttpChat:
    """The HTTP API's shared state (see :func:`plugin_bridge.httpapi.app.build_http_app`)."""
    return cast("HttpChat", request.app.state.chat)


def caller_of(request: Request) -> Caller:
    """Who sent the request (the guard put it in the scope)."""
    caller = request.scope.get(CALLER)
    return caller if isinstance(caller, Caller) else OWNER_CALLER


async def json_body(request: Request) -> Any:
    """The request's JSON body (BadRequest when it is not JSON, or the client went away
    before all of it came: then the guard has answered 413, or nobody is listening)."""
    try:
        body = await request.body()
    except ClientDisconnect:
        raise BadRequest("The body did not arrive whole.") from None
    try:
        document = json.loads(body)
    except RecursionError:
        raise BadRequest(jsontext.TOO_DEEP) from None
    except ValueError:
        raise BadRequest("The body is not valid JSON.") from None
    refused = jsontext.refusal(document, body)
    if refused is not None:
        raise BadRequest(refused)
    return document


def dumps(payload: object) -> bytes:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()


def json_response(payload: object, status: int = 200) -> Response:
    return Response(dumps(payload), status, media_type="application/json")


def error_response(path: str, exc: BaseException) -> Response:
    """``exc`` as the route's error: OpenAI's shape under /v1/, else ``{error, message}``. A
    429 or 5xx comes after the bridge's own attempts: it carries ``Retry-After`` (the
    provider's wait, else the bridge's next backoff) and ``x-should-retry: false``, so that one
    client request costs at most the bridge's attempts whatever the client's retry settings
    (the OpenAI SDK, and the clients built on it, obey the header)."""
    error = to_http_error(exc)
    body = error_body(path, error.status, error.code, error.message, error.data)
    headers = {}
    if error.retry_after is not None:
        headers["retry-after"] = str(max(1, round(error.retry_after)))
    if error.status >= 500 or error.status == 429:
        headers["x-should-retry"] = "false"
    return Response(body, error.status, headers, media_type="application/json")


def sse(payload: object) -> bytes:
    """One Server-Sent Event: ``data: <json>`` and a blank line."""
    return b"data: " + (payload if isinstance(payload, bytes) else dumps(payload)) + b"\n\n"


DONE = b"data: [DONE]\n\n"


async def started(events: AsyncGenerator[EventT, None]) -> AsyncGenerator[EventT, None]:
    """``events`` once its first event came: a failure before it raises here, before any byte
    is sent (the route can still answer with a status); the stream is closed then."""
    try:
        first = await anext(events)
    except BaseException:
        await events.aclose()
        raise

    async def replay() -> AsyncGenerator[EventT, None]:
        async with aclosing(events):
            yield first
            async for event in events:
                yield event

    return replay()
