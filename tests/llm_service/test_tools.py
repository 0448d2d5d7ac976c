"""ToolRegistry: registration checks, argument validation, permissions, timeouts, results."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import threading
from typing import Any

import pytest

from llm_service.messages import ToolCall, ToolSpec
from llm_service.tools import ToolRegistry

SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1},
        "filters": {
            "type": "object",
            "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


def _echo(arguments: dict[str, Any]) -> str:
    return f"found {arguments['query']}"


def _registry(**kw: Any) -> ToolRegistry:
    registry = ToolRegistry(**kw)
    registry.register_tool("search_notes", "Search the vault.", SEARCH_SCHEMA, _echo)
    registry.register_tool("read_note", "Read a note.", {"type": "object"}, lambda a: "text")
    return registry


def _call(name: str = "search_notes", **arguments: Any) -> ToolCall:
    return ToolCall("call_1", name, arguments)


# -- registration ---------------------------------------------------------------------------


def test_registered_tools_are_listed_in_registration_order() -> None:
    """tool_specs returns each tool's spec, in the order registered; get_registered_tools their
    names."""
    assert _registry().get_registered_tools() == ["search_notes", "read_note"]
    specs = _registry().tool_specs()
    assert [s.name for s in specs] == ["search_notes", "read_note"]
    assert specs[0] == ToolSpec("search_notes", "Search the vault.", SEARCH_SCHEMA)


def test_registering_a_name_again_replaces_the_tool_and_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Names are unique: a second registration replaces the first, logged at INFO."""
    registry = _registry()
    with caplog.at_level(logging.INFO, logger="llm_service.tools"):
        registry.register_tool("search_notes", "New.", {"type": "object"}, _echo, permission="ask")
    assert [s.description for s in registry.tool_specs()] == ["New.", "Read a note."]
    assert registry.permission("search_notes") == "ask"
    assert any(
        r.levelno == logging.INFO and "search_notes" in r.getMessage() for r in caplog.records
    )


@pytest.mark.parametrize("name", ["", "has space", "dots.not.allowed", "x" * 65, "ünïcode"])
def test_invalid_tool_names_are_refused(name: str) -> None:
    """Names must match ^[a-zA-Z0-9_-]{1,64}$."""
    with pytest.raises(ValueError, match="invalid"):
        ToolRegistry().register_tool(name, "d", {"type": "object"}, _echo)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"q": {"type": "strnig"}}},
        {"type": "object", "required": "query"},
        {"type": "object", "properties": {"n": {"minimum": "one"}}},
    ],
)
def test_invalid_json_schemas_are_refused(schema: dict[str, Any]) -> None:
    """The input schema is checked against its JSON Schema metaschema at registration."""
    with pytest.raises(ValueError, match="invalid input_schema"):
        ToolRegistry().register_tool("t", "d", schema, _echo)


@pytest.mark.parametrize("schema", [{"type": "string"}, {}, ["type", "object"]])
def test_schemas_must_describe_an_object(schema: Any) -> None:
    """Tool arguments are a JSON object, so the schema's type must be "object"."""
    with pytest.raises(ValueError, match="object"):
        ToolRegistry().register_tool("t", "d", schema, _echo)


def test_bad_permission_timeout_or_handler_are_refused() -> None:
    """Unknown permissions, non-positive timeouts and non-callables raise ValueError."""
    registry = ToolRegistry()
    with pytest.raises(ValueError, match="permission"):
        registry.register_tool("t", "d", {"type": "object"}, _echo, permission="maybe")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout"):
        registry.register_tool("t", "d", {"type": "object"}, _echo, timeout=0)
    with pytest.raises(ValueError, match="callable"):
        registry.register_tool("t", "d", {"type": "object"}, "not a function")  # type: ignore[arg-type]
    assert registry.get_registered_tools() == []


def test_the_registered_schema_is_a_private_copy() -> None:
    """Mutating the caller's schema later does not change the registered tool."""
    schema: dict[str, Any] = {"type": "object", "properties": {"q": {"type": "string"}}}
    registry = ToolRegistry()
    registry.register_tool("t", "d", schema, _echo)
    schema["properties"]["q"]["type"] = "integer"
    assert registry.validate_tool_call(ToolCall("c", "t", {"q": "text"})) is None


