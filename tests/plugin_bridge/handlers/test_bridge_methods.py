"""Vault, session and tool methods over a real socket, and the error codes they answer."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from llm_service import LLMError, ScriptedProvider
from llm_service.catalog import ModelInfo
from plugin_bridge.vault.errors import VaultError
from plugin_bridge.wire.errors import WireCode, to_wire_error
from tests.helpers.bridge import init_params, running_bridge


class ModelListingProvider(ScriptedProvider):
    """A scripted provider whose model list is given (or fails)."""

    def __init__(self, models: list[str] | LLMError) -> None:
        super().__init__()
        self.models = models
        self.asked = 0

    async def _list_models_once(self) -> list[ModelInfo]:
        self.asked += 1
        if isinstance(self.models, LLMError):
            raise self.models
        return [ModelInfo(model) for model in self.models]


async def test_search_finds_notes_with_snippets(tmp_path: Path) -> None:
    """vault/search returns path, title, score and a highlighted snippet, best first."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        result = await wire.result("vault/search", {"query": "kafka", "limit": 5})
        paths = [hit["path"] for hit in result["results"]]
        assert paths[0] == "Projects/Kafka pipeline.md"
        assert "Reference/Event streaming.md" in paths
        assert len(paths) <= 5
        top = result["results"][0]
        assert top["title"] == "Kafka pipeline"
        assert "**" in top["snippet"]
        assert result["pending"] == 0
        assert result["tookMs"] >= 0


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("味噌汁", "Languages/日本語の勉強.md"),
        ("跑步", "Languages/学习中文.md"),
        ("tag:cooking", "Areas/Cooking/Sourdough.md"),
        ("path:Journal", "Journal/2025-03-14.md"),
    ],
)
async def test_search_handles_cjk_tags_and_paths(tmp_path: Path, query: str, expected: str) -> None:
    """Japanese, Chinese, tag: and path: queries find their notes."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        result = await wire.result("vault/search", {"query": query})
        assert expected in [hit["path"] for hit in result["results"]]


async def test_note_read_returns_content_and_hash(tmp_path: Path) -> None:
    """note/read returns the text and the sha256 of the bytes."""
    import hashlib

    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        result = await wire.result("note/read", {"path": "Areas/Health/Sleep.md"})
        raw = (bridge.vault.root / "Areas/Health/Sleep.md").read_bytes()
        assert result["content"] == raw.decode()
        assert result["hash"] == hashlib.sha256(raw).hexdigest()


async def test_note_create_writes_and_is_searchable(tmp_path: Path) -> None:
    """note/create writes the file, returns its hash, and search sees it at once."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        created = await wire.result(
            "note/create", {"path": "Ideas/Zeppelin.md", "content": "# Zeppelin\nAirships\n"}
        )
        assert created["path"] == "Ideas/Zeppelin.md"
        assert (bridge.vault.root / "Ideas/Zeppelin.md").read_text() == "# Zeppelin\nAirships\n"
        found = await wire.result("vault/search", {"query": "airships"})
        assert [hit["path"] for hit in found["results"]] == ["Ideas/Zeppelin.md"]


