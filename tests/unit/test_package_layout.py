"""The tree is the architecture: imports go one way, and the root keeps only the plugin, models and errors.

Every import counts, at module level or inside a function (a lazy import still ties two modules
together); only imports under `if TYPE_CHECKING:` are left out, since they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

import mcp_confirm_audit

PACKAGE = Path(mcp_confirm_audit.__file__).resolve().parent
NAME = "mcp_confirm_audit"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The package's modules that `path` imports (a `from x import y` names module x.y if it is one)."""
    own = _module_name(path)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names if alias.name.startswith(NAME))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - (child.level - 1)]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target.startswith(NAME):
                    # `from pkg import submodule` uses the submodule, not what pkg's __init__ defines.
                    for alias in child.names:
                        submodule = f"{target}.{alias.name}"
                        found.add(submodule if submodule in modules else target)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {name for name in found if name in modules and name != own}


def _graph() -> dict[str, set[str]]:
    paths = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    modules = set(paths)
    return {name: _imports(path, modules) for name, path in paths.items()}


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def walk(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            # A package's __init__ imported on the way to its submodules is not an edge back.
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := walk(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := walk(node)):
            return found
    return None


def test_no_module_imports_itself_through_others() -> None:
    cycle = _cycle(_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_sees_a_circle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_root_keeps_only_the_plugin_the_models_and_the_errors() -> None:
    root_modules = sorted(path.stem for path in PACKAGE.glob("*.py"))
    assert root_modules == ["__init__", "errors", "models", "plugin"]


def test_every_folder_says_in_one_line_what_lives_there() -> None:
    for init in PACKAGE.rglob("__init__.py"):
        if init.parent == PACKAGE:
            continue
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc, f"{init.relative_to(PACKAGE)} has no docstring"
        assert doc.splitlines()[0].strip(), (
            f"{init.relative_to(PACKAGE)}: the first line says what lives here"
        )


def test_an_effect_kind_is_found_without_a_list_of_kinds() -> None:
    from mcp_confirm_audit.oracle import effects

    kinds_dir = PACKAGE / "oracle" / "kinds"
    effects._load_kinds()
    on_disk = {path.stem for path in kinds_dir.glob("*.py") if path.stem != "__init__"}
    registered_from = {factory.__module__.rpartition(".")[2] for factory in effects._KINDS.values()}
    assert on_disk == registered_from
    # Nothing imports a module only for its side effect of registering: ruff's unused-import rule
    # holds everywhere, so such an import would need a noqa.
    for path in PACKAGE.rglob("*.py"):
        assert "noqa: F401" not in path.read_text(encoding="utf-8"), path.relative_to(PACKAGE)


def test_no_technique_asks_which_kind_of_victim_it_holds() -> None:
    """A case file and a use of an action offer the same operations (`engine.action.Victim`)."""
    kinds = {"Path", "Instance", "CaseFile"}
    for path in sorted((PACKAGE / "techniques").glob("*.py")):
        if path.name in ("__init__.py", "base.py"):  # base.py is the Attack API that hands victims out
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
                named = ast.unparse(node.args[1])
                assert not kinds & set(named.replace("|", " ").replace(",", " ").split()), (
                    f"{path.name}:{node.lineno} branches on the victim's kind: {ast.unparse(node)}"
                )
