"""What a request may ask of the model besides its messages: which tool it must call
(:data:`ToolChoice`) and the shape of its answer (:class:`ResponseFormat`).

Each provider maps them to its own API (see its module); :meth:`Provider.forces_tools` says
whether a provider can honour a forced tool call for a model at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

ToolMode = Literal["auto", "none", "required"]
TOOL_MODES: Final[tuple[ToolMode, ...]] = ("auto", "none", "required")


@dataclass(frozen=True, slots=True)
class ForcedTool:
    """The model must call the tool ``name``."""

    name: str


ToolChoice: TypeAlias = ToolMode | ForcedTool
"""``"auto"`` (the model decides), ``"none"`` (no tool call), ``"required"`` (some tool call),
or one named tool."""


def forces_a_call(choice: ToolChoice | None) -> bool:
    """Whether ``choice`` makes the model call a tool."""
    return choice == "required" or isinstance(choice, ForcedTool)


@dataclass(frozen=True, slots=True)
class ResponseFormat:
    """The answer is a JSON object: any (``schema`` None, OpenAI's ``json_object``) or one
    matching ``schema`` (``json_schema``, named ``name``; ``strict`` asks the API to keep to
    it exactly)."""

    schema: dict[str, Any] | None = field(default=None, hash=False)
    name: str = "response"
    strict: bool = False