async def test_note_create_refuses_to_overwrite_unless_asked(tmp_path: Path) -> None:
    """An existing note is -32021; with overwrite it is replaced."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        params: dict[str, Any] = {"path": "Inbox.md", "content": "new\n"}
        error = await wire.error("note/create", params)
        assert error["code"] == -32021
        assert error["data"]["reason"] == "exists"
        await wire.result("note/create", {**params, "overwrite": True})
        assert (bridge.vault.root / "Inbox.md").read_text() == "new\n"


@pytest.mark.parametrize(
    ("method", "params", "code", "reason"),
    [
        ("note/read", {"path": "Nope.md"}, -32020, "not_found"),
        ("note/read", {"path": "../outside.md"}, -32023, "forbidden_path"),
        ("note/read", {"path": "/etc/passwd"}, -32023, "forbidden_path"),
        ("note/read", {"path": ".obsidian/app.json"}, -32023, "forbidden_path"),
        ("note/create", {"path": "../escape.md", "content": "x"}, -32023, "forbidden_path"),
        ("note/read", {"path": "binary.md"}, -32024, "not_text"),
        ("note/read", {"path": "huge.md"}, -32024, "too_large"),
    ],
)
async def test_vault_errors_map_to_their_codes(
    tmp_path: Path, method: str, params: dict[str, Any], code: int, reason: str
) -> None:
    """Each vault refusal has its code and data.reason; the message is one sentence."""
    async with running_bridge(tmp_path) as bridge:
        (bridge.vault.root / "binary.md").write_bytes(b"\x00\x01\x02\xff" * 100)
        (bridge.vault.root / "huge.md").write_text("a" * (5 * 1024 * 1024 + 10))
        wire = await bridge.wire()
        error = await wire.error(method, params)
        assert error["code"] == code
        assert error["data"]["reason"] == reason
        assert error["message"].endswith(".")


@pytest.mark.parametrize(
    ("code", "wire_code"),
    [
        ("not_found", -32020),
        ("exists", -32021),
        ("conflict", -32022),
        ("forbidden_path", -32023),
        ("too_large", -32024),
        ("not_text", -32024),
        ("write_failed", -32025),
    ],
)
def test_every_vault_error_code_has_a_wire_code(code: Any, wire_code: int) -> None:
    """The error mapper covers every VaultError code (conflict has no wire method yet)."""
    error = to_wire_error(VaultError(code, "Refused.", path="a.md"))
    assert (error.code, error.data) == (wire_code, {"reason": code, "path": "a.md"})


def test_llm_errors_carry_code_retryable_and_retry_after() -> None:
    """LLMError maps to -32010 with its code, retryable flag and Retry-After."""
    error = to_wire_error(
        LLMError(
            "Anthropic rate limit reached (429); retry in 20 s.",
            code="rate_limit",
            retry_after=20.0,
        )
    )
    assert error.code == WireCode.PROVIDER_ERROR
    assert error.data == {"code": "rate_limit", "retryable": True, "retryAfter": 20.0}
    assert error.message.startswith("Anthropic rate limit")


@pytest.mark.parametrize(
    ("method", "params", "field"),
    [
        ("vault/search", {}, "'query'"),
        ("vault/search", {"query": "x", "limit": 0}, "'limit'"),
        ("vault/search", {"query": "x", "limit": "5"}, "'limit'"),
        ("vault/search", {"query": "x", "extra": 1}, "'extra'"),
        ("note/create", {"path": "a.md"}, "'content'"),
        ("chat/send", {"text": ""}, "'text'"),
        ("tools/execute", {"calls": []}, "'calls'"),
        ("tools/list", {"format": "gemini"}, "'format'"),
    ],
)
async def test_invalid_params_name_the_field(
    tmp_path: Path, method: str, params: dict[str, Any], field: str
) -> None:
    """Params failing the schema are -32602 and the message names the field."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        error = await wire.error(method, params)
        assert error["code"] == -32602
        assert field in error["message"]


async def test_positional_params_are_refused(tmp_path: Path) -> None:
    """params as an array is -32602: every method takes named params."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        assert (await wire.error("vault/search", ["kafka"]))["code"] == -32602


async def test_unknown_methods_are_not_found(tmp_path: Path) -> None:
    """An unknown method is -32601 naming it."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        error = await wire.error("vault/delete", {})
        assert error["code"] == -32601
        assert "vault/delete" in error["message"]


