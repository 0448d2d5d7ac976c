"""The working history of one conversation: exchanges, trimming and the validity rules.

An *exchange* is a user text message and every message up to the next user text message: the
assistant's tool calls, their results and the final answer. Trimming drops whole exchanges from
the front, so the history never holds a tool result without its call, a call without its result,
or starts with anything but a user text message.

:func:`history_problems` states what a valid history is (the rules the Anthropic Messages API
enforces, which the other providers accept too).
"""

from __future__ import annotations

from collections.abc import Sequence

from llm_service.messages import Message, TextBlock, ToolCall, ToolResultBlock

NO_TEXT_REPLY = "(no text reply)"
"""Stands in for an empty assistant answer: the APIs reject empty assistant messages."""


def starts_exchange(message: Message) -> bool:
    """True for a user message carrying text (not a message of tool results)."""
    return message.role == "user" and not message.tool_results_blocks


def split_exchanges(messages: Sequence[Message]) -> list[list[Message]]:
    """``messages`` cut before every user text message."""
    exchanges: list[list[Message]] = []
    for message in messages:
        if starts_exchange(message) or not exchanges:
            exchanges.append([])
        exchanges[-1].append(message)
    return exchanges


def trim_history(messages: Sequence[Message], max_messages: int) -> list[Message]:
    """Drop whole exchanges from the front until at most ``max_messages`` remain.

    The last exchange is never dropped, even when it alone is longer than the limit.
    """
    exchanges = split_exchanges(messages)
    total = len(messages)
    while len(exchanges) > 1 and total > max_messages:
        total -= len(exchanges.pop(0))
    return [message for exchange in exchanges for message in exchange]


def compact_exchange(exchange: Sequence[Message], reply_text: str) -> list[Message]:
    """The exchange without its tool rounds: its user message and one assistant answer."""
    return [exchange[0], Message.assistant(reply_text or NO_TEXT_REPLY)]


def history_problems(messages: Sequence[Message]) -> list[str]:
    """Why ``messages`` is not a history the Anthropic Messages API accepts; [] if it is."""
    problems: list[str] = []
    if messages and not (starts_exchange(messages[0]) and messages[0].text):
        problems.append("the history does not start with a user text message")
    for index, message in enumerate(messages):
        problems.extend(f"message {index}: {p}" for p in _message_problems(message))
        if index and messages[index - 1].role == message.role:
            problems.append(f"message {index}: two {message.role} messages in a row")
        if message.role == "assistant":
            following = messages[index + 1] if index + 1 < len(messages) else None
            problems.extend(f"message {index}: {p}" for p in _pairing(message, following))
        elif message.tool_results_blocks:
            previous = messages[index - 1] if index else None
            if previous is None or not previous.tool_calls:
                problems.append(f"message {index}: tool results without calls before them")
    return problems


def _message_problems(message: Message) -> list[str]:
    problems = []
    if not message.content:
        problems.append("empty content")
    if any(isinstance(b, TextBlock) and not b.text for b in message.content):
        problems.append("an empty text block")
    if message.role == "assistant" and message.tool_results_blocks:
        problems.append("tool results in an assistant message")
    if message.role == "user" and any(isinstance(b, ToolCall) for b in message.content):
        problems.append("tool calls in a user message")
    if message.role == "user" and message.tool_results_blocks and message.text:
        problems.append("tool results mixed with user text")
    return problems


def _pairing(assistant: Message, following: Message | None) -> list[str]:
    call_ids = [call.id for call in assistant.tool_calls]
    if not call_ids:
        return []
    if len(set(call_ids)) != len(call_ids):
        return ["duplicate tool call ids"]
    results: list[ToolResultBlock] = following.tool_results_blocks if following else []
    result_ids = [result.tool_call_id for result in results]
    if sorted(result_ids) != sorted(call_ids):
        return [f"tool calls {call_ids} answered by results {result_ids}"]
    return []
