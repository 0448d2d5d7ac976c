"""Typed, immutable conversation values: content blocks, messages, tools, usage, responses."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

Role = Literal["user", "assistant"]
StopReason = Literal[
    "end_turn", "tool_use", "max_tokens", "stop_sequence", "max_tool_iterations", "refusal"
]


@dataclass(frozen=True, slots=True)
class TextBlock:
    """Plain text in a message."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """The model asks to run tool ``name`` with ``arguments`` (a tool_use block).

    ``parse_error`` is set when the provider sent arguments that are not a JSON object; the
    tool loop feeds it back to the model instead of running the tool.
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    parse_error: str | None = None


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    """The result of running the tool call ``tool_call_id`` (a tool_result block)."""

    tool_call_id: str
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class ImageBlock:
    """An image for a model that sees (png, jpeg, gif or webp bytes); each provider scales it
    down to its own limits when translating (:mod:`llm_service.images`)."""

    media_type: str
    data: bytes = field(repr=False)
    name: str = ""
    """Where it came from (a vault path), for notices and stored conversations."""


@dataclass(frozen=True, slots=True)
class DocumentBlock:
    """A document (a PDF's bytes) with its extracted ``text``: sent as a document to providers
    that take documents (Anthropic), as that text to the others."""

    media_type: str
    data: bytes = field(repr=False)
    name: str = ""
    text: str = ""


MediaBlock: TypeAlias = ImageBlock | DocumentBlock
ContentBlock: TypeAlias = TextBlock | ToolCall | ToolResultBlock | ImageBlock | DocumentBlock


@dataclass(frozen=True, slots=True)
class Message:
    """One turn of a conversation: a role and its content blocks, in order."""

    role: Role
    content: tuple[ContentBlock, ...]

    @classmethod
    def user(cls, text: str) -> Message:
        return cls("user", (TextBlock(text),))

    @classmethod
    def assistant(cls, text: str = "", tool_calls: Iterable[ToolCall] = ()) -> Message:
        blocks: list[ContentBlock] = [TextBlock(text)] if text else []
        blocks.extend(tool_calls)
        return cls("assistant", tuple(blocks))

    @classmethod
    def tool_results(cls, results: Iterable[ToolResultBlock]) -> Message:
        """All results of one tool round, as the single user message that follows the calls."""
        return cls("user", tuple(results))

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> list[ToolCall]:
        return [b for b in self.content if isinstance(b, ToolCall)]

    @property
    def tool_results_blocks(self) -> list[ToolResultBlock]:
        return [b for b in self.content if isinstance(b, ToolResultBlock)]

    @property
    def media(self) -> list[MediaBlock]:
        """Its images and documents, in order."""
        return [b for b in self.content if isinstance(b, (ImageBlock, DocumentBlock))]


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the model may call: its name, what it does, and a JSON Schema for its input."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one or more provider calls; usages add up with ``+``."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
        )


@dataclass(frozen=True, slots=True)
class ReplyBlock:
    """One block of a reply as the Messages API shapes content blocks: ``type`` "text" (with
    ``text``) or "tool_use" (with ``name``, ``input`` and ``id``); the other fields are empty."""

    type: Literal["text", "tool_use"]
    text: str = ""
    name: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    id: str = ""

    @classmethod
    def of(cls, text: str, calls: Iterable[ToolCall]) -> list[ReplyBlock]:
        """The blocks of one model response: its text (when any), then its tool calls."""
        blocks = [cls("text", text=text)] if text else []
        blocks += [cls("tool_use", name=c.name, input=c.arguments, id=c.id) for c in calls]
        return blocks


@dataclass(frozen=True, slots=True)
class LLMResponse:
    """What a model call (or a whole tool-loop turn of LLMService) produced."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    stop_reason: StopReason = "end_turn"
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    cost_usd: float | None = None
    request_id: str | None = None
    rounds: tuple[tuple[str, Sequence[ToolCall]], ...] | None = None
    """A turn's rounds, each its text and the tool calls that ran (set by LLMService; the
    blocks of :attr:`content` are made from them when asked for)."""

    @property
    def content(self) -> list[ReplyBlock]:
        """Every block in order: of a turn, each round's text and the tool calls that ran; of
        one model call, its text then its tool calls."""
        if self.rounds is None:
            return ReplyBlock.of(self.text, self.tool_calls)
        return [block for text, calls in self.rounds for block in ReplyBlock.of(text, calls)]

    def to_message(self) -> Message:
        """The assistant message to append to history."""
        return Message.assistant(self.text, self.tool_calls)


def message_to_dict(message: Message) -> dict[str, Any]:
    """``message`` as JSON-ready data (for storing a conversation); :func:`message_from_dict`
    reads it back."""
    return {"role": message.role, "content": [_block_to_dict(block) for block in message.content]}


def message_from_dict(data: dict[str, Any]) -> Message:
    """The message :func:`message_to_dict` wrote (ValueError for anything else)."""
    role = data.get("role")
    if role not in ("user", "assistant"):
        raise ValueError(f"not a stored message role: {role!r}")
    return Message(role, tuple(_block_from_dict(block) for block in data.get("content", [])))


def _block_to_dict(block: ContentBlock) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, (ImageBlock, DocumentBlock)):
        # stored as a mention: a stored conversation holds no file's bytes
        kind = "image" if isinstance(block, ImageBlock) else "document"
        return {"type": "text", "text": f"[{kind} {block.name or block.media_type} was attached]"}
    if isinstance(block, ToolCall):
        data: dict[str, Any] = {
            "type": "tool_use",
            "id": block.id,
            "name": block.name,
            "arguments": block.arguments,
        }
        if block.parse_error is not None:
            data["parseError"] = block.parse_error
        return data
    return {
        "type": "tool_result",
        "toolCallId": block.tool_call_id,
        "content": block.content,
        "isError": block.is_error,
    }


def _block_from_dict(data: dict[str, Any]) -> ContentBlock:
    kind = data.get("type")
    if kind == "text":
        return TextBlock(str(data["text"]))
    if kind == "tool_use":
        return ToolCall(
            str(data["id"]), str(data["name"]), dict(data["arguments"]), data.get("parseError")
        )
    if kind == "tool_result":
        return ToolResultBlock(
            str(data["toolCallId"]), str(data["content"]), bool(data.get("isError"))
        )
    raise ValueError(f"not a stored content block: {kind!r}")