def test_permission_of_an_unknown_tool_is_none() -> None:
    """permission() answers None for names that are not registered."""
    assert _registry().permission("nope") is None
    assert _registry().permission("read_note") == "allow"


def test_importing_the_package_does_not_import_jsonschema() -> None:
    """jsonschema loads on first registration, not with llm_service or llm_service.tools."""
    code = (
        "import sys, llm_service, llm_service.tools, llm_service.service; "
        "assert 'jsonschema' not in sys.modules, 'jsonschema imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=30)


# -- validation -----------------------------------------------------------------------------


def test_valid_call_passes_validation() -> None:
    """A known tool with schema-valid arguments validates to None."""
    assert _registry().validate_tool_call(_call(query="kafka", limit=3)) is None


def test_unknown_tool_names_the_available_ones() -> None:
    """An unknown tool's reason lists every registered tool."""
    reason = _registry().validate_tool_call(_call("delete_everything"))
    assert reason == "Unknown tool 'delete_everything'. Available: search_notes, read_note."


def test_unknown_tool_with_no_tools_registered() -> None:
    """With no tools at all the reason says so."""
    assert ToolRegistry().validate_tool_call(_call("x")) == "Unknown tool 'x'. Available: none."


def test_missing_required_field_is_named() -> None:
    """A missing required property is reported with its name."""
    reason = _registry().validate_tool_call(_call(limit=2))
    assert reason == "Invalid arguments for 'search_notes': 'query' is a required property."


def test_wrong_type_names_the_field() -> None:
    """A wrongly typed value is reported with the field's path."""
    reason = _registry().validate_tool_call(_call(query="q", limit="three"))
    assert (
        reason
        == "Invalid arguments for 'search_notes': 'three' is not of type 'integer' (at 'limit')."
    )


def test_nested_field_paths_are_spelled_out() -> None:
    """Errors inside nested objects and arrays give a dotted path with indexes."""
    reason = _registry().validate_tool_call(_call(query="q", filters={"tags": ["a", 7]}))
    assert reason is not None and "(at 'filters.tags[1]')" in reason


def test_unexpected_fields_are_reported() -> None:
    """additionalProperties: false rejects unknown keys, naming them."""
    reason = _registry().validate_tool_call(_call(query="q", color="red"))
    assert reason is not None and "'color' was unexpected" in reason


def test_long_offending_values_are_cut() -> None:
    """A huge argument value is not echoed back whole."""
    reason = _registry().validate_tool_call(_call(query="q", limit="x" * 5000))
    assert reason is not None and len(reason) < 400


def test_malformed_argument_json_is_reported() -> None:
    """A parse_error set by the provider is the reason, before any schema check."""
    call = ToolCall("c", "search_notes", {}, parse_error="expected ',' near '{\"query\" \"x'")
    reason = _registry().validate_tool_call(call)
    assert reason is not None
    assert reason.startswith("Invalid arguments for 'search_notes': expected ','")
    assert reason.endswith("send the arguments as one JSON object.")


# -- running --------------------------------------------------------------------------------


async def test_sync_handlers_run_in_a_worker_thread() -> None:
    """A sync handler runs off the event loop thread and its str result is returned as is."""
    seen: list[threading.Thread] = []

    def handler(arguments: dict[str, Any]) -> str:
        seen.append(threading.current_thread())
        return "plain text ✓"

    registry = ToolRegistry()
    registry.register_tool("t", "d", {"type": "object"}, handler)
    result = await registry.run_tool_call(ToolCall("c7", "t", {}))
    assert (result.tool_call_id, result.content, result.is_error) == ("c7", "plain text ✓", False)
    assert seen and seen[0] is not threading.main_thread()


async def test_async_handlers_are_awaited_on_the_loop() -> None:
    """An async handler runs on the event loop thread and receives the arguments."""

    async def handler(arguments: dict[str, Any]) -> str:
        assert threading.current_thread() is threading.main_thread()
        return f"query={arguments['query']}"

    registry = ToolRegistry()
    registry.register_tool("t", "d", SEARCH_SCHEMA, handler)
    result = await registry.run_tool_call(ToolCall("c", "t", {"query": "kafka"}))
    assert result.content == "query=kafka" and not result.is_error


async def test_sync_callables_returning_awaitables_are_awaited() -> None:
    """A plain callable returning a coroutine (e.g. a lambda or partial) still works."""

    async def work() -> str:
        return "done"

    registry = ToolRegistry()
    registry.register_tool("t", "d", {"type": "object"}, lambda arguments: work())
    assert (await registry.run_tool_call(ToolCall("c", "t", {}))).content == "done"


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ({"path": "Notes/Café.md", "n": 1}, '{"path":"Notes/Café.md","n":1}'),
        (["a", {"b": None}], '["a",{"b":null}]'),
    ],
)
async def test_dict_and_list_results_become_compact_json(output: Any, expected: str) -> None:
    """Dicts and lists are serialised compactly, non-ASCII kept as is."""
    registry = ToolRegistry()
    registry.register_tool("t", "d", {"type": "object"}, lambda arguments: output)
    assert (await registry.run_tool_call(ToolCall("c", "t", {}))).content == expected


