"""Every client method is typed: it has one request object (``ClientRequest``: its name, params
model and result model) in ``wire.models.CLIENT_REQUESTS``, and its handler is registered by
that object, never by a bare method name."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import get_type_hints

from plugin_bridge.handlers import build_router
from plugin_bridge.wire.models import CLIENT_REQUESTS, ClientRequest
from tests.conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "plugin_bridge"


def _router_registrations(path: Path) -> list[ast.Call]:
    """The ``router.register(...)`` calls (any receiver named ``*router``) in one module."""
    calls = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        receiver = node.func.value
        name = receiver.attr if isinstance(receiver, ast.Attribute) else getattr(receiver, "id", "")
        if node.func.attr == "register" and name.endswith("router"):
            calls.append(node)
    return calls


def test_every_method_has_one_request_object_that_the_router_serves() -> None:
    """The router serves exactly the methods of CLIENT_REQUESTS, each by its own request object,
    with a handler annotated to return that object's result model (the schema's result)."""
    methods = build_router().methods
    named = {request.method: request for request in CLIENT_REQUESTS}
    assert len(named) == len(CLIENT_REQUESTS), "a method has two request objects"
    assert set(methods) == set(named), "every method needs a ClientRequest in CLIENT_REQUESTS"
    for name, method in methods.items():
        assert method.request is named[name], name
        assert get_type_hints(method.handler)["return"] is method.request.result, name


def test_no_handler_is_registered_by_a_bare_method_name() -> None:
    """Every ``router.register`` call under plugin_bridge/ passes a module-level
    ``ClientRequest`` and a handler: no string literal, no separate params model."""
    seen = 0
    for path in sorted(PACKAGE.rglob("*.py")):
        calls = _router_registrations(path)
        if not calls:
            continue
        relative = path.relative_to(REPO_ROOT).with_suffix("")
        module = importlib.import_module(".".join(relative.parts).removesuffix(".__init__"))
        for call in calls:
            where = f"{relative}.py:{call.lineno}"
            assert len(call.args) == 2 and not call.keywords, where
            first = call.args[0]
            assert isinstance(first, ast.Name), f"{where}: register by a request object"
            assert isinstance(getattr(module, first.id, None), ClientRequest), where
            seen += 1
    assert seen == len(build_router().methods)