async def test_internal_errors_leak_nothing_and_are_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """An unexpected exception is a bare -32603 'Internal error.'; the traceback goes to the log."""

    def broken(*args: Any, **kw: Any) -> Any:
        raise RuntimeError("secret internals")

    async with running_bridge(tmp_path) as bridge:
        monkeypatch.setattr(bridge.vault.index, "execute", broken)
        wire = await bridge.wire()
        with caplog.at_level(logging.ERROR, logger="plugin_bridge"):
            error = await wire.error("vault/search", {"query": "x"})
        assert error == {"code": -32603, "message": "Internal error."}
        assert "secret internals" in caplog.text
        assert (await wire.result("health"))["status"] == "ok"


async def test_health_reports_index_and_provider(tmp_path: Path) -> None:
    """health says ok, the version, provider/model (null without), the index size and
    progress, every tool format tools/list takes and how many tools a conversation gets."""
    from llm_service.pricing import RECOMMENDED_MODELS

    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        health = await wire.result("health")
        assert health["status"] == "ok"
        assert health["provider"] is None
        assert health["model"] is None
        assert health["index"] == {
            "notes": 16,
            "pending": 0,
            "done": 0,
            "total": 0,
            "embedder": None,
            "unreadablePdfs": 0,
        }
        assert health["recommendedModels"] == RECOMMENDED_MODELS
        assert health["supportedFormats"] == ["anthropic", "openai", "ollama", "lmstudio", "vllm"]
        assert health["toolCount"] == len(bridge.app.access.tools.get_registered_tools()) == 7
        for tool_format in health["supportedFormats"]:
            await wire.result("tools/list", {"format": tool_format})
    provider = ScriptedProvider()
    async with running_bridge(
        tmp_path / "b", provider=provider, provider_name="anthropic"
    ) as bridge:
        health = await (await bridge.wire()).result("health")
        assert (health["provider"], health["model"]) == ("anthropic", "test-model")


async def test_models_list_without_provider_is_no_provider(tmp_path: Path) -> None:
    """models/list and chat without a provider answer -32011 saying what to set."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        for method, params in [("models/list", None), ("chat/send", {"text": "hi"})]:
            error = await wire.error(method, params)
            assert error["code"] == -32011
            assert "ANTHROPIC_API_KEY" in error["message"]


async def test_no_provider_in_the_plugin_names_its_setup_card(tmp_path: Path) -> None:
    """The plugin (client ai-bridge-assistant) is told where in Obsidian to set a provider, not
    which flags to pass; the same server still tells the CLI its flags."""
    async with running_bridge(tmp_path) as bridge:
        plugin = await bridge.wire(initialize=False)
        hello = init_params(bridge.app.token)
        hello["client"] = {"name": "ai-bridge-assistant", "version": "0.1.0"}
        await plugin.result("initialize", hello)
        cli = await bridge.wire()
        in_plugin = await plugin.error("chat/send", {"text": "hi"})
        in_cli = await cli.error("chat/send", {"text": "hi"})
    assert in_plugin["code"] == in_cli["code"] == -32011
    assert "setup card" in in_plugin["message"] and "Settings" in in_plugin["message"]
    assert "ANTHROPIC_API_KEY" not in in_plugin["message"]
    assert "ANTHROPIC_API_KEY" in in_cli["message"] and "--provider" in in_cli["message"]


async def test_models_list_asks_the_provider_then_serves_its_cache(tmp_path: Path) -> None:
    """models/list returns ModelInfo from the provider, then from the day's cache; refresh asks
    again; prices and limits come from the catalog, null where unknown."""
    provider = ModelListingProvider(["claude-haiku-5-5", "my-local-model"])
    async with running_bridge(tmp_path, provider=provider, provider_name="anthropic") as bridge:
        wire = await bridge.wire()
        first = await wire.result("models/list")
        second = await wire.result("models/list")
        third = await wire.result("models/list", {"refresh": True})
    assert (first["source"], second["source"], third["source"]) == ("api", "cache", "api")
    assert provider.asked == 2
    haiku, local = first["models"]
    assert haiku["id"] == "claude-haiku-5-5" and haiku["inputPricePerMtok"] == 0.10
    assert haiku["contextWindow"] and haiku["supportsTools"] is True
    assert local["inputPricePerMtok"] is None and local["contextWindow"] is None


async def test_models_list_offline_falls_back_and_other_errors_are_32010(tmp_path: Path) -> None:
    """An unreachable provider gives the built-in catalog; a refused key is -32010 with data."""
    offline = ModelListingProvider(LLMError("Ollama is not reachable.", code="network_error"))
    async with running_bridge(tmp_path, provider=offline, provider_name="ollama") as bridge:
        result = await (await bridge.wire()).result("models/list")
    assert result["source"] == "catalog" and result["models"]
    refused = ModelListingProvider(LLMError("Anthropic rejected the API key.", code="auth_error"))
    async with running_bridge(tmp_path / "b", provider=refused) as bridge:
        error = await (await bridge.wire()).error("models/list")
    assert error["code"] == -32010
    assert error["data"] == {"code": "auth_error", "retryable": False, "retryAfter": None}


@pytest.mark.parametrize(
    ("fmt", "check"),
    [
        ("anthropic", lambda tool: "input_schema" in tool and "name" in tool),
        ("openai", lambda tool: tool["type"] == "function" and "parameters" in tool["function"]),
        ("ollama", lambda tool: tool["type"] == "function" and "parameters" in tool["function"]),
        ("lmstudio", lambda tool: strict_mode(tool)),
        ("vllm", lambda tool: tool["type"] == "function" and "parameters" in tool["function"]),
    ],
)
async def test_tools_list_speaks_each_provider_format(tmp_path: Path, fmt: str, check: Any) -> None:
    """tools/list returns the vault tools in the requested provider's format."""
    from plugin_bridge.app.vault_tools import VAULT_TOOL_NAMES

    async with running_bridge(tmp_path) as bridge:
        tools = (await (await bridge.wire()).result("tools/list", {"format": fmt}))["tools"]
        assert len(tools) == len(VAULT_TOOL_NAMES)
        assert all(check(tool) for tool in tools)