@pytest.mark.parametrize("output", [None, 42, {"when": object()}])
async def test_unusable_results_become_errors(output: Any) -> None:
    """A result that is not str, dict or list (or not JSON-encodable) becomes an error."""
    registry = ToolRegistry()
    registry.register_tool("t", "d", {"type": "object"}, lambda arguments: output)
    result = await registry.run_tool_call(ToolCall("c", "t", {}))
    assert result.is_error and result.content.startswith("Tool 't' failed: ")


async def test_handler_exceptions_become_error_results() -> None:
    """An exception in the handler becomes "Tool 'x' failed: <message>"."""

    def handler(arguments: dict[str, Any]) -> str:
        raise FileNotFoundError("Note 'Ideas.md' does not exist.")

    registry = ToolRegistry()
    registry.register_tool("read_note", "d", {"type": "object"}, handler)
    result = await registry.run_tool_call(ToolCall("c", "read_note", {}))
    assert result.is_error
    assert result.content == "Tool 'read_note' failed: Note 'Ideas.md' does not exist."


async def test_exceptions_without_a_message_name_their_type() -> None:
    """An exception with an empty message is reported by its type name."""

    async def handler(arguments: dict[str, Any]) -> str:
        raise KeyError

    registry = ToolRegistry()
    registry.register_tool("t", "d", {"type": "object"}, handler)
    assert (
        await registry.run_tool_call(ToolCall("c", "t", {}))
    ).content == "Tool 't' failed: KeyError"


async def test_slow_async_handlers_time_out() -> None:
    """A handler running past its timeout is abandoned with a timed-out error result."""
    started = asyncio.Event()

    async def handler(arguments: dict[str, Any]) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    registry = ToolRegistry()
    registry.register_tool("slow", "d", {"type": "object"}, handler, timeout=0.05)
    result = await asyncio.wait_for(registry.run_tool_call(ToolCall("c", "slow", {})), 5)
    assert started.is_set()
    assert result.is_error and result.content == "Tool 'slow' timed out after 0.05 s."


async def test_slow_sync_handlers_time_out() -> None:
    """A blocking sync handler is abandoned after its timeout (its thread finishes later)."""
    release = threading.Event()
    registry = ToolRegistry()
    registry.register_tool(
        "block", "d", {"type": "object"}, lambda a: release.wait(5), timeout=0.05
    )
    try:
        result = await asyncio.wait_for(registry.run_tool_call(ToolCall("c", "block", {})), 5)
    finally:
        release.set()
    assert result.content == "Tool 'block' timed out after 0.05 s."


def test_default_timeout_is_thirty_seconds() -> None:
    """Without a timeout argument a tool gets 30 s."""
    registry = ToolRegistry()
    registry.register_tool("t", "d", {"type": "object"}, _echo)
    assert registry._tools["t"].timeout == 30.0


async def test_a_handlers_own_timeout_error_is_a_failure_not_a_timeout() -> None:
    """TimeoutError raised by the handler itself is reported as a failure with its message."""

    async def handler(arguments: dict[str, Any]) -> str:
        raise TimeoutError("upstream API timed out")

    registry = ToolRegistry()
    registry.register_tool("t", "d", {"type": "object"}, handler)
    result = await registry.run_tool_call(ToolCall("c", "t", {}))
    assert result.content == "Tool 't' failed: upstream API timed out"


