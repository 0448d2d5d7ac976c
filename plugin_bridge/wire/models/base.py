"""Wire models: the params and result of every method, notifications and server requests.

The single source of truth for the protocol: handlers validate params with these models, build
results with them, and ``python -m plugin_bridge schema`` generates docs/protocol.schema.json from
them. Field names are snake_case in Python and camelCase on the wire. Params refuse unknown
fields and do not coerce types (``"5"`` is not a number). Validators are built on first use
(``defer_build``), which keeps them off the server's start-up path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

from llm_service.profiles import ProviderName

ToolFormat = Literal[ProviderName, "lmstudio", "vllm"]
"""Tool formats: each provider's, and LM Studio's and vLLM's (they speak OpenAI's)."""


class WireModel(BaseModel):
    """Base of results and notifications: camelCase on the wire."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        frozen=True,
        defer_build=True,
    )


class Notification(WireModel):
    """Base of the server's notifications: each carries its method name, which
    ``ctx.notify(model)`` sends and the schema lists (:data:`SERVER_NOTIFICATIONS`)."""

    METHOD: ClassVar[str]


class Params(WireModel):
    """Base of params: unknown fields are an error, no type coercion."""

    model_config = ConfigDict(extra="forbid", strict=True)


class ClientNotification(Params):
    """Base of the client's notifications (``$/cancelRequest``), with their method name."""

    METHOD: ClassVar[str]


class Empty(Params):
    """No params (or an empty object)."""


class EmptyResult(WireModel):
    """An empty object."""


ParamsT = TypeVar("ParamsT", bound=BaseModel)
ResultT = TypeVar("ResultT", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class RequestSpec(Generic[ParamsT, ResultT]):
    """A request of the protocol: its method name, its params model and its result model."""

    method: str
    params: type[ParamsT]
    result: type[ResultT]

    def parse(self, result: Any, *, strict: bool | None = None) -> ResultT:
        """The answer's result as the result model (a ``ValidationError`` when malformed)."""
        return self.result.model_validate(result, strict=strict)


class ServerRequest(RequestSpec[ParamsT, ResultT]):
    """A request the server sends its client (``tool/confirm``, ``note/apply``…); each is
    named once, beside its models, and ``SERVER_REQUESTS`` is the registry the schema reads."""

    __slots__ = ()


class ClientRequest(RequestSpec[ParamsT, ResultT]):
    """A method the server answers (the MCP SDK's ``types.py`` pattern): each is named once,
    beside its models, and ``CLIENT_REQUESTS`` lists them all. The router registers each
    handler by it, the schema reads its models, and ``BridgeClient.call(request, params)``
    returns its result model."""

    __slots__ = ()


def dump(model: BaseModel) -> dict[str, Any]:
    """``model`` as a JSON-ready dict with camelCase keys."""
    return model.model_dump(mode="json", by_alias=True)
