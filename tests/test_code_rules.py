"""Rules the code base keeps, read from its source with `ast` (the guide: no twin, small functions).

- No type name is defined in two modules: a module-level class, `TypeVar`/`ParamSpec`/`NewType`,
  or type alias (a `CapWords` name bound to a type expression) has one home, so a reader who meets
  `Event` knows which one it is.
- Functions over 60 lines do not grow in number: the ones listed here may shrink or leave the list,
  none may join it.
- The composition root (`app/state.py`) is the one module of `app/` that names `BridgeApp`.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("plugin_bridge", "llm_service")

# Functions still past 60 lines (module path: qualified name). Shrink this list; never add to it.
LONG_FUNCTION_LINES = 60
LONG_FUNCTIONS_ALLOWED = {
    "plugin_bridge/mcp/server.py:build_server",
    "plugin_bridge/cli/setup.py:_setup",
}

_TYPE_FACTORIES = {"TypeVar", "ParamSpec", "TypeVarTuple", "NewType"}
_TYPE_SUBSCRIPTS = {
    "Literal",
    "Callable",
    "Annotated",
    "Union",
    "Optional",
    "Awaitable",
    "Mapping",
    "dict",
    "list",
}


def _modules() -> Iterator[tuple[str, ast.Module]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            yield relative, ast.parse(path.read_text(encoding="utf-8"), filename=relative)


def _is_type_name(name: str) -> bool:
    """`CapWords`, not a `CONSTANT` and not private by convention only in case."""
    bare = name.lstrip("_")
    return bool(bare) and bare[0].isupper() and not bare.isupper()


def _is_type_expression(value: ast.expr) -> bool:
    if isinstance(value, ast.Call):
        func = value.func
        called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        return called in _TYPE_FACTORIES
    if isinstance(value, ast.Subscript):
        head = value.value
        named = head.attr if isinstance(head, ast.Attribute) else getattr(head, "id", "")
        return named in _TYPE_SUBSCRIPTS
    return isinstance(value, ast.BinOp) and isinstance(value.op, ast.BitOr)


def _type_names(tree: ast.Module) -> Iterator[str]:
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            yield node.name
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            annotation = ast.unparse(node.annotation)
            if annotation.endswith("TypeAlias") and _is_type_name(node.target.id):
                yield node.target.id
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            name = node.targets[0].id
            if _is_type_name(name) and _is_type_expression(node.value):
                yield name


def _function_lengths() -> Iterator[tuple[str, int]]:
    """Every function and method as ``path:Qualified.name``, with its length in lines."""
    for relative, tree in _modules():
        stack: list[tuple[ast.AST, str]] = [(tree, "")]
        while stack:
            node, prefix = stack.pop()
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    qualified = f"{prefix}{child.name}"
                    if not isinstance(child, ast.ClassDef):
                        yield f"{relative}:{qualified}", (child.end_lineno or 0) - child.lineno + 1
                    stack.append((child, f"{qualified}."))
                else:
                    stack.append((child, prefix))


def test_no_type_name_is_defined_in_two_modules() -> None:
    homes: dict[str, list[str]] = defaultdict(list)
    for relative, tree in _modules():
        for name in set(_type_names(tree)):
            homes[name].append(relative)
    twins = {name: where for name, where in homes.items() if len(where) > 1}
    assert twins == {}, f"type names defined in more than one module (rename one side): {twins}"


def test_no_new_function_grows_past_the_line_limit() -> None:
    long = {name: lines for name, lines in _function_lengths() if lines > LONG_FUNCTION_LINES}
    newcomers = {name: lines for name, lines in long.items() if name not in LONG_FUNCTIONS_ALLOWED}
    assert newcomers == {}, (
        f"functions over {LONG_FUNCTION_LINES} lines (split them into named helpers): {newcomers}"
    )
    assert len(long) <= len(LONG_FUNCTIONS_ALLOWED) <= 3


def test_the_rules_see_what_they_check() -> None:
    """The walkers find the code's own types and methods (a walker that sees nothing passes all)."""
    homes = {name for _, tree in _modules() for name in _type_names(tree)}
    assert {"ContentBlock", "ContentPart", "ReadLine", "ToolArgsT", "SettingSource"} <= homes
    lengths = dict(_function_lengths())
    assert lengths["plugin_bridge/wire/server.py:BridgeServer.serve_socket"] > 1


def test_no_module_of_the_application_but_the_root_names_it() -> None:
    """The composition root is the one module of app/ that knows BridgeApp (services get
    their collaborators, never the root)."""
    naming = sorted(
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / "plugin_bridge" / "app").rglob("*.py")
        if "BridgeApp" in path.read_text(encoding="utf-8")
    )
    assert naming == ["plugin_bridge/app/state.py"]