async def test_invalid_calls_never_reach_the_handler() -> None:
    """Unknown tools, schema failures and parse errors are answered without running anything."""
    ran: list[dict[str, Any]] = []
    registry = ToolRegistry()
    registry.register_tool("t", "d", SEARCH_SCHEMA, lambda a: ran.append(a) or "ran")
    for call in (
        ToolCall("1", "nope", {}),
        ToolCall("2", "t", {"limit": 1}),
        ToolCall("3", "t", {}, parse_error="not JSON"),
    ):
        result = await registry.run_tool_call(call)
        assert result.is_error and result.tool_call_id == call.id
    assert ran == []


async def test_handlers_get_a_copy_of_the_arguments() -> None:
    """A handler mutating its arguments does not change the ToolCall."""
    registry = ToolRegistry()
    registry.register_tool("t", "d", {"type": "object"}, lambda a: a.pop("x") and "ok")
    call = ToolCall("c", "t", {"x": 1})
    await registry.run_tool_call(call)
    assert call.arguments == {"x": 1}


async def test_cancellation_propagates_out_of_a_running_tool() -> None:
    """Cancelling the task running a tool raises CancelledError, not an error result."""
    started = asyncio.Event()

    async def handler(arguments: dict[str, Any]) -> str:
        started.set()
        await asyncio.Event().wait()
        return "never"

    registry = ToolRegistry()
    registry.register_tool("t", "d", {"type": "object"}, handler)
    task = asyncio.create_task(registry.run_tool_call(ToolCall("c", "t", {})))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


# -- permissions ----------------------------------------------------------------------------


def _permissioned(permission: str, **kw: Any) -> tuple[ToolRegistry, list[str]]:
    ran: list[str] = []
    registry = ToolRegistry(**kw)
    registry.register_tool(
        "write_note",
        "d",
        {"type": "object"},
        lambda a: ran.append("ran") or "written",
        permission=permission,  # type: ignore[arg-type]
    )
    return registry, ran


async def test_deny_never_runs() -> None:
    """permission="deny" answers an error and never calls the handler or confirm."""
    asked: list[ToolCall] = []

    async def confirm(call: ToolCall) -> bool:
        asked.append(call)
        return True

    registry, ran = _permissioned("deny", confirm=confirm)
    result = await registry.run_tool_call(ToolCall("c", "write_note", {}))
    assert (
        result.is_error
        and result.content == "Tool 'write_note' is not allowed in this conversation; not run."
    )
    assert ran == [] and asked == []


async def test_ask_without_confirm_is_denied_with_the_reason() -> None:
    """permission="ask" with no confirm callback is treated as denied and says why."""
    registry, ran = _permissioned("ask")
    result = await registry.run_tool_call(ToolCall("c", "write_note", {}))
    assert result.is_error and ran == []
    assert result.content == (
        "Tool 'write_note' needs approval and this conversation has no way to ask; not run."
    )


@pytest.mark.parametrize("approved", [True, False])
async def test_ask_awaits_confirm_with_the_call(approved: bool) -> None:
    """permission="ask" awaits confirm(tool_call); True runs the tool, False refuses."""
    asked: list[ToolCall] = []

    async def confirm(call: ToolCall) -> bool:
        asked.append(call)
        return approved

    registry, ran = _permissioned("ask", confirm=confirm)
    call = ToolCall("c", "write_note", {"path": "a.md"})
    result = await registry.run_tool_call(call)
    assert asked == [call]
    if approved:
        assert (result.content, result.is_error, ran) == ("written", False, ["ran"])
    else:
        assert result.is_error and ran == []
        assert result.content == "The user did not approve running tool 'write_note'; not run."


