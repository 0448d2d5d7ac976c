"""Client keys: clients/list, clients/add, clients/revoke (the info file's token only: the
scope rules of :mod:`plugin_bridge.app.clients` refuse every client key)."""

from __future__ import annotations

from plugin_bridge.app.clients import ClientKeyError
from plugin_bridge.handlers.context import AppRouter, Context
from plugin_bridge.wire.errors import RpcError, WireCode
from plugin_bridge.wire.models import (
    CLIENTS_ADD,
    CLIENTS_LIST,
    CLIENTS_REVOKE,
    ClientKeyModel,
    ClientsAddParams,
    ClientsAddResult,
    ClientsListResult,
    ClientsRevokeParams,
    Empty,
    EmptyResult,
)


async def list_clients(ctx: Context, params: Empty) -> ClientsListResult:
    """The client keys: name, scope, created, last used (never a key)."""
    records = await ctx.app.clients.execute(lambda keys: keys.list())
    return ClientsListResult(
        clients=[ClientKeyModel.model_validate(r, from_attributes=True) for r in records]
    )


async def add_client(ctx: Context, params: ClientsAddParams) -> ClientsAddResult:
    """A new key (or ``key`` imported), saved durably before the answer; shown once."""
    try:
        key = await ctx.app.clients.execute(
            lambda keys: keys.add(params.name, params.scope, params.key, owner_token=ctx.app.token)
        )
    except ClientKeyError as exc:
        raise RpcError(WireCode.INVALID_PARAMS, str(exc)) from exc
    return ClientsAddResult(name=params.name, scope=params.scope, key=key)


async def revoke_client(ctx: Context, params: ClientsRevokeParams) -> EmptyResult:
    """Remove a key: it stops working at its next request, on open connections too."""
    try:
        await ctx.app.clients.execute(lambda keys: keys.revoke(params.name))
    except ClientKeyError as exc:
        raise RpcError(WireCode.INVALID_PARAMS, str(exc)) from exc
    return EmptyResult()


def register(router: AppRouter) -> None:
    router.register(CLIENTS_LIST, list_clients)
    router.register(CLIENTS_ADD, add_client)
    router.register(CLIENTS_REVOKE, revoke_client)
