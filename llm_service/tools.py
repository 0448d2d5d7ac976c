"""The tool registry: checked registrations, argument validation, permissions, timeouts.

A :class:`ToolRegistry` needs no provider: ``LLMService`` composes one for its tool loop, and the
bridge uses one on its own to run tools when no model is configured.

Everything a model can get wrong becomes an error :class:`ToolResultBlock` (``is_error=True``)
that goes back to the model so it can correct itself; :meth:`ToolRegistry.run_tool_call` never
raises except ``asyncio.CancelledError``. Mistakes of the programmer registering a tool (a bad
name, schema, permission or timeout) raise ``ValueError`` at registration.

jsonschema is imported on first registration, not with the package.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import inspect
import json
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    Final,
    Literal,
    TypeAlias,
    TypedDict,
    Unpack,
    get_args,
    overload,
)

from llm_service import lazy
from llm_service.messages import ToolCall, ToolResultBlock, ToolSpec

if TYPE_CHECKING:
    import jsonschema
    from jsonschema.protocols import Validator
else:
    jsonschema = lazy.module("jsonschema")

logger = logging.getLogger(__name__)

Permission = Literal["allow", "ask", "deny"]
PERMISSIONS: Final[frozenset[str]] = frozenset(get_args(Permission))
ToolOutput: TypeAlias = str | dict[str, Any] | list[Any]
ToolHandler: TypeAlias = Callable[[dict[str, Any]], ToolOutput | Awaitable[ToolOutput]]
"""Receives the arguments dict; sync handlers run in a worker thread, async ones on the loop."""
ConfirmCallback: TypeAlias = Callable[[ToolCall], Awaitable[bool | dict[str, Any]]]
"""Asked before running a tool whose permission is "ask": True runs the call, False refuses it,
and a dict runs it with these arguments instead (the user edited them), checked against the
tool's schema like any call. Raising :class:`ToolRefused` refuses it without asking anyone."""


class ToolRefused(Exception):
    """Raised by a confirm callback for a call that would fail anyway (a write to a path the
    rules refuse): nobody is asked, and ``str()`` is the call's error result."""


class ToolOptions(TypedDict, total=False):
    """The keyword options of a tool registration (see :meth:`ToolRegistry.register_tool`)."""

    permission: Permission
    timeout: float


TOOL_NAME_PATTERN: Final = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
TOOL_TIMEOUT: Final = 30.0
_MAX_REASON_CHARS: Final = 300
"""Validation messages quote the offending value; long values are cut to keep results short."""


@dataclass(frozen=True, slots=True)
class _Tool:
    spec: ToolSpec
    handler: ToolHandler
    permission: Permission
    timeout: float
    validator: Validator


