"""The protocol's JSON Schema, generated from the wire models (docs/protocol.schema.json).

One document: ``methods`` (params and result of each), ``notifications`` (both directions),
``serverRequests``, ``toolArguments`` (each tool's argument model) and ``errors``, all pointing
into ``$defs``, with the ``providers`` (and each one's profile: ``providerProfiles``), the
``writeTools`` and the ``closeCodes`` listed. Regenerate with
``python -m plugin_bridge schema > docs/protocol.schema.json`` (``make schema``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, models_json_schema

from llm_service.profiles import PROFILES, PROVIDER_NAMES
from plugin_bridge.app.vault_tools import TOOL_ARGS, WRITE_TOOLS
from plugin_bridge.handlers import build_router
from plugin_bridge.wire.errors import ERROR_MEANINGS
from plugin_bridge.wire.models import CLIENT_NOTIFICATIONS, SERVER_NOTIFICATIONS, SERVER_REQUESTS
from plugin_bridge.wire.protocol import CLOSE_MEANINGS, MAX_IN_FLIGHT, PROTOCOL_VERSION
from plugin_bridge.wire.transport import MAX_FRAME_BYTES

if TYPE_CHECKING:
    from plugin_bridge.wire.rpc import Method

DESCRIPTION: Final = (
    f"JSON-RPC 2.0 over WebSocket text frames, protocolVersion {PROTOCOL_VERSION}. "
    "Generated from plugin_bridge/wire/*models.py: do not edit; see docs/protocol.md."
)


class _Generator(GenerateJsonSchema):
    """Pydantic's generator without a title on every field: titles stay on models only, so
    json-schema-to-typescript names the models and nothing else (no ``Text1``, ``Text2``)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def build_schema() -> dict[str, Any]:
    """The whole protocol as one JSON Schema document whose root object lists every method,
    notification and server request (so a generator reaches every definition from it)."""
    methods = build_router().methods
    refs, definitions = models_json_schema(
        _wanted(methods.values()),
        by_alias=True,
        ref_template="#/$defs/{model}",
        schema_generator=_Generator,
    )

    def ref(model: type[BaseModel], mode: JsonSchemaMode) -> Any:
        return refs[(model, mode)]

    groups = _groups(methods, ref)
    defs = dict(definitions.get("$defs", {}))
    for title, members in groups.items():
        defs[title] = {"title": title, **_closed(members)}
    root = {title[0].lower() + title[1:]: {"$ref": f"#/$defs/{title}"} for title in groups}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "obsidian-ai-bridge protocol",
        "description": DESCRIPTION,
        "protocolVersion": PROTOCOL_VERSION,
        "providers": list(PROVIDER_NAMES),
        "providerProfiles": _provider_profiles(),
        "writeTools": list(WRITE_TOOLS),
        "limits": {"maxFrameBytes": MAX_FRAME_BYTES, "maxRequestsInFlight": MAX_IN_FLIGHT},
        "errors": [
            {"code": int(code), "name": code.name, "meaning": meaning}
            for code, meaning in ERROR_MEANINGS.items()
        ],
        "closeCodes": [
            {"code": int(code), "name": code.name, "meaning": meaning}
            for code, meaning in CLOSE_MEANINGS.items()
        ],
        **_closed(root),
        "$defs": defs,
    }


def _groups(
    methods: Mapping[str, Method[Any]], ref: Callable[[type[BaseModel], JsonSchemaMode], Any]
) -> dict[str, dict[str, Any]]:
    """The root's groups (methods, notifications both ways, server requests, tool arguments),
    each member pointing (``ref``) at its models' definitions."""
    return {
        "Methods": {
            name: _entry(
                methods[name].summary,
                params=ref(methods[name].request.params, "validation"),
                result=ref(methods[name].request.result, "serialization"),
            )
            for name in sorted(methods)
        },
        "ClientNotifications": {
            model.METHOD: _entry(None, params=ref(model, "validation"))
            for model in CLIENT_NOTIFICATIONS
        },
        "ServerNotifications": {
            model.METHOD: _entry(None, params=ref(model, "serialization"))
            for model in SERVER_NOTIFICATIONS
        },
        "ServerRequests": {
            request.method: _entry(
                None,
                params=ref(request.params, "serialization"),
                result=ref(request.result, "validation"),
            )
            for request in SERVER_REQUESTS
        },
        "ToolArguments": {model.TOOL: ref(model, "validation") for model in TOOL_ARGS},
    }


