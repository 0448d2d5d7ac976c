"""History helpers: exchanges, trimming by whole exchanges, compaction and the validity rules."""

from __future__ import annotations

from llm_service.history import (
    NO_TEXT_REPLY,
    compact_exchange,
    history_problems,
    split_exchanges,
    starts_exchange,
    trim_history,
)
from llm_service.messages import Message, TextBlock, ToolCall, ToolResultBlock


def _tool_exchange(n: int, rounds: int = 1) -> list[Message]:
    """A user question, ``rounds`` tool rounds and a final answer."""
    messages = [Message.user(f"question {n}")]
    for r in range(rounds):
        call_id = f"c{n}_{r}"
        messages.append(Message.assistant("", [ToolCall(call_id, "search", {"q": "x"})]))
        messages.append(Message.tool_results([ToolResultBlock(call_id, "hit")]))
    messages.append(Message.assistant(f"answer {n}"))
    return messages


def _plain_exchange(n: int) -> list[Message]:
    return [Message.user(f"question {n}"), Message.assistant(f"answer {n}")]


def test_user_text_starts_an_exchange_and_tool_results_do_not() -> None:
    """Only user messages with text open an exchange."""
    assert starts_exchange(Message.user("hi"))
    assert not starts_exchange(Message.tool_results([ToolResultBlock("c", "r")]))
    assert not starts_exchange(Message.assistant("hello"))


def test_messages_split_into_exchanges_at_user_text() -> None:
    """Each exchange runs from a user text message to just before the next one."""
    history = _tool_exchange(1) + _plain_exchange(2) + _tool_exchange(3, rounds=2)
    assert [len(e) for e in split_exchanges(history)] == [4, 2, 6]
    assert split_exchanges([]) == []


def test_trimming_drops_whole_exchanges_from_the_front() -> None:
    """Over the limit, the oldest exchanges go, never part of one."""
    history = _tool_exchange(1) + _plain_exchange(2) + _tool_exchange(3)
    trimmed = trim_history(history, 7)
    assert trimmed == _plain_exchange(2) + _tool_exchange(3)
    assert trim_history(history, 5) == _tool_exchange(3)
    assert history_problems(trimmed) == []


def test_trimming_within_the_limit_changes_nothing() -> None:
    """A history at or under the limit is returned unchanged."""
    history = _tool_exchange(1) + _plain_exchange(2)
    assert trim_history(history, 6) == history


def test_the_last_exchange_is_kept_whole_even_over_the_limit() -> None:
    """A single exchange longer than the limit survives trimming intact."""
    history = _plain_exchange(1) + _tool_exchange(2, rounds=3)
    assert trim_history(history, 4) == _tool_exchange(2, rounds=3)


def test_compacting_keeps_the_question_and_the_reply_text() -> None:
    """A compacted exchange is the user message plus one assistant answer."""
    exchange = _tool_exchange(1, rounds=2)
    assert compact_exchange(exchange, "all the text") == [
        exchange[0],
        Message.assistant("all the text"),
    ]
    assert compact_exchange(exchange, "")[1] == Message.assistant(NO_TEXT_REPLY)
    assert history_problems(compact_exchange(exchange, "")) == []


def test_a_well_formed_history_has_no_problems() -> None:
    """Alternating roles with every call answered in the next message is valid."""
    assert history_problems(_tool_exchange(1, rounds=2) + _plain_exchange(2)) == []
    assert history_problems([]) == []


def test_history_must_start_with_user_text() -> None:
    """A history starting with tool results or an assistant message is invalid."""
    assert history_problems(_tool_exchange(1)[2:])
    assert history_problems(_tool_exchange(1)[1:])


def test_roles_must_alternate() -> None:
    """Two messages of the same role in a row are reported."""
    problems = history_problems([Message.user("a"), Message.user("b")])
    assert problems == ["message 1: two user messages in a row"]


def test_calls_must_be_answered_by_the_next_message() -> None:
    """A call without its result, or a result for another id, is reported."""
    call = ToolCall("c1", "search", {})
    unanswered = [Message.user("q"), Message.assistant("", [call])]
    wrong_id = [*unanswered, Message.tool_results([ToolResultBlock("c2", "r")])]
    assert any("answered by results []" in p for p in history_problems(unanswered))
    assert any("['c1'] answered by results ['c2']" in p for p in history_problems(wrong_id))


def test_results_need_calls_right_before_them() -> None:
    """Tool results after an assistant message without calls are reported."""
    history = [
        Message.user("q"),
        Message.assistant("no calls"),
        Message.tool_results([ToolResultBlock("c1", "r")]),
    ]
    assert "message 2: tool results without calls before them" in history_problems(history)


def test_empty_and_mixed_messages_are_reported() -> None:
    """Empty content, empty text blocks and results mixed with text are invalid."""
    assert "message 1: empty content" in history_problems(
        [Message.user("q"), Message.assistant("")]
    )
    assert "message 1: an empty text block" in history_problems(
        [Message.user("q"), Message("assistant", (TextBlock(""),))]
    )
    mixed = Message("user", (ToolResultBlock("c1", "r"), TextBlock("and more")))
    history = [Message.user("q"), Message.assistant("", [ToolCall("c1", "t", {})]), mixed]
    assert "message 2: tool results mixed with user text" in history_problems(history)


def test_duplicate_call_ids_are_reported() -> None:
    """Two calls with one id in the same message are invalid."""
    calls = [ToolCall("c1", "t", {}), ToolCall("c1", "t", {})]
    history = [
        Message.user("q"),
        Message.assistant("", calls),
        Message.tool_results([ToolResultBlock("c1", "a"), ToolResultBlock("c1", "b")]),
    ]
    assert "message 1: duplicate tool call ids" in history_problems(history)