class ToolRegistry:
    """Named tools with JSON Schema inputs, run under their permission and timeout."""

    def __init__(self, *, confirm: ConfirmCallback | None = None) -> None:
        self.confirm = confirm
        self._tools: dict[str, _Tool] = {}
        self._gone: dict[str, str] = {}
        """Why a tool that was unregistered with a reason cannot run (until registered again)."""
        self._hidden: frozenset[str] = frozenset()
        """Tools of the registry this one views that it neither offers nor runs (:meth:`view`)."""
        self._refused: dict[str, str] = {}
        """Why a hidden tool does not run, for a call that names it (:meth:`view`)."""
        self._handlers: dict[str, ToolHandler] = {}
        """The handlers this view runs instead of the registered ones (:meth:`view`)."""

    def view(
        self,
        confirm: ConfirmCallback | None,
        *,
        hidden: Iterable[str] | Mapping[str, str] = (),
        handlers: Mapping[str, ToolHandler] | None = None,
    ) -> ToolRegistry:
        """A registry over the same tools (those registered later too) that asks ``confirm``
        instead, neither offers nor runs the tools named in ``hidden`` (a chat app's
        conversation: its own approval buttons, no write tools for a user who may not write;
        a mapping gives the sentence a call naming one gets instead of "Unknown tool"), and
        runs the tools named in ``handlers`` with those handlers (the same spec, permission
        and timeout: one run's own, say the user whose writes they are)."""
        view = ToolRegistry(confirm=confirm)
        view._tools, view._gone = self._tools, self._gone
        view._hidden = self._hidden | frozenset(hidden)
        view._refused = {**self._refused, **(hidden if isinstance(hidden, Mapping) else {})}
        view._handlers = {**self._handlers, **(handlers or {})}
        return view

    def _offered(self) -> list[_Tool]:
        return [tool for name, tool in self._tools.items() if name not in self._hidden]

    @overload
    def register_tool(self, tool: object, /, **options: Unpack[ToolOptions]) -> None: ...

    @overload
    def register_tool(
        self,
        name: str,
        description: str,
        input_schema: Mapping[str, Any],
        handler: ToolHandler,
        /,
        **options: Unpack[ToolOptions],
    ) -> None: ...

    def register_tool(
        self,
        tool: object,
        description: str | None = None,
        input_schema: Mapping[str, Any] | None = None,
        handler: ToolHandler | None = None,
        /,
        **options: Unpack[ToolOptions],
    ) -> None:
        """Add a tool, or replace the one with the same name. The tool is given as
        ``(name, description, input_schema, handler)``, or as one definition (see
        :func:`tool_definition`): ``{"name", "description", "input_schema", "execute"}``, an
        object with those attributes, or ``{"tool": {...}, "execute": fn}``.

        Raises ValueError for a name outside ``^[a-zA-Z0-9_-]{1,64}$``, an input schema that is not
        a valid JSON Schema for an object, an unknown permission or a timeout that is not positive.
        """
        name, description, input_schema, handler = tool_parts(
            tool, description, input_schema, handler
        )
        permission = options.get("permission", "allow")
        timeout = options.get("timeout", TOOL_TIMEOUT)
        if not TOOL_NAME_PATTERN.match(name):
            raise ValueError(
                f"Tool name {name!r} is invalid: use 1-64 letters, digits, '_' or '-'."
            )
        if permission not in PERMISSIONS:
            raise ValueError(
                f"Tool {name!r} has unknown permission {permission!r}: use allow, ask or deny."
            )
        if not timeout > 0:
            raise ValueError(f"Tool {name!r} needs a positive timeout, not {timeout!r}.")
        if not callable(handler):
            raise ValueError(f"Tool {name!r} needs a callable handler.")
        if not isinstance(input_schema, Mapping):
            raise ValueError(f"Tool {name!r} needs an input_schema that is a JSON object.")
        schema = copy.deepcopy(dict(input_schema))
        validator = _validator(name, schema)
        if name in self._tools:
            logger.info("Tool %r registered again; the new definition replaces the old one", name)
        self._tools[name] = _Tool(
            ToolSpec(name, description, schema), handler, permission, timeout, validator
        )
        self._gone.pop(name, None)

    def unregister_tool(self, name: str, reason: str | None = None) -> None:
        """Remove tool ``name`` (no error if absent): it leaves the list offered to the model.
        With ``reason``, a call that still names it gets that sentence as its error instead of
        "Unknown tool" (say, its server is restarting)."""
        self._tools.pop(name, None)
        if reason is not None:
            self._gone[name] = reason

    def get_registered_tools(self) -> list[str]:
        """The tools' names, in registration order."""
        return [tool.spec.name for tool in self._offered()]

    def tool_specs(self) -> list[ToolSpec]:
        """The tools' specs (name, description, input schema), in registration order."""
        return [tool.spec for tool in self._offered()]

    def permission(self, name: str) -> Permission | None:
        """The permission of tool ``name``, or None when no such tool is registered."""
        tool = None if name in self._hidden else self._tools.get(name)
        return None if tool is None else tool.permission

    def validate_tool_call(
        self, call: ToolCall, available: Sequence[str] | None = None
    ) -> str | None:
        """None if ``call`` names a registered tool with valid arguments, else why it is not;
        an unknown tool's sentence names ``available`` (default: every tool offered)."""
        tool = None if call.name in self._hidden else self._tools.get(call.name)
        if tool is None and call.name in self._refused:
            return self._refused[call.name]
        if tool is None and call.name in self._gone:
            return self._gone[call.name]
        if tool is None:
            offered = self.get_registered_tools() if available is None else available
            names = ", ".join(offered) or "none"
            return f"Unknown tool {call.name!r}. Available: {names}."
        if call.parse_error is not None:
            return (
                f"Invalid arguments for {call.name!r}: {_cut(call.parse_error)}; "
                "send the arguments as one JSON object."
            )
        return _schema_problem(tool, without_null_optionals(tool.spec.input_schema, call.arguments))

    async def run_tool_call(self, call: ToolCall) -> ToolResultBlock:
        """Validate, check the permission, then run ``call``'s handler under its timeout.

        Never raises (except CancelledError): every failure is an error result. A sync handler
        that times out keeps running in its worker thread; its result is discarded.
        """
        problem = self.validate_tool_call(call)
        if problem is not None:
            return _error(call, problem)
        tool = self._tools[call.name]
        handler = self._handlers.get(call.name)
        if handler is not None:
            tool = dataclasses.replace(tool, handler=handler)
        call = _given(tool, call)
        approved = await self._approval(tool, call)
        if isinstance(approved, str):
            return _error(call, approved)
        if approved is not call:
            approved = _given(tool, approved)
            problem = _schema_problem(tool, approved.arguments)
            if problem is not None:
                return _error(call, f"The arguments the user approved are invalid: {problem}")
        return await _execute(tool, approved)

    async def _approval(self, tool: _Tool, call: ToolCall) -> ToolCall | str:
        """The call to run (``call`` itself, or with the arguments the user edited), else why
        it may not run."""
        name = call.name
        if tool.permission == "allow":
            return call
        if tool.permission == "deny":
            return f"Tool {name!r} is not allowed in this conversation; not run."
        if self.confirm is None:
            return f"Tool {name!r} needs approval and this conversation has no way to ask; not run."
        try:
            answer = await self.confirm(call)
        except ToolRefused as refused:
            return str(refused)
        except Exception:
            logger.warning("Asking to approve tool %r failed", name, exc_info=True)
            return f"Tool {name!r} needs approval and asking for it failed; not run."
        if isinstance(answer, dict):
            return dataclasses.replace(call, arguments=answer)
        return call if answer else f"The user did not approve running tool {name!r}; not run."