def _provider_profiles() -> list[dict[str, Any]]:
    """Each provider's profile, as the plugin's settings tab reads it."""
    return [
        {
            "name": profile.name,
            "label": profile.label,
            "keyVariable": profile.key_variable,
            "baseUrlVariable": profile.base_url_variable,
            "defaultOrigin": profile.default_origin,
            "needsKey": profile.needs_key,
            "local": profile.local,
            "defaultBaseUrl": profile.default_base_url,
            "recommendedModels": list(profile.recommended_models),
        }
        for profile in PROFILES.values()
    ]


def _wanted(methods: Iterable[Method[Any]]) -> list[tuple[type[BaseModel], JsonSchemaMode]]:
    """Every model of the protocol, each in the direction it travels (params are validated,
    results serialized), once."""
    wanted: list[tuple[type[BaseModel], JsonSchemaMode]] = []
    for method in methods:
        wanted += [(method.request.params, "validation"), (method.request.result, "serialization")]
    wanted += [(model, "validation") for model in CLIENT_NOTIFICATIONS]
    wanted += [(model, "serialization") for model in SERVER_NOTIFICATIONS]
    for request in SERVER_REQUESTS:
        wanted += [(request.params, "serialization"), (request.result, "validation")]
    wanted += [(model, "validation") for model in TOOL_ARGS]
    return list(dict.fromkeys(wanted))


def _entry(description: str | None, **parts: Any) -> dict[str, Any]:
    """One member of a group: its description, if any, and its closed parts."""
    described = {"description": description} if description else {}
    return {**described, **_closed(parts)}


def _closed(properties: dict[str, Any]) -> dict[str, Any]:
    """An object schema with exactly these (required) properties."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def member(schema: dict[str, Any], group: str, name: str) -> dict[str, Any]:
    """One entry of a group (``Methods``, ``ServerNotifications``, ...): its params and result."""
    entry: dict[str, Any] = schema["$defs"][group]["properties"][name]
    return {"description": entry.get("description"), **entry["properties"]}


def field_limits(schema: dict[str, Any]) -> list[tuple[str, str, str]]:
    """Every bound the schema puts on a field: (model, field, limit) rows."""
    rows: list[tuple[str, str, str]] = []
    for name, model in sorted(schema["$defs"].items()):
        for field, prop in model.get("properties", {}).items():
            bounds = [_bound(option) for option in [prop, *prop.get("anyOf", [])]]
            shown = ", ".join(b for b in bounds if b)
            if shown:
                rows.append((name, field, shown))
    return rows


def _bound(prop: dict[str, Any]) -> str:
    if "exclusiveMinimum" in prop:
        bound = f"more than {prop['exclusiveMinimum']}"
        return bound + (f", at most {prop['maximum']}" if "maximum" in prop else "")
    for low, high, unit in (
        ("minLength", "maxLength", " characters"),
        ("minItems", "maxItems", " items"),
        ("minimum", "maximum", ""),
    ):
        if low in prop and high in prop:
            if prop[low] == prop[high]:
                return f"exactly {prop[low]}{unit}"
            return f"{prop[low]}–{prop[high]}{unit}"
        if high in prop:
            return f"at most {prop[high]}{unit}"
        if low in prop:
            return f"at least {prop[low]}{unit}"
    return ""


LIMITS_START: Final = "<!-- field limits: generated by make schema -->"
LIMITS_END: Final = "<!-- end of field limits -->"


def limits_table() -> str:
    """The Markdown table of :func:`field_limits` that docs/protocol.md holds."""
    lines = ["| model | field | limit |", "|---|---|---|"]
    lines += [f"| {m} | `{f}` | {limit} |" for m, f, limit in field_limits(build_schema())]
    return "\n".join(lines) + "\n"


def with_limits_table(doc: str) -> str:
    """``doc`` (docs/protocol.md) with the table between its markers made current."""
    head, _, rest = doc.partition(LIMITS_START)
    _, _, tail = rest.partition(LIMITS_END)
    return f"{head}{LIMITS_START}\n{limits_table()}{LIMITS_END}{tail}"


def schema_text() -> str:
    """The schema as the committed file holds it."""
    return json.dumps(build_schema(), indent=2, ensure_ascii=False) + "\n"
