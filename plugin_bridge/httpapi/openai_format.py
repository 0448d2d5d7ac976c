"""The one translation between OpenAI's Chat Completions shapes and llm_service's types, used
by ``/v1/chat/completions`` and the LLM proxy's ``/chat`` alike.

In: a request body (validated by :class:`~.bodies.ChatBody`) becomes the application's call:
the messages a system prompt and :class:`~llm_service.Message` values, the rest
:class:`~plugin_bridge.app.assistant.AskOptions` (``tool_choice`` ``any`` is ``required``;
``response_format`` a :class:`~llm_service.ResponseFormat`). Out: tool calls, usage and the stop
reason in OpenAI's words. Bad input raises pydantic's ValidationError or :class:`BadRequest`,
with one sentence naming the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from pydantic import ValidationError

from llm_service import Message, TextBlock, ToolCall, ToolResultBlock, ToolSpec
from llm_service.options import ForcedTool, ResponseFormat, ToolChoice
from plugin_bridge.app.ask_options import AskOptions
from plugin_bridge.app.clients import OWNER_CALLER, Caller
from plugin_bridge.httpapi.bodies import (
    AssistantMessage,
    ChatBody,
    Content,
    ImagePart,
    ImageUrlPart,
    JsonObjectFormat,
    MessageIn,
    ResponseFormatIn,
    SystemMessage,
    TextFormat,
    TextPart,
    ToolCallIn,
    ToolChoiceIn,
    ToolMessage,
    ToolResultPart,
    UserMessage,
)
from plugin_bridge.httpapi.image_parts import image_in
from plugin_bridge.wire.errors import RpcError, WireCode

if TYPE_CHECKING:
    from llm_service import Usage
    from llm_service.messages import ContentBlock, StopReason

FINISH_REASONS: Final[dict[str, str]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tool_iterations": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}


class BadRequest(RpcError):
    """The request body cannot be used (400); ``str()`` is the sentence for the client."""

    def __init__(self, message: str) -> None:
        super().__init__(WireCode.INVALID_PARAMS, message)


@dataclass(frozen=True, slots=True)
class ChatInput:
    """A chat request in the application's terms."""

    messages: list[Message]
    options: AskOptions
    stream: bool = False
    include_usage: bool = False
    """``stream_options.include_usage``: a last chunk carries the usage."""


def chat_input(raw: object, *, caller: Caller = OWNER_CALLER) -> ChatInput:
    """A request body (see :mod:`.bodies`) as the application's call by ``caller`` (the
    ``vault`` model's writes need scope ``write``); BadRequest (400) when it cannot be used."""
    try:
        body = ChatBody.model_validate(raw)
    except ValidationError as exc:
        raise BadRequest(body_problem(exc)) from None
    system, messages = messages_in(body.messages)
    tools = [
        ToolSpec(t.function.name, t.function.description or "", t.function.parameters)
        for t in body.tools or ()
    ]
    options = AskOptions(
        model=body.model,
        system=system,
        tools=tools,
        tool_choice=_tool_choice(body.tool_choice),
        response_format=_response_format(body.response_format),
        max_tokens=body.max_completion_tokens or body.max_tokens,
        temperature=body.temperature,
        caller=caller,
    )
    usage = body.stream_options is not None and body.stream_options.include_usage
    return ChatInput(messages, options, body.stream, usage)


def body_problem(exc: ValidationError) -> str:
    """One sentence for what is wrong in a body: the deepest field pydantic names (in a union,
    the branch that came closest), as a client writes it (``messages[0].content[1]``, without
    the branches' names), and why."""
    error = max(exc.errors(include_url=False), key=lambda e: len(e["loc"]))
    where, last = "", None
    for part in error["loc"]:
        if isinstance(part, int):
            where += f"[{part}]"
        elif part not in _BRANCHES and "[" not in part and part != last:
            where += f".{part}" if where else part
        last = part
    why = error["msg"].removeprefix("Value error, ").rstrip(".")
    return f"Invalid body: '{where or 'body'}': {why}."


_BRANCHES: Final = frozenset(
    {"str", "int", "float", "bool", "system", "developer", "user", "assistant", "tool"}
    | {"text", "image_url", "image", "tool_use", "tool_result", "json_object", "NamedChoice"}
)
"""The names pydantic gives a union's branches in an error's location (roles, block types and
plain types: none is a field)."""