def strict_mode(tool: dict[str, Any]) -> bool:
    """OpenAI's function shape with strict: true, every object's properties all required and
    closed, and no defaults (what strict mode demands)."""

    def strict(schema: dict[str, Any]) -> bool:
        if "default" in schema:
            return False
        if "items" in schema and not strict(schema["items"]):
            return False
        if schema.get("type") != "object":
            return True
        properties = schema["properties"]
        return (
            schema["additionalProperties"] is False
            and sorted(schema["required"]) == sorted(properties)
            and all(strict(sub) for sub in properties.values())
        )

    function = tool["function"]
    return (
        tool["type"] == "function" and function["strict"] is True and strict(function["parameters"])
    )


async def test_strict_tools_take_null_for_an_optional_argument(tmp_path: Path) -> None:
    """LM Studio's strict tools make optional arguments nullable; tools/execute reads a null as
    "not given" (the default applies), while a null for a required one is still invalid."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        tools = (await wire.result("tools/list", {"format": "lmstudio"}))["tools"]
        listing = next(t for t in tools if t["function"]["name"] == "list_notes")
        assert listing["function"]["parameters"]["properties"]["limit"]["type"] == [
            "integer",
            "null",
        ]
        result = await wire.result(
            "tools/execute",
            {
                "calls": [
                    {"name": "list_notes", "arguments": {"folder": None, "limit": None}},
                    {"name": "read_note", "arguments": {"path": None}},
                ]
            },
        )
        assert [r["isError"] for r in result["results"]] == [False]
        assert "Inbox.md" in result["results"][0]["content"]  # the default limit of 10
        assert [c["index"] for c in result["invalidCalls"]] == [1]


async def test_tools_list_defaults_to_the_configured_provider(tmp_path: Path) -> None:
    """Without format, the configured provider's format is used (anthropic without one)."""
    async with running_bridge(tmp_path) as bridge:
        tools = (await (await bridge.wire()).result("tools/list"))["tools"]
        assert "input_schema" in tools[0]
    provider = ScriptedProvider()
    async with running_bridge(tmp_path / "b", provider=provider, provider_name="openai") as bridge:
        tools = (await (await bridge.wire()).result("tools/list"))["tools"]
        assert tools[0]["type"] == "function"


