"""The one translation between OpenAI's chat shapes and llm_service's types."""

from __future__ import annotations

import json
from typing import Any

import pytest

from llm_service import Message, TextBlock, ToolCall, ToolResultBlock, ToolSpec, Usage
from llm_service.options import ForcedTool, ResponseFormat
from llm_service.profiles import parse_model_spec
from plugin_bridge.httpapi.openai_format import (
    BadRequest,
    chat_input,
    finish_reason,
    tool_calls_out,
    usage_out,
)


def test_a_whole_conversation_reads_into_messages() -> None:
    chat = chat_input(
        {
            "model": "m",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "developer", "content": [{"type": "text", "text": "Cite notes."}]},
                {"role": "user", "content": "Weather?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "w", "arguments": '{"city": "Oslo"}'},
                        },
                        {
                            "id": "c2",
                            "type": "function",
                            "function": {"name": "w", "arguments": ""},
                        },
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
                {
                    "role": "tool",
                    "tool_call_id": "c2",
                    "content": [{"type": "text", "text": "rain"}],
                },
                {"role": "user", "content": "Thanks."},
            ],
            "max_completion_tokens": 100,
            "temperature": 0.5,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
    )
    assert chat.options.system == "Be brief.\n\nCite notes."
    assert chat.messages == [
        Message.user("Weather?"),
        Message.assistant("", [ToolCall("c1", "w", {"city": "Oslo"}), ToolCall("c2", "w", {})]),
        Message(
            "user",
            (ToolResultBlock("c1", "sunny"), ToolResultBlock("c2", "rain"), TextBlock("Thanks.")),
        ),
    ]
    options = chat.options
    assert (options.max_tokens, options.temperature, chat.stream, chat.include_usage) == (
        100,
        0.5,
        True,
        True,
    )


def test_tools_and_tool_choice() -> None:
    tool = {
        "type": "function",
        "function": {"name": "w", "description": "d", "parameters": {"type": "object"}},
    }
    chat = chat_input(
        {
            "messages": [{"role": "user", "content": "x"}],
            "tools": [tool],
            "tool_choice": {"type": "function", "function": {"name": "w"}},
        }
    )
    assert chat.options.tools == [ToolSpec("w", "d", {"type": "object"})]
    assert chat.options.tool_choice == ForcedTool("w")
    for sent, meant in [("none", "none"), ("auto", "auto"), ("required", "required")]:
        body = {"messages": [{"role": "user", "content": "x"}], "tools": [tool]}
        assert chat_input({**body, "tool_choice": sent}).options.tool_choice == meant
    langchain = {"messages": [{"role": "user", "content": "x"}], "tool_choice": "any"}
    assert chat_input(langchain).options.tool_choice == "required"


def test_response_formats() -> None:
    body: dict[str, Any] = {"messages": [{"role": "user", "content": "x"}]}
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    sent = {"type": "json_schema", "json_schema": {"name": "A", "schema": schema, "strict": True}}
    assert chat_input({**body, "response_format": sent}).options.response_format == (
        ResponseFormat(schema, "A", strict=True)
    )
    json_object = chat_input({**body, "response_format": {"type": "json_object"}})
    assert json_object.options.response_format == ResponseFormat()
    text = chat_input({**body, "response_format": {"type": "text"}})
    assert text.options.response_format is None


CALL = ToolCall("toolu_1", "get_weather", {"city": "Oslo"})
RESULT = ToolResultBlock("toolu_1", "sunny")


@pytest.mark.parametrize(
    ("assistant", "user"),
    [
        (  # Anthropic's blocks
            [
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "get_weather",
                    "input": {"city": "Oslo"},
                },
            ],
            [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny"}],
        ),
        (  # the LLM proxy's Rust client
            [
                {"type": "text", "text": "Let me look."},
                {
                    "type": "tool_use",
                    "tool_calls": [
                        {
                            "id": "toolu_1",
                            "type": "function",
                            "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'},
                        }
                    ],
                },
            ],
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "sunny"}],
                }
            ],
        ),
    ],
)
def test_content_blocks_in_both_shapes(assistant: list[Any], user: list[Any]) -> None:
    chat = chat_input(
        {
            "messages": [
                {"role": "user", "content": "Weather in Oslo?"},
                {"role": "assistant", "content": assistant},
                {"role": "user", "content": user},
            ]
        }
    )
    assert chat.messages == [
        Message.user("Weather in Oslo?"),
        Message("assistant", (TextBlock("Let me look."), CALL)),
        Message("user", (RESULT,)),
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"messages": "hi"}, "'messages'"),
        (
            {"messages": [{"role": "user", "content": [{"type": "image_url"}]}]},
            "messages[0].content",
        ),
        ({"messages": [{"role": "tool", "content": "x"}]}, "tool_call_id"),
        ({"messages": [{"role": "system", "content": "x"}]}, "no user message"),
        (
            {
                "messages": [
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "[1]"}}],
                    }
                ]
            },
            "JSON object",
        ),
        ({"model": "", "messages": [{"role": "user", "content": "x"}]}, "'model'"),
        ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}, "'max_tokens'"),
        ({"messages": [{"role": "user", "content": "x"}], "max_tokens": 10**30}, "'max_tokens'"),
        ({"messages": [{"role": "user", "content": "x"}], "temperature": 3}, "'temperature'"),
        ({"messages": [{"role": "user", "content": "x"}], "tool_choice": "often"}, "'tool_choice'"),
        (
            {"messages": [{"role": "user", "content": [{"type": "tool_use", "id": "x"}]}]},
            "messages[0].content[0]",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "tool_use", "id": "c", "name": "f"}]}
                ]
            },
            "assistant messages",
        ),
        (
            {
                "messages": [
                    {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "c"}]},
                    {"role": "user", "content": "x"},
                ]
            },
            "'messages[0].content': tool_result and image blocks belong to user messages.",
        ),
    ],
)
def test_bad_bodies_name_the_field(body: dict[str, Any], field: str) -> None:
    with pytest.raises(BadRequest, match=None) as caught:
        chat_input(body)
    assert field in str(caught.value)


def test_what_goes_back_out() -> None:
    calls = tool_calls_out([ToolCall("c", "f", {"a": [1, "é"]})])
    assert calls == [
        {
            "id": "c",
            "type": "function",
            "function": {"name": "f", "arguments": json.dumps({"a": [1, "é"]})},
        }
    ]
    assert usage_out(Usage(10, 5, cache_read_tokens=3, cache_write_tokens=2)) == {
        "prompt_tokens": 15,
        "completion_tokens": 5,
        "total_tokens": 20,
    }
    assert [finish_reason(s) for s in ("end_turn", "tool_use", "max_tokens", "refusal")] == [
        "stop",
        "tool_calls",
        "length",
        "content_filter",
    ]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("anthropic/claude-x", ("anthropic", "claude-x")),
        ("anthropic:claude-x", ("anthropic", "claude-x")),
        ("ollama/llama3.1:8b", ("ollama", "llama3.1:8b")),
        ("ollama:llama3.1:8b", ("ollama", "llama3.1:8b")),
        ("openai/gpt-5", ("openai", "gpt-5")),
        ("qwen/qwen3-4b", (None, "qwen/qwen3-4b")),
        ("lmstudio/qwen3", (None, "lmstudio/qwen3")),
        ("llama3.1:8b", (None, "llama3.1:8b")),
        ("gpt-5", (None, "gpt-5")),
    ],
)
def test_model_ids_split_only_at_a_known_provider(
    spec: str, expected: tuple[str | None, str]
) -> None:
    assert tuple(parse_model_spec(spec)) == expected
