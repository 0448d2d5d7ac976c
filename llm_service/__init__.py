"""llm_service: typed messages, chat providers with retries, and a tool-calling LLMService.

Knows nothing of Obsidian or WebSockets. Importing it is cheap: only the provider names and the
exceptions load with the package (a command line can take its choices from them); messages,
providers, SDKs, tenacity and jsonschema load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from llm_service.errors import LLMError, UnknownProviderError
from llm_service.factory import make_provider
from llm_service.profiles import PROVIDER_NAMES, ModelSpec, ProviderName, parse_model_spec

if TYPE_CHECKING:
    from llm_service.catalog import ModelInfo
    from llm_service.discovery import (
        adiscover_models,
        avalidate_key,
        discover_models,
        validate_key,
    )
    from llm_service.events import (
        ResponseComplete,
        ServiceEvent,
        StreamEvent,
        TextDelta,
        ToolCallDelta,
        ToolCallStarted,
        ToolResult,
    )
    from llm_service.messages import (
        DocumentBlock,
        ImageBlock,
        LLMResponse,
        Message,
        ReplyBlock,
        TextBlock,
        ToolCall,
        ToolResultBlock,
        ToolSpec,
        Usage,
    )
    from llm_service.options import ForcedTool, ResponseFormat, ToolChoice
    from llm_service.providers.anthropic import AnthropicProvider
    from llm_service.providers.base import ChatRequest, Provider
    from llm_service.providers.ollama import OllamaProvider
    from llm_service.providers.openai import OpenAIProvider
    from llm_service.providers.scripted import ScriptedProvider
    from llm_service.service import LLMService

_LAZY = {
    **dict.fromkeys(
        (
            "ResponseComplete",
            "ServiceEvent",
            "StreamEvent",
            "TextDelta",
            "ToolCallDelta",
            "ToolCallStarted",
            "ToolResult",
        ),
        "llm_service.events",
    ),
    **dict.fromkeys(
        (
            "DocumentBlock",
            "ImageBlock",
            "LLMResponse",
            "Message",
            "TextBlock",
            "ToolCall",
            "ToolResultBlock",
            "ToolSpec",
            "Usage",
        ),
        "llm_service.messages",
    ),
    **dict.fromkeys(("ForcedTool", "ResponseFormat", "ToolChoice"), "llm_service.options"),
    "ChatRequest": "llm_service.providers.base",
    "Provider": "llm_service.providers.base",
    "AnthropicProvider": "llm_service.providers.anthropic",
    "OpenAIProvider": "llm_service.providers.openai",
    "OllamaProvider": "llm_service.providers.ollama",
    "ScriptedProvider": "llm_service.providers.scripted",
    "LLMService": "llm_service.service",
    "ReplyBlock": "llm_service.messages",
    "ModelInfo": "llm_service.catalog",
    "adiscover_models": "llm_service.discovery",
    "avalidate_key": "llm_service.discovery",
    "discover_models": "llm_service.discovery",
    "validate_key": "llm_service.discovery",
}

__all__ = [
    "PROVIDER_NAMES",
    "AnthropicProvider",
    "ChatRequest",
    "DocumentBlock",
    "ForcedTool",
    "ImageBlock",
    "LLMError",
    "LLMResponse",
    "LLMService",
    "Message",
    "ModelInfo",
    "ModelSpec",
    "OllamaProvider",
    "OpenAIProvider",
    "Provider",
    "ProviderName",
    "ReplyBlock",
    "ResponseComplete",
    "ResponseFormat",
    "ScriptedProvider",
    "ServiceEvent",
    "StreamEvent",
    "TextBlock",
    "TextDelta",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallStarted",
    "ToolChoice",
    "ToolResult",
    "ToolResultBlock",
    "ToolSpec",
    "UnknownProviderError",
    "Usage",
    "adiscover_models",
    "avalidate_key",
    "discover_models",
    "make_provider",
    "parse_model_spec",
    "validate_key",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'llm_service' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
