"""The method router: ``register(VAULT_SEARCH, handler)`` and dispatch.

Each method is registered by its request object (a ``ClientRequest`` from ``wire.models``,
which names the method, its params model ``P`` and its result model ``R``; the schema reads the
same objects), with ``async def handler(ctx: RequestContext, params: P) -> R``. Dispatch
validates params, runs the handler and dumps the result; exceptions propagate to the
connection, which maps them with ``errors.to_wire_error``.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from plugin_bridge.wire.context import RequestContext, S
from plugin_bridge.wire.errors import RpcError, WireCode
from plugin_bridge.wire.models import ClientRequest, Params, dump

P = TypeVar("P", bound=Params)
R = TypeVar("R", bound=BaseModel)
Handler = Callable[[RequestContext[S], P], Awaitable[R]]
Authorize = Callable[[RequestContext[S], str], Awaitable[None]]
"""Raises when the request's caller may not call the method (the app's scope rules)."""

MAX_ECHOED_NAME = 80
"""A method name longer than this is cut in the 'not found' message."""


@dataclass(frozen=True, slots=True)
class Method(Generic[S]):
    """A registered method: its request object, its handler and the handler's summary."""

    request: ClientRequest[Any, Any]
    handler: Handler[S, Any, Any]
    summary: str


class Router(Generic[S]):
    """Methods by name, served with a state of type ``S`` (handed to handlers as ``ctx.app``)."""

    def __init__(self, authorize: Authorize[S] | None = None) -> None:
        self._methods: dict[str, Method[S]] = {}
        self._authorize = authorize

    def register(self, request: ClientRequest[P, R], handler: Handler[S, P, R]) -> None:
        """Serve ``request``'s method with ``handler`` (its docstring's first line is the
        method's summary in the schema)."""
        if request.method in self._methods:
            raise ValueError(f"method {request.method!r} is registered twice")
        summary = (inspect.getdoc(handler) or "").split("\n", 1)[0]
        self._methods[request.method] = Method(request, handler, summary)

    @property
    def methods(self) -> dict[str, Method[S]]:
        return dict(self._methods)

    @property
    def names(self) -> Collection[str]:
        """The registered method names (a live, read-only view)."""
        return self._methods.keys()

    async def dispatch(self, ctx: RequestContext[S], method: str, params: Any) -> dict[str, Any]:
        """Run ``method``; the JSON-ready result, or an exception for the error mapper."""
        entry = self._methods.get(method)
        if entry is None:
            shown = method if len(method) <= MAX_ECHOED_NAME else method[:MAX_ECHOED_NAME] + "…"
            raise RpcError(WireCode.METHOD_NOT_FOUND, f"Method not found: '{shown}'.")
        if isinstance(params, list):
            raise RpcError(
                WireCode.INVALID_PARAMS, "params must be an object (by-name parameters)."
            )
        if self._authorize is not None:
            await self._authorize(ctx, method)
        parsed = entry.request.params.model_validate(params or {}, by_alias=True, by_name=False)
        return dump(await entry.handler(ctx, parsed))