async def test_confirm_may_answer_edited_arguments_which_are_validated() -> None:
    """A dict from confirm runs the tool with those arguments; invalid ones are refused."""
    seen: list[dict[str, Any]] = []
    answers = iter([{"path": "kept.md"}, {"path": 3}])

    async def confirm(call: ToolCall) -> dict[str, Any]:
        return next(answers)

    registry = ToolRegistry(confirm=confirm)
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    registry.register_tool("write", "d", schema, lambda a: seen.append(a) or "ok", permission="ask")
    first = await registry.run_tool_call(ToolCall("c1", "write", {"path": "asked.md"}))
    second = await registry.run_tool_call(ToolCall("c2", "write", {"path": "asked.md"}))
    assert (first.content, first.is_error) == ("ok", False) and seen == [{"path": "kept.md"}]
    assert second.is_error and "arguments the user approved are invalid" in second.content


async def test_confirm_can_be_set_after_construction() -> None:
    """The confirm attribute is read at run time."""
    registry, ran = _permissioned("ask")

    async def approve(call: ToolCall) -> bool:
        return True

    registry.confirm = approve
    assert not (await registry.run_tool_call(ToolCall("c", "write_note", {}))).is_error
    assert ran == ["ran"]


async def test_a_failing_confirm_callback_denies() -> None:
    """An exception from confirm is logged and the tool is not run."""

    async def broken(call: ToolCall) -> bool:
        raise ConnectionError("client went away")

    registry, ran = _permissioned("ask", confirm=broken)
    result = await registry.run_tool_call(ToolCall("c", "write_note", {}))
    assert result.is_error and ran == []
    assert result.content == "Tool 'write_note' needs approval and asking for it failed; not run."


async def test_confirm_is_not_asked_for_invalid_calls() -> None:
    """Validation comes before permission: a bad call is refused without asking the user."""
    asked: list[ToolCall] = []

    async def confirm(call: ToolCall) -> bool:
        asked.append(call)
        return True

    registry = ToolRegistry(confirm=confirm)
    registry.register_tool("t", "d", SEARCH_SCHEMA, _echo, permission="ask")
    result = await registry.run_tool_call(ToolCall("c", "t", {}))
    assert result.is_error and asked == []


NESTED = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "limit": {"type": "integer"},
        "edits": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"old": {"type": "string"}, "note": {"type": "string"}},
                "required": ["old"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["path"],
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("arguments", "received", "problem"),
    [
        ({"path": "a", "limit": None}, {"path": "a"}, None),
        (
            {"path": "a", "edits": [{"old": "x", "note": None}]},
            {"path": "a", "edits": [{"old": "x"}]},
            None,
        ),
        ({"path": None}, None, "None is not of type 'string'"),  # required: null stays, refused
        ({"path": "a", "edits": [{"old": None}]}, None, "None is not of type 'string'"),
    ],
)
async def test_null_for_an_optional_argument_is_not_given_at_any_depth(
    arguments: dict[str, Any], received: dict[str, Any] | None, problem: str | None
) -> None:
    """The registry's one rule, for every caller: validation and the handler see no nulls for
    optional properties, while a required property's null is still refused."""
    seen: list[dict[str, Any]] = []
    registry = ToolRegistry()
    registry.register_tool("t", "d", NESTED, lambda args: seen.append(args) or "ok")
    reason = registry.validate_tool_call(ToolCall("1", "t", arguments))
    result = await registry.run_tool_call(ToolCall("1", "t", arguments))
    if problem is None:
        assert reason is None and not result.is_error
        assert seen == [received]
    else:
        assert reason is not None and problem in reason
        assert result.is_error and not seen


async def test_a_view_runs_its_own_handlers_and_names_why_a_hidden_tool_does_not_run() -> None:
    """A view shares the registry's tools (later ones too), runs the handlers it was given
    instead of the registered ones, and answers a call of a tool it hides with its reason."""
    registry = _registry()
    view = registry.view(
        None,
        hidden={"read_note": "read_note is off here."},
        handlers={"search_notes": lambda a: f"mine {a['query']}"},
    )
    registry.register_tool("later", "Registered after the view.", {"type": "object"}, _echo)
    assert view.get_registered_tools() == ["search_notes", "later"]
    mine = await view.run_tool_call(_call(query="kites"))
    theirs = await registry.run_tool_call(_call(query="kites"))
    assert (mine.content, theirs.content) == ("mine kites", "found kites")
    hidden = await view.run_tool_call(_call("read_note"))
    assert hidden.is_error and hidden.content == "read_note is off here."
    assert view.permission("read_note") is None and registry.permission("read_note") == "allow"