def without_null_optionals(schema: Mapping[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` without the nulls sent for optional properties: the one rule that null for
    an argument the schema does not require means "not given", whoever sent it (a strict-mode
    model, an MCP client, ``tools/execute``, the HTTP routes). It applies at every level the
    schema describes (the objects inside ``properties`` and ``items``); a required property
    keeps its null, for the schema to refuse."""
    required = set(schema.get("required", ()))
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    given: dict[str, Any] = {}
    for name, value in arguments.items():
        if value is None and name not in required:
            continue
        sub = properties.get(name)
        given[name] = _nested_given(sub, value) if isinstance(sub, Mapping) else value
    return given


def _nested_given(schema: Mapping[str, Any], value: Any) -> Any:
    if isinstance(value, dict) and isinstance(schema.get("properties"), Mapping):
        return without_null_optionals(schema, value)
    items = schema.get("items")
    if isinstance(value, list) and isinstance(items, Mapping):
        return [_nested_given(items, item) for item in value]
    return value


def _given(tool: _Tool, call: ToolCall) -> ToolCall:
    """``call`` with its arguments as the tool receives them (:func:`without_null_optionals`)."""
    arguments = without_null_optionals(tool.spec.input_schema, call.arguments)
    return call if arguments == call.arguments else dataclasses.replace(call, arguments=arguments)


_DEFINITION_FIELDS: Final = ("name", "description", "input_schema", "execute")


def tool_parts(
    tool: object,
    description: str | None = None,
    input_schema: Mapping[str, Any] | None = None,
    handler: ToolHandler | None = None,
) -> tuple[str, str, Mapping[str, Any], ToolHandler]:
    """What ``register_tool``'s arguments name: ``(name, description, input_schema, handler)``
    as given, or unpacked from one definition (:func:`tool_definition`)."""
    if not isinstance(tool, str):
        return tool_definition(tool)
    if description is None or input_schema is None or handler is None:
        raise ValueError(f"Tool {tool!r} needs a description, an input_schema and a handler.")
    return tool, description, input_schema, handler


def tool_definition(tool: object) -> tuple[str, str, Mapping[str, Any], ToolHandler]:
    """``(name, description, input_schema, handler)`` of a tool given in one of the documented
    shapes: ``{"name": ..., "description": ..., "input_schema": {...}, "execute": fn}``, an
    object with those attributes (an MCP-style tool), or ``{"tool": {...}, "execute": fn}``.
    ValueError naming what is missing otherwise."""
    if isinstance(tool, Mapping) and "tool" in tool:
        inner = tool["tool"]
        fields = dict(inner) if isinstance(inner, Mapping) else _attributes(inner)
        fields.setdefault("execute", tool.get("execute"))
    elif isinstance(tool, Mapping):
        fields = dict(tool)
    else:
        fields = _attributes(tool)
    missing = [field for field in _DEFINITION_FIELDS if fields.get(field) is None]
    if missing:
        raise ValueError(
            f"A tool definition needs {', '.join(_DEFINITION_FIELDS)}; missing: "
            f"{', '.join(missing)}."
        )
    name, description = fields["name"], fields["description"]
    if not isinstance(name, str) or not isinstance(description, str):
        raise ValueError("A tool definition's name and description must be strings.")
    handler: ToolHandler = fields["execute"]
    return name, description, fields["input_schema"], handler


def _attributes(tool: object) -> dict[str, Any]:
    return {field: getattr(tool, field, None) for field in _DEFINITION_FIELDS}


def _validator(name: str, schema: dict[str, Any]) -> Validator:
    try:
        validator = _compiled(json.dumps(schema, sort_keys=True))
    except jsonschema.SchemaError as exc:
        raise ValueError(
            f"Tool {name!r} has an invalid input_schema: {_cut(exc.message)}."
        ) from exc
    if schema.get("type") != "object":
        raise ValueError(f'Tool {name!r} needs an input_schema with "type": "object".')
    return validator


@functools.lru_cache(maxsize=256)
def _compiled(schema_json: str) -> Validator:
    """A checked validator for a schema, built once per process: every new conversation
    registers the same tools, and checking a schema costs about a millisecond."""
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


def _schema_problem(tool: _Tool, arguments: dict[str, Any]) -> str | None:
    error = jsonschema.exceptions.best_match(tool.validator.iter_errors(arguments))
    if error is None:
        return None
    field = _field_path(error.absolute_path)
    where = f" (at {field!r})" if field else ""
    return f"Invalid arguments for {tool.spec.name!r}: {_cut(error.message)}{where}."


def _field_path(path: Any) -> str:
    parts: list[str] = []
    for key in path:
        if isinstance(key, int):
            parts.append(f"[{key}]")
        else:
            parts.append(f".{key}" if parts else str(key))
    return "".join(parts)


async def _execute(tool: _Tool, call: ToolCall) -> ToolResultBlock:
    name = call.name
    arguments = copy.deepcopy(call.arguments)
    try:
        async with asyncio.timeout(tool.timeout) as deadline:
            output = await _call_handler(tool.handler, arguments)
    except TimeoutError as exc:
        if not deadline.expired():  # the handler's own TimeoutError, not our deadline
            return _failure(call, exc)
        logger.warning("Tool %r timed out after %g s", name, tool.timeout)
        return _error(call, f"Tool {name!r} timed out after {tool.timeout:g} s.")
    except Exception as exc:
        return _failure(call, exc)
    return _result(call, output)


async def _call_handler(handler: ToolHandler, arguments: dict[str, Any]) -> object:
    if inspect.iscoroutinefunction(handler):
        output: object = await handler(arguments)
    else:
        output = await asyncio.to_thread(handler, arguments)
    if inspect.isawaitable(output):
        output = await output
    return output


def _failure(call: ToolCall, exc: Exception) -> ToolResultBlock:
    logger.warning("Tool %r raised %s", call.name, type(exc).__name__)
    logger.debug("Tool %r traceback", call.name, exc_info=exc)
    message = str(exc).strip() or type(exc).__name__
    return _error(call, f"Tool {call.name!r} failed: {message}")


def _result(call: ToolCall, output: object) -> ToolResultBlock:
    if isinstance(output, str):
        return ToolResultBlock(call.id, output)
    if isinstance(output, (dict, list)):
        try:
            text = json.dumps(output, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            logger.warning("Tool %r returned a value JSON cannot encode: %s", call.name, exc)
            return _error(call, f"Tool {call.name!r} failed: its result is not valid JSON.")
        return ToolResultBlock(call.id, text)
    logger.warning("Tool %r returned %s, not str, dict or list", call.name, type(output).__name__)
    return _error(call, f"Tool {call.name!r} failed: it returned no usable result.")


def _error(call: ToolCall, message: str) -> ToolResultBlock:
    return ToolResultBlock(call.id, message, is_error=True)


def _cut(text: str) -> str:
    text = text.rstrip(".")
    if len(text) <= _MAX_REASON_CHARS:
        return text
    return text[: _MAX_REASON_CHARS - 1] + "…"
