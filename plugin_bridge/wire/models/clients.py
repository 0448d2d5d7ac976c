"""Wire models of the client keys: clients/list, clients/add, clients/revoke.

Same rules as :mod:`plugin_bridge.wire.models.base`: camelCase on the wire, params strict.
Only the info file's token may call these methods.
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from plugin_bridge.wire.models.base import ClientRequest, Empty, EmptyResult, Params, WireModel

ClientScope = Literal["read", "chat", "write"]


class ClientKeyModel(WireModel):
    """One client key, without the key (only its hash is kept)."""

    name: str
    scope: ClientScope
    created: float = Field(description="When it was added, in seconds since the epoch.")
    last_used: float | None = Field(description="Null when it was never used.")


class ClientsListResult(WireModel):
    clients: list[ClientKeyModel]


class ClientsAddParams(Params):
    name: str = Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$",
        description="Letters, digits, '.', '_' or '-', starting with a letter or digit.",
    )
    scope: ClientScope = "chat"
    key: str | None = Field(
        None,
        min_length=16,
        max_length=512,
        description="Import this token instead of making a new key.",
    )


class ClientsAddResult(WireModel):
    name: str
    scope: ClientScope
    key: str = Field(description="The key, shown once: it is kept nowhere but in the client.")


class ClientsRevokeParams(Params):
    name: str = Field(min_length=1, max_length=64)


CLIENTS_LIST: Final = ClientRequest("clients/list", Empty, ClientsListResult)
CLIENTS_ADD: Final = ClientRequest("clients/add", ClientsAddParams, ClientsAddResult)
CLIENTS_REVOKE: Final = ClientRequest("clients/revoke", ClientsRevokeParams, EmptyResult)
