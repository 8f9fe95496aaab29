"""The tree is the architecture: imports go one way, and the root keeps only the plugin, models and errors.

Every import counts, at module level or inside a function (a lazy import still ties two modules
together); only imports under `if TYPE_CHECKING:` are left out, since they never run. The order of
the layers is ARCHITECTURE.md's drawing (`LAYERS`): a module imports its own layer or those below.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import mcp_confirm_audit

PACKAGE = Path(mcp_confirm_audit.__file__).resolve().parent
NAME = "mcp_confirm_audit"


# ARCHITECTURE.md's drawing, bottom first: each layer a tuple of module prefixes (the longest that
# matches places a module; "" is the package's own __init__). A module may import its own layer and
# those below it, never one above.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("", "models", "errors"),
    # The profile's parts (a key's declaration, headers, env:, YAML, url_elicitation:, programs,
    # servers:), how an effect is seen, and the catalogue's generators: each knows only the models.
    (
        "profile.contract",
        "profile.headers",
        "profile.environment",
        "profile.yamlfile",
        "profile.url_mode",
        "profile.programs",
        "profile.servers",
        "oracle",
        "catalogue",
    ),
    ("channels",),
    ("target.arguments",),
    ("confirmations",),
    # The profile's model: it builds the frozen specs of the mechanisms, channels and effects it names.
    ("profile",),
    ("target",),
    ("engine.action", "engine.observation", "engine.phases", "engine.reading"),
    ("techniques",),
    # The catalogue's loader checks the data against the registered techniques.
    ("catalogue.loader", "catalogue.entries", "catalogue.docs", "engine"),
    ("report",),
    ("run",),
    ("plugin", "cli", "__main__"),
)


def _layer(module: str, layers: tuple[tuple[str, ...], ...] = LAYERS) -> int | None:
    relative = module.removeprefix(NAME).removeprefix(".")
    best: tuple[int, int] | None = None
    for index, prefixes in enumerate(layers):
        for prefix in prefixes:
            fits = (
                relative == prefix
                if prefix == ""
                else relative == prefix or relative.startswith(f"{prefix}.")
            )
            if fits and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return best[0] if best is not None else None


def _against_the_order(graph: dict[str, set[str]], layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:
    wrong = []
    for module in sorted(graph):
        here = _layer(module, layers)
        if here is None:
            wrong.append(f"{module} is in no layer: draw it in ARCHITECTURE.md and LAYERS")
            continue
        for imported in sorted(graph[module]):
            there = _layer(imported, layers)
            if there is not None and there > here:
                wrong.append(f"{module} (layer {here}) imports {imported} (layer {there}), above it")
    return wrong


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

    visit(_tree(path))
    return {name for name in found if name in modules and name != own}


@cache
def _tree(path: Path) -> ast.Module:
    """`path` parsed, once in a worker for every test that reads it (nothing here changes a tree)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@cache
def _graph() -> dict[str, set[str]]:
    """Which of the package's modules each imports: made once in a worker, read (never changed) by the tests."""
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


def test_every_import_follows_the_drawn_order_of_the_layers() -> None:
    wrong = _against_the_order(_graph())
    assert not wrong, "imports against ARCHITECTURE.md's order:\n" + "\n".join(wrong)


def test_the_order_checker_sees_an_import_upward_and_a_module_in_no_layer() -> None:
    layers = (("models",), ("target",), ("techniques",))
    graph = {
        f"{NAME}.models": set(),
        f"{NAME}.target.driver": {f"{NAME}.models"},
        f"{NAME}.techniques.replay": {f"{NAME}.target.driver"},
    }
    assert _against_the_order(graph, layers) == []
    graph[f"{NAME}.target.driver"].add(f"{NAME}.techniques.replay")
    graph[f"{NAME}.elsewhere"] = set()
    assert _against_the_order(graph, layers) == [
        f"{NAME}.elsewhere is in no layer: draw it in ARCHITECTURE.md and LAYERS",
        f"{NAME}.target.driver (layer 1) imports {NAME}.techniques.replay (layer 2), above it",
    ]


def test_a_lazy_import_counts_and_a_type_checking_one_does_not() -> None:
    graph = _graph()
    # review_md reads the families' traits inside a function; the registry names the mechanism's
    # type only under TYPE_CHECKING.
    assert f"{NAME}.techniques" in graph[f"{NAME}.report.review_md"]
    assert f"{NAME}.confirmations.base" not in graph[f"{NAME}.techniques"]


def test_the_root_keeps_only_the_plugin_the_models_and_the_errors() -> None:
    root_modules = sorted(path.stem for path in PACKAGE.glob("*.py"))
    # And `python -m mcp_confirm_audit`, which only calls cli.main.
    assert root_modules == ["__init__", "__main__", "errors", "models", "plugin"]


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
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
                named = ast.unparse(node.args[1])
                assert not kinds & set(named.replace("|", " ").replace(",", " ").split()), (
                    f"{path.name}:{node.lineno} branches on the victim's kind: {ast.unparse(node)}"
                )


def test_no_technique_asks_which_mechanism_it_holds() -> None:
    """Mechanisms answer for themselves (`confirmations.base.AgentFlow`: hands_over, waits_for_person,
    asks_a_person, caller_approves, approval_acts_alone, token_in_the_call, redemption, approval,
    decline, confirm_once_read, own_arguments...): no module of techniques/ branches on the class."""
    kinds = {"Token", "Pending", "Flag", "Waits", "Mrtr", "Elicitation"}
    for path in sorted((PACKAGE / "techniques").glob("*.py")):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance":
                named = ast.unparse(node.args[1])
                assert not kinds & set(named.replace("|", " ").replace(",", " ").replace("(", " ").split()), (
                    f"{path.name}:{node.lineno} branches on the mechanism's class: {ast.unparse(node)}; "
                    "ask the mechanism instead (confirmations/base.py)"
                )
            # Nor imports one to hold it by its class.
            if isinstance(node, ast.ImportFrom) and node.module is not None:
                held = {alias.name for alias in node.names} & kinds
                assert not held or not node.module.endswith(tuple(k.lower() for k in kinds)), (
                    f"{path.name}:{node.lineno} imports the mechanism class {', '.join(sorted(held))}; "
                    "ask the mechanism instead (confirmations/base.py)"
                )
