"""The protocol's JSON Schema, generated from the wire models (docs/protocol.schema.json).

One document: ``methods`` (params and result of each), ``notifications`` (both directions),
``serverRequests`` and ``errors``, all pointing into ``$defs``. Regenerate with
``python -m plugin_bridge schema > docs/protocol.schema.json`` (``make schema``).
"""

from __future__ import annotations

import json
from typing import Any, Final, Literal

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from plugin_bridge.handlers import build_router
from plugin_bridge.wire.conversation_models import BudgetWarning
from plugin_bridge.wire.errors import ERROR_MEANINGS
from plugin_bridge.wire.models import (
    CancelRequestParams,
    ChatDelta,
    ChatToolCall,
    ChatToolResult,
    ToolConfirmParams,
    ToolConfirmResult,
)
from plugin_bridge.wire.protocol import MAX_IN_FLIGHT, PROTOCOL_VERSION
from plugin_bridge.wire.search_models import IndexProgress
from plugin_bridge.wire.transport import MAX_FRAME_BYTES

CLIENT_NOTIFICATIONS: Final[dict[str, type[BaseModel]]] = {
    "$/cancelRequest": CancelRequestParams,
}
SERVER_NOTIFICATIONS: Final[dict[str, type[BaseModel]]] = {
    "chat/delta": ChatDelta,
    "chat/toolCall": ChatToolCall,
    "chat/toolResult": ChatToolResult,
    "budget/warning": BudgetWarning,
    "index/progress": IndexProgress,
}
SERVER_REQUESTS: Final[dict[str, tuple[type[BaseModel], type[BaseModel]]]] = {
    "tool/confirm": (ToolConfirmParams, ToolConfirmResult),
}


def build_schema() -> dict[str, Any]:
    """The whole protocol as one JSON Schema document."""
    methods = build_router().methods
    wanted: list[tuple[type[BaseModel], JsonSchemaMode]] = []
    for method in methods.values():
        wanted += [(method.params, "validation"), (method.result, "serialization")]
    wanted += [(model, "validation") for model in CLIENT_NOTIFICATIONS.values()]
    wanted += [(model, "serialization") for model in SERVER_NOTIFICATIONS.values()]
    for params, result in SERVER_REQUESTS.values():
        wanted += [(params, "serialization"), (result, "validation")]
    refs, definitions = models_json_schema(
        list(dict.fromkeys(wanted)), by_alias=True, ref_template="#/$defs/{model}"
    )

    def ref(model: type[BaseModel], mode: Literal["validation", "serialization"]) -> Any:
        return refs[(model, mode)]

    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "obsidian-ai-bridge protocol",
        "description": (
            f"JSON-RPC 2.0 over WebSocket text frames, protocolVersion {PROTOCOL_VERSION}. "
            "Generated from plugin_bridge/wire/*models.py: do not edit; see docs/protocol.md."
        ),
        "protocolVersion": PROTOCOL_VERSION,
        "limits": {"maxFrameBytes": MAX_FRAME_BYTES, "maxRequestsInFlight": MAX_IN_FLIGHT},
        "methods": {
            name: {
                "description": methods[name].summary,
                "params": ref(methods[name].params, "validation"),
                "result": ref(methods[name].result, "serialization"),
            }
            for name in sorted(methods)
        },
        "notifications": {
            "clientToServer": {
                name: {"params": ref(model, "validation")}
                for name, model in CLIENT_NOTIFICATIONS.items()
            },
            "serverToClient": {
                name: {"params": ref(model, "serialization")}
                for name, model in SERVER_NOTIFICATIONS.items()
            },
        },
        "serverRequests": {
            name: {"params": ref(params, "serialization"), "result": ref(result, "validation")}
            for name, (params, result) in SERVER_REQUESTS.items()
        },
        "errors": [
            {"code": int(code), "name": code.name, "meaning": meaning}
            for code, meaning in ERROR_MEANINGS.items()
        ],
        "$defs": definitions.get("$defs", {}),
    }


def schema_text() -> str:
    """The schema as the committed file holds it."""
    return json.dumps(build_schema(), indent=2, ensure_ascii=False) + "\n"
