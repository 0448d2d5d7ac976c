"""The method router: ``register("vault/search", SearchParams, handler)`` and dispatch.

A handler is ``async def handler(ctx: RequestContext, params: P) -> R`` where ``P`` is the
method's params model and ``R`` (read from the return annotation) its result model; both feed
the generated JSON Schema. Dispatch validates params, runs the handler and dumps the result;
exceptions propagate to the connection, which maps them with ``errors.to_wire_error``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar, get_type_hints

from pydantic import BaseModel

from plugin_bridge.context import RequestContext
from plugin_bridge.errors import ErrorCode, RpcError
from plugin_bridge.models import Params, dump

P = TypeVar("P", bound=Params)
Handler = Callable[[RequestContext, P], Awaitable[BaseModel]]

MAX_ECHOED_NAME = 80
"""A method name longer than this is cut in the 'not found' message."""


@dataclass(frozen=True, slots=True)
class Method:
    """A registered method."""

    name: str
    params: type[Params]
    result: type[BaseModel]
    handler: Handler[Any]
    summary: str


class Router:
    """Methods by name."""

    def __init__(self) -> None:
        self._methods: dict[str, Method] = {}

    def register(self, name: str, params: type[P], handler: Handler[P]) -> None:
        """Add ``name``; the result model is the handler's return annotation."""
        if name in self._methods:
            raise ValueError(f"method {name!r} is registered twice")
        result = get_type_hints(handler).get("return")
        if not (inspect.isclass(result) and issubclass(result, BaseModel)):
            raise ValueError(f"handler of {name!r} must be annotated to return a pydantic model")
        summary = (inspect.getdoc(handler) or "").split("\n", 1)[0]
        self._methods[name] = Method(name, params, result, handler, summary)

    @property
    def methods(self) -> dict[str, Method]:
        return dict(self._methods)

    async def dispatch(self, ctx: RequestContext, method: str, params: Any) -> dict[str, Any]:
        """Run ``method``; the JSON-ready result, or an exception for the error mapper."""
        entry = self._methods.get(method)
        if entry is None:
            shown = method if len(method) <= MAX_ECHOED_NAME else method[:MAX_ECHOED_NAME] + "…"
            raise RpcError(ErrorCode.METHOD_NOT_FOUND, f"Method not found: '{shown}'.")
        if isinstance(params, list):
            raise RpcError(
                ErrorCode.INVALID_PARAMS, "params must be an object (by-name parameters)."
            )
        parsed = entry.params.model_validate(params or {}, by_alias=True, by_name=False)
        return dump(await entry.handler(ctx, parsed))
