"""The one translation between OpenAI's Chat Completions shapes and llm_service's types, used
by ``/v1/chat/completions`` and the LLM proxy's ``/chat`` alike.

In: a request body's ``messages`` (system / developer, user, assistant with ``tool_calls``,
tool) become a system prompt and :class:`~llm_service.Message` values (consecutive tool results
and user text join one user message, as llm_service keeps them); ``tools`` become
:class:`~llm_service.ToolSpec`. Out: tool calls, usage and the stop reason in OpenAI's words.
Bad input raises :class:`BadRequest` with one sentence naming the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from llm_service import Message, TextBlock, ToolCall, ToolResultBlock, ToolSpec
from plugin_bridge.httpapi.image_parts import image_in, is_image_part
from plugin_bridge.wire.errors import RpcError, WireCode

if TYPE_CHECKING:
    from llm_service import Usage
    from llm_service.messages import ContentBlock, StopReason

MAX_MESSAGES: Final = 1000
MAX_TOOLS: Final = 128

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
    """A chat request in llm_service's terms."""

    model: str | None
    messages: list[Message]
    system: str | None = None
    tools: list[ToolSpec] = field(default_factory=list)
    tool_choice: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    stream: bool = False
    include_usage: bool = False
    """``stream_options.include_usage``: a last chunk carries the usage."""


def chat_input(body: object) -> ChatInput:
    """Read a Chat Completions request body (fields this bridge does not use are ignored)."""
    if not isinstance(body, dict):
        raise BadRequest("The body must be a JSON object with 'messages'.")
    model = body.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise BadRequest("'model' must be a non-empty string.")
    system, messages = messages_in(body.get("messages"))
    tools = tools_in(body.get("tools"))
    tool_choice = _tool_choice(body.get("tool_choice"), tools)
    if body.get("tool_choice") == "none":
        tools = []
    return ChatInput(
        model=model,
        messages=messages,
        system=system,
        tools=tools,
        tool_choice=tool_choice,
        max_tokens=_positive_int(body, "max_completion_tokens")
        or _positive_int(body, "max_tokens"),
        temperature=_temperature(body.get("temperature")),
        stream=body.get("stream") is True,
        include_usage=_include_usage(body.get("stream_options")),
    )


def messages_in(raw: object) -> tuple[str | None, list[Message]]:
    """The system prompt (system and developer messages joined) and the conversation."""
    if not isinstance(raw, list) or not raw:
        raise BadRequest("'messages' must be a non-empty list.")
    if len(raw) > MAX_MESSAGES:
        raise BadRequest(f"'messages' has more than {MAX_MESSAGES} entries.")
    system: list[str] = []
    messages: list[Message] = []
    for index, item in enumerate(raw):
        where = f"messages[{index}]"
        if not isinstance(item, dict):
            raise BadRequest(f"'{where}' must be an object.")
        role = item.get("role")
        if role in ("system", "developer"):
            system.append(_text(item.get("content"), where))
            continue
        blocks: tuple[ContentBlock, ...]
        if role == "user":
            blocks = _user_content(item.get("content"), where)
            message = Message("user", blocks)
        elif role == "assistant":
            content = item.get("content")
            text = "" if content is None else _text(content, where)
            calls = [
                _call_in(call, f"{where}.tool_calls[{n}]")
                for n, call in enumerate(_list(item.get("tool_calls"), f"{where}.tool_calls"))
            ]
            message = Message.assistant(text, calls)
        elif role == "tool":
            call_id = item.get("tool_call_id")
            if not isinstance(call_id, str) or not call_id:
                raise BadRequest(f"'{where}.tool_call_id' must be a non-empty string.")
            message = Message(
                "user", (ToolResultBlock(call_id, _text(item.get("content"), where)),)
            )
        else:
            raise BadRequest(f"'{where}.role' must be system, developer, user, assistant or tool.")
        if messages and messages[-1].role == message.role == "user":
            messages[-1] = Message("user", (*messages[-1].content, *message.content))
        else:
            messages.append(message)
    if not messages:
        raise BadRequest("'messages' has no user message.")
    return "\n\n".join(system) or None, messages


def tools_in(raw: object) -> list[ToolSpec]:
    """``tools`` (``[{type: "function", function: {name, description?, parameters?}}]``)."""
    tools = _list(raw, "tools")
    if len(tools) > MAX_TOOLS:
        raise BadRequest(f"'tools' has more than {MAX_TOOLS} entries.")
    specs = []
    for index, tool in enumerate(tools):
        where = f"tools[{index}]"
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or tool.get("type", "function") != "function":
            raise BadRequest(f"'{where}' must be {{type: 'function', function: {{name, ...}}}}.")
        name = function.get("name")
        if not isinstance(name, str) or not name:
            raise BadRequest(f"'{where}.function.name' must be a non-empty string.")
        parameters = function.get("parameters", {"type": "object", "properties": {}})
        if not isinstance(parameters, dict):
            raise BadRequest(f"'{where}.function.parameters' must be a JSON Schema object.")
        description = function.get("description") or ""
        specs.append(ToolSpec(name, str(description), parameters))
    return specs


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


def _text(content: object, where: str) -> str:
    """A message's content: a string, or a list of text parts (other parts are refused)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text":
                raise BadRequest(f"'{where}.content' may hold text parts (and images from a user).")
            texts.append(str(part.get("text", "")))
        return "".join(texts)
    raise BadRequest(f"'{where}.content' must be a string or a list of text parts.")


def _user_content(content: object, where: str) -> tuple[ContentBlock, ...]:
    """A user message's text, then its images (``image_url`` or Anthropic ``image`` parts)."""
    if not isinstance(content, list) or not any(map(is_image_part, content)):
        return (TextBlock(_text(content, where)),)
    texts = [part for part in content if not is_image_part(part)]
    try:
        images = [
            image_in(part, f"{where}.content[{n}]")
            for n, part in enumerate(content)
            if is_image_part(part)
        ]
    except ValueError as exc:
        raise BadRequest(str(exc)) from None
    return (TextBlock(_text(texts, where)), *images)


def _call_in(raw: object, where: str) -> ToolCall:
    function = raw.get("function") if isinstance(raw, dict) else None
    if not isinstance(raw, dict) or not isinstance(function, dict):
        raise BadRequest(
            f"'{where}' must be {{id, type: 'function', function: {{name, arguments}}}}."
        )
    call_id, name = raw.get("id"), function.get("name")
    if not isinstance(call_id, str) or not isinstance(name, str) or not call_id or not name:
        raise BadRequest(f"'{where}' needs an id and a function name.")
    return ToolCall(call_id, name, arguments_in(function.get("arguments"), where))


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


def _list(raw: object, where: str) -> list[Any]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise BadRequest(f"'{where}' must be a list.")
    return raw


def _tool_choice(raw: object, tools: list[ToolSpec]) -> str | None:
    """The name of a forced tool call, or None ("auto", "none", "required" or absent)."""
    if raw is None or raw in ("auto", "none", "required"):
        return None
    function = raw.get("function") if isinstance(raw, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(name, str) or not any(tool.name == name for tool in tools):
        raise BadRequest("'tool_choice' must be auto, none, required or name one of 'tools'.")
    return name


def _include_usage(options: object) -> bool:
    return isinstance(options, dict) and options.get("include_usage") is True


def _positive_int(body: dict[str, Any], key: str) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise BadRequest(f"'{key}' must be a positive integer.")
    return value


def _temperature(value: object) -> float | None:
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= 2:
        raise BadRequest("'temperature' must be a number from 0 to 2.")
    return float(value)
