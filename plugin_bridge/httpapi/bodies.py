"""The request bodies of ``/v1/chat/completions``, ``/chat`` and ``/chat/stream`` as pydantic
models: a body that does not fit is a 400 naming the field (fields this bridge does not use are
ignored).

Messages are OpenAI's Chat Completions messages (system / developer, user, assistant with
``tool_calls``, tool). A message's ``content`` is a string or a list of content blocks, which
also come in the two shapes the LLM proxy's clients send:

- Anthropic's: ``text``, ``tool_use {id, name, input}``, ``tool_result {tool_use_id,
  content}``;
- images: OpenAI's ``image_url`` and Anthropic's ``image`` parts, in user messages;
- the LLM-proxy design's Rust client: an assistant's ``{"type": "tool_use", "tool_calls":
  [{id, type: "function", function: {name, arguments: "<json>"}}]}``, a user's
  ``tool_result`` as above.

A new kind of content part is one more model in :data:`ContentPart`.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)

MAX_MESSAGES: Final = 1000
MAX_TOOLS: Final = 128
MAX_TOKENS: Final = 1_000_000
"""The largest answer length a request may ask for (no model comes near it)."""

Name = Annotated[str, StringConstraints(min_length=1, max_length=256)]
Id = Annotated[str, StringConstraints(min_length=1, max_length=256)]


class _Body(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class TextPart(_Body):
    type: Literal["text"]
    text: str


class FunctionCall(_Body):
    name: Name
    arguments: str | dict[str, Any] | None = None
    """A JSON string of an object, or the object ("" and null mean none)."""


class ToolCallIn(_Body):
    """OpenAI's ``{id, type: "function", function: {name, arguments}}``."""

    id: Id
    type: Literal["function"] = "function"
    function: FunctionCall


class ToolUseBlock(_Body):
    """A ``tool_use`` block: Anthropic's ``{id, name, input}``, or the Rust client's
    ``{tool_calls: [...]}``."""

    type: Literal["tool_use"]
    id: Id | None = None
    name: Name | None = None
    input: dict[str, Any] | None = None
    tool_calls: list[ToolCallIn] | None = None

    @model_validator(mode="after")
    def _one_shape(self) -> ToolUseBlock:
        if (self.tool_calls is None) == (self.id is None or self.name is None):
            raise ValueError("a tool_use block needs either id and name, or tool_calls")
        return self


class ToolResultPart(_Body):
    """Anthropic's (and the Rust client's) ``{tool_use_id, content, is_error?}``."""

    type: Literal["tool_result"]
    tool_use_id: Id
    content: str | list[TextPart] = ""
    is_error: bool = False


class ImageUrl(_Body):
    url: str


class ImageUrlPart(_Body):
    """OpenAI's ``{type: "image_url", image_url: {url}}`` (a ``data:`` URL; see image_parts)."""

    type: Literal["image_url"]
    image_url: ImageUrl | str


class ImagePart(_Body):
    """Anthropic's ``{type: "image", source: {type: "base64", media_type, data}}``."""

    type: Literal["image"]
    source: dict[str, Any]


ContentPart = Annotated[
    TextPart | ImageUrlPart | ImagePart | ToolUseBlock | ToolResultPart,
    Field(discriminator="type"),
]
Content = str | list[ContentPart]


class SystemMessage(_Body):
    role: Literal["system", "developer"]
    content: str | list[TextPart]


class UserMessage(_Body):
    role: Literal["user"]
    content: Content

    @field_validator("content")
    @classmethod
    def _no_calls(cls, content: Content) -> Content:
        if not isinstance(content, str) and any(isinstance(b, ToolUseBlock) for b in content):
            raise ValueError("tool_use blocks belong to assistant messages")
        return content


class AssistantMessage(_Body):
    role: Literal["assistant"]
    content: Content | None = None
    tool_calls: list[ToolCallIn] | None = None

    @field_validator("content")
    @classmethod
    def _no_results(cls, content: Content | None) -> Content | None:
        if isinstance(content, list) and any(
            isinstance(block, ToolResultPart | ImageUrlPart | ImagePart) for block in content
        ):
            raise ValueError("tool_result and image blocks belong to user messages")
        return content


class ToolMessage(_Body):
    role: Literal["tool"]
    tool_call_id: Id
    content: str | list[TextPart]


MessageIn = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")
]


class FunctionDef(_Body):
    name: Name
    description: str | None = None
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class ToolDef(_Body):
    """OpenAI's ``{type: "function", function: {name, description?, parameters?}}``."""

    type: Literal["function"] = "function"
    function: FunctionDef


class NamedFunction(_Body):
    name: Name


class NamedChoice(_Body):
    """``{type: "function", function: {name}}``: the model must call that tool."""

    type: Literal["function"] = "function"
    function: NamedFunction


ToolChoiceIn = Literal["auto", "none", "required", "any"] | NamedChoice
"""``any`` is what LangChain sends for ``required``."""


class TextFormat(_Body):
    type: Literal["text"]


class JsonObjectFormat(_Body):
    type: Literal["json_object"]


class JsonSchemaSpec(_Body):
    name: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]
    json_schema: dict[str, Any] = Field(alias="schema")
    strict: bool | None = None


class JsonSchemaFormat(_Body):
    type: Literal["json_schema"]
    json_schema: JsonSchemaSpec


ResponseFormatIn = Annotated[
    TextFormat | JsonObjectFormat | JsonSchemaFormat, Field(discriminator="type")
]


class StreamOptions(_Body):
    include_usage: bool = False


Tokens = Annotated[int, Field(ge=1, le=MAX_TOKENS, strict=True)]


class ChatBody(_Body):
    """A Chat Completions request (``/v1/chat/completions``, ``/chat``, ``/chat/stream``)."""

    model: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)] | None = None
    messages: list[MessageIn] = Field(min_length=1, max_length=MAX_MESSAGES)
    tools: list[ToolDef] | None = Field(None, max_length=MAX_TOOLS)
    tool_choice: ToolChoiceIn | None = None
    response_format: ResponseFormatIn | None = None
    max_tokens: Tokens | None = None
    max_completion_tokens: Tokens | None = None
    temperature: Annotated[float, Field(ge=0, le=2, strict=True)] | None = None
    stream: bool = False
    stream_options: StreamOptions | None = None

    @field_validator("messages")
    @classmethod
    def _asks_something(cls, messages: list[MessageIn]) -> list[MessageIn]:
        if all(isinstance(message, SystemMessage) for message in messages):
            raise ValueError("no user message")
        return messages


MAX_CALLS: Final = 32
"""The most tool calls one ``/api/local-llm/execute-tools`` body may hold."""


class LocalToolCall(_Body):
    """A call of ``/api/local-llm/execute-tools``: ``{id?, function: {name, arguments}}`` (an
    id is made when none is given)."""

    id: Id | None = None
    function: FunctionCall


class ExecuteToolsBody(_Body):
    """The body of ``/api/local-llm/execute-tools``."""

    tool_calls: list[LocalToolCall] = Field(min_length=1, max_length=MAX_CALLS)