async def test_tools_execute_runs_valid_calls_and_reports_invalid_ones(tmp_path: Path) -> None:
    """Valid calls run in order without a provider; unknown names and bad arguments are not run."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        result = await wire.result(
            "tools/execute",
            {
                "calls": [
                    {"name": "search_notes", "arguments": {"query": "sourdough"}},
                    {"name": "launch_rockets", "arguments": {}},
                    {"name": "read_note", "arguments": {}},
                    {"name": "read_note", "arguments": {"path": "Areas/Health/Sleep.md"}},
                    {"name": "read_note", "arguments": {"path": "Missing.md"}},
                ]
            },
        )
        names = [r["name"] for r in result["results"]]
        assert names == ["search_notes", "read_note", "read_note"]
        assert "Sourdough" in result["results"][0]["content"]
        assert "caffeine" in result["results"][1]["content"]
        assert result["results"][2]["isError"] is True
        invalid = {(c["index"], c["name"]) for c in result["invalidCalls"]}
        assert invalid == {(1, "launch_rockets"), (2, "read_note")}
        reasons = " ".join(c["reason"] for c in result["invalidCalls"])
        assert "Unknown tool" in reasons
        assert "path" in reasons


async def test_tools_execute_asks_before_writing(tmp_path: Path) -> None:
    """A write tool sends tool/confirm with a diff; approved, it runs."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        result = await wire.result(
            "tools/execute",
            {
                "calls": [
                    {"name": "create_note", "arguments": {"path": "New.md", "content": "hi\n"}}
                ]
            },
            answer=lambda method, params: {"approved": True},
        )
        assert result["results"][0]["isError"] is False
        assert (bridge.vault.root / "New.md").read_text() == "hi\n"
        (confirm,) = wire.server_requests
        assert confirm["method"] == "tool/confirm"
        assert confirm["params"]["tool"] == "create_note"
        assert "+hi" in confirm["params"]["preview"]


async def test_tools_execute_stops_at_a_denied_call(tmp_path: Path) -> None:
    """A denied call ends the run with -32030 carrying the results of the calls before it."""
    async with running_bridge(tmp_path) as bridge:
        wire = await bridge.wire()
        error = await wire.error(
            "tools/execute",
            {
                "calls": [
                    {"name": "list_notes", "arguments": {"folder": "Journal"}},
                    {"name": "create_note", "arguments": {"path": "No.md", "content": "x"}},
                    {"name": "list_notes", "arguments": {}},
                ]
            },
            answer=lambda method, params: {"approved": False},
        )
        assert error["code"] == -32030
        assert error["data"]["index"] == 1
        assert error["data"]["name"] == "create_note"
        assert [r["name"] for r in error["data"]["results"]] == ["list_notes"]
        assert not (bridge.vault.root / "No.md").exists()


async def test_initialize_says_who_the_connection_is(tmp_path: Path) -> None:
    """The info file's token is the owner; a client key is its name and scope (a phone's
    pairing says "Connected to HOST as NAME" and what the key may do)."""
    from tests.helpers.bridge import init_params

    async with running_bridge(tmp_path) as bridge:
        key = bridge.app.clients.add("phone", "write")
        owner = await (await bridge.wire(initialize=False)).result(
            "initialize", init_params(bridge.app.token)
        )
        phone = await (await bridge.wire(initialize=False)).result("initialize", init_params(key))
    assert owner["caller"] == {"name": "owner", "scope": "owner"}
    assert phone["caller"] == {"name": "phone", "scope": "write"}
