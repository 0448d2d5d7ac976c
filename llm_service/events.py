"""Events yielded while a response streams.

``Provider.stream`` yields ``TextDelta`` and ``ToolCallDelta`` as they arrive, then exactly one
``ResponseComplete``. ``LLMService.stream_message`` yields ``TextDelta``, a ``ToolCallStarted`` /
``ToolResult`` pair for every tool it runs, then one ``ResponseComplete`` carrying the reply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

from llm_service.messages import LLMResponse, ToolCall


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the model's text, in order."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call as it streams; ``index`` identifies the call within the response.

    ``id`` and ``name`` are set on the first delta of a call; ``arguments_delta`` is a fragment of
    its JSON arguments (possibly empty).
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments_delta: str = ""


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """LLMService is about to run ``call`` (after permission checks passed or not)."""

    call: ToolCall


@dataclass(frozen=True, slots=True)
class ToolResult:
    """LLMService finished a tool call; ``content`` is exactly what goes back to the model."""

    call_id: str
    name: str
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class ResponseComplete:
    """The last event of a stream."""

    response: LLMResponse


StreamEvent: TypeAlias = TextDelta | ToolCallDelta | ResponseComplete
ServiceEvent: TypeAlias = TextDelta | ToolCallStarted | ToolResult | ResponseComplete