def messages_in(raw: list[MessageIn]) -> tuple[str | None, list[Message]]:
    """The system prompt (system and developer messages joined) and the conversation
    (consecutive user text and tool results join one user message, as llm_service keeps
    them)."""
    system: list[str] = []
    messages: list[Message] = []
    for index, item in enumerate(raw):
        where = f"messages[{index}]"
        if isinstance(item, SystemMessage):
            system.append(_joined(item.content))
            continue
        message = _message(item, where)
        if messages and messages[-1].role == message.role == "user":
            messages[-1] = Message("user", (*messages[-1].content, *message.content))
        else:
            messages.append(message)
    return "\n\n".join(system) or None, messages


def _message(item: UserMessage | AssistantMessage | ToolMessage, where: str) -> Message:
    if isinstance(item, ToolMessage):
        return Message("user", (ToolResultBlock(item.tool_call_id, _joined(item.content)),))
    blocks = _blocks(item.content, where)
    if isinstance(item, UserMessage):
        return Message("user", tuple(blocks))
    calls = [
        _call(call, f"{where}.tool_calls[{n}]") for n, call in enumerate(item.tool_calls or [])
    ]
    return Message("assistant", (*blocks, *calls))


def _blocks(content: Content | None, where: str) -> list[ContentBlock]:
    """A message's content as our blocks, in order."""
    if content is None:
        return []
    if isinstance(content, str):
        return [TextBlock(content)]
    blocks: list[ContentBlock] = []
    for n, part in enumerate(content):
        if isinstance(part, TextPart):
            blocks.append(TextBlock(part.text))
        elif isinstance(part, ImageUrlPart | ImagePart):
            try:
                blocks.append(image_in(part.model_dump(), f"{where}.content[{n}]"))
            except ValueError as exc:
                raise BadRequest(str(exc)) from None
        elif isinstance(part, ToolResultPart):
            blocks.append(ToolResultBlock(part.tool_use_id, _joined(part.content), part.is_error))
        elif part.tool_calls is not None:
            blocks += [
                _call(c, f"{where}.content[{n}].tool_calls[{i}]")
                for i, c in enumerate(part.tool_calls)
            ]
        else:
            assert part.id is not None and part.name is not None  # the model's validator
            blocks.append(ToolCall(part.id, part.name, part.input or {}))
    return blocks


def _call(call: ToolCallIn, where: str) -> ToolCall:
    return ToolCall(call.id, call.function.name, arguments_in(call.function.arguments, where))


def _joined(content: str | list[TextPart]) -> str:
    return content if isinstance(content, str) else "".join(part.text for part in content)


def _tool_choice(raw: ToolChoiceIn | None) -> ToolChoice | None:
    if raw is None or isinstance(raw, str):
        return "required" if raw == "any" else raw
    return ForcedTool(raw.function.name)


def _response_format(raw: ResponseFormatIn | None) -> ResponseFormat | None:
    if raw is None or isinstance(raw, TextFormat):
        return None
    if isinstance(raw, JsonObjectFormat):
        return ResponseFormat()
    spec = raw.json_schema
    return ResponseFormat(spec.json_schema, spec.name, bool(spec.strict))


def tool_calls_out(calls: list[ToolCall]) -> list[dict[str, Any]]:
    """Tool calls as OpenAI's ``[{id, type: "function", function: {name, arguments}}]``,
    ``arguments`` a JSON string."""
    return [
        {
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
        }
        for call in calls
    ]


def usage_out(usage: Usage) -> dict[str, int]:
    """OpenAI's usage object: prompt tokens include cached ones, as the API counts them."""
    prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
    }


def finish_reason(stop: StopReason) -> str:
    return FINISH_REASONS.get(stop, "stop")


def arguments_in(raw: object, where: str) -> dict[str, Any]:
    """Tool-call arguments given as an object or as a JSON string of one ("" means none)."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError:
            raise BadRequest(f"'{where}' arguments are not valid JSON.") from None
    if not isinstance(raw, dict):
        raise BadRequest(f"'{where}' arguments must be a JSON object.")
    return raw
