"""docs/protocol.schema.json is generated from the wire models and describes real messages."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from plugin_bridge.cli.schema import build_schema, member, schema_text, with_limits_table
from plugin_bridge.handlers import build_router
from plugin_bridge.wire.errors import WireCode
from plugin_bridge.wire.models import SERVER_REQUESTS
from tests.conftest import REPO_ROOT

SCHEMA_FILE = REPO_ROOT / "docs" / "protocol.schema.json"


def validate(instance: Any, ref: dict[str, str]) -> None:
    """Check ``instance`` against one ``$ref`` of the schema."""
    schema = build_schema()
    jsonschema.validate(instance, {**ref, "$defs": schema["$defs"]})


def test_the_committed_schema_is_current() -> None:
    """The committed file equals a fresh `python -m plugin_bridge schema` (run make schema)."""
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text()


def _names(schema: dict[str, Any], group: str) -> set[str]:
    return set(schema["$defs"][group]["properties"])


def test_every_method_notification_and_error_is_described() -> None:
    """The root object reaches every registered method (params, result), notification, the
    server request and every error code."""
    schema = build_schema()
    assert set(schema["properties"]) == {
        "methods",
        "clientNotifications",
        "serverNotifications",
        "serverRequests",
        "toolArguments",
    }
    assert _names(schema, "Methods") == set(build_router().methods)
    for name in build_router().methods:
        entry = member(schema, "Methods", name)
        assert entry["params"]["$ref"].startswith("#/$defs/")
        assert entry["result"]["$ref"].startswith("#/$defs/")
        assert entry["description"]
    assert {e["code"] for e in schema["errors"]} == {int(code) for code in WireCode}
    assert _names(schema, "ServerNotifications") == {
        "chat/delta",
        "chat/toolCall",
        "chat/toolResult",
        "budget/warning",
        "index/progress",
        "$/serverProof",
        "embedder/downloadProgress",
    }
    assert _names(schema, "ServerRequests") == {"tool/confirm", "note/apply", "settings/confirm"}
    for request in SERVER_REQUESTS:
        entry = member(schema, "ServerRequests", request.method)
        assert entry["params"]["$ref"] == f"#/$defs/{request.params.__name__}"
        assert entry["result"]["$ref"] == f"#/$defs/{request.result.__name__}"


def test_only_models_carry_titles() -> None:
    """Fields have no titles (a TypeScript generator would name them Text1, Text2, ...)."""
    for name, model in build_schema()["$defs"].items():
        assert model.get("title") == name
        for field, prop in model.get("properties", {}).items():
            assert "title" not in prop, f"{name}.{field}"


def test_protocol_md_states_every_field_limit() -> None:
    """docs/protocol.md's field-limits table is current (run make schema)."""
    doc = (REPO_ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    assert doc == with_limits_table(doc)
    assert "| SearchParams | `limit` | 1–50 |" in doc


def test_the_schema_is_valid_json_schema() -> None:
    """The document itself passes the 2020-12 metaschema."""
    jsonschema.Draft202012Validator.check_schema(build_schema())


@pytest.mark.parametrize(
    ("method", "params", "valid"),
    [
        ("vault/search", {"query": "kafka", "limit": 5}, True),
        ("vault/search", {"query": "kafka", "limit": 500}, False),
        ("vault/search", {"query": "kafka", "maxResults": 5}, False),
        ("chat/send", {"text": "hi", "conversationId": "abc"}, True),
        ("chat/send", {"text": "hi", "conversation_id": "abc"}, False),
        (
            "initialize",
            {"token": "t", "protocolVersion": 1, "client": {"name": "p", "version": "1"}},
            True,
        ),
        ("tools/execute", {"calls": [{"name": "read_note", "arguments": {"path": "a.md"}}]}, True),
    ],
)
def test_params_schemas_use_camel_case_and_refuse_extras(
    method: str, params: dict[str, Any], valid: bool
) -> None:
    """Params in the schema are camelCase, bounded and closed, like the server's validation."""
    ref = member(build_schema(), "Methods", method)["params"]
    if valid:
        validate(params, ref)
    else:
        with pytest.raises(jsonschema.ValidationError):
            validate(params, ref)


def test_result_schemas_describe_wire_results() -> None:
    """A chat/send result as the server sends it validates against its schema."""
    result = {
        "conversationId": "c1",
        "text": "Hi",
        "stopReason": "end_turn",
        "usage": {"inputTokens": 1, "outputTokens": 2, "cacheReadTokens": 0, "cacheWriteTokens": 0},
        "costUsd": None,
    }
    validate(result, member(build_schema(), "Methods", "chat/send")["result"])


def test_the_schema_holds_the_tool_arguments_notifications_and_error_codes() -> None:
    """What the plugin's generated types come from: each tool's argument model (the very
    schema the model is given), the write tools, every notification by the method name its
    model carries, and every error code with the name the plugin's ErrorCode uses."""
    from plugin_bridge.app.vault_tools import TOOL_ARGS, WRITE_TOOL_NAMES, WRITE_TOOLS
    from plugin_bridge.wire.errors import ERROR_MEANINGS
    from plugin_bridge.wire.models import CLIENT_NOTIFICATIONS, SERVER_NOTIFICATIONS

    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    tools = schema["$defs"]["ToolArguments"]["properties"]
    assert list(tools) == [model.TOOL for model in TOOL_ARGS]
    for model in TOOL_ARGS:
        committed = schema["$defs"][tools[model.TOOL]["$ref"].rsplit("/", 1)[-1]]
        assert set(committed["properties"]) == set(model.input_schema()["properties"])
    assert set(schema["writeTools"]) == {*WRITE_TOOL_NAMES, "complete_setup"}
    assert schema["writeTools"] == list(WRITE_TOOLS)
    assert _names(schema, "ServerNotifications") == {m.METHOD for m in SERVER_NOTIFICATIONS}
    assert _names(schema, "ClientNotifications") == {m.METHOD for m in CLIENT_NOTIFICATIONS}
    assert [(e["code"], e["name"]) for e in schema["errors"]] == [
        (int(code), code.name) for code in ERROR_MEANINGS
    ]
    generated = (REPO_ROOT / "obsidian-plugin/src/core/protocol.gen.ts").read_text("utf-8")
    for error in schema["errors"]:
        assert f": {error['code']},\n" in generated  # ErrorCode, generated from the schema
    assert f"export const PROTOCOL_VERSION = {schema['protocolVersion']};" in generated


def test_the_schema_carries_the_provider_profiles_and_close_codes() -> None:
    """Each provider's profile (the plugin's labels and key lists) and every close code the
    server and the plugin send (the plugin's CloseCode), as the code defines them."""
    from llm_service.profiles import PROFILES, PROVIDER_NAMES
    from plugin_bridge.wire.protocol import CLOSE_MEANINGS, CloseCode

    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    profiles = schema["providerProfiles"]
    assert [p["name"] for p in profiles] == list(PROVIDER_NAMES) == schema["providers"]
    for exported in profiles:
        profile = PROFILES[exported["name"]]
        assert exported["label"] == profile.label
        assert exported["keyVariable"] == profile.key_variable
        assert exported["needsKey"] is profile.needs_key
        assert exported["recommendedModels"] == list(profile.recommended_models)
    codes = {c["name"]: c["code"] for c in schema["closeCodes"]}
    assert codes == {code.name: int(code) for code in CLOSE_MEANINGS}
    assert set(CLOSE_MEANINGS) == set(CloseCode)
    assert {codes["UNAUTHORIZED"], codes["INIT_TIMEOUT"], codes["NOT_READING"]} == {
        4401,
        4408,
        4429,
    }
    generated = (REPO_ROOT / "obsidian-plugin/src/core/protocol.gen.ts").read_text("utf-8")
    assert "\tinitTimeout: 4408,\n" in generated
    assert '"label":"Anthropic"' in generated
