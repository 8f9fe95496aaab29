"""The SDK's private parts the harness uses live in one module, and each is checked against the installed SDK."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from mcp import Client

from mcp_confirm_audit.target import sdk_adapter

PACKAGE = Path(sdk_adapter.__file__).resolve().parents[1]
ROOT = PACKAGE.parent


def test_every_private_part_the_adapter_uses_is_there_as_it_is_used() -> None:
    assert sdk_adapter.changed() == []


def test_the_check_fails_when_a_release_moves_or_reshapes_a_private_part() -> None:
    class Moved:
        def _build_capabilities(self, protocol: str) -> None: ...

    parts = (
        (Moved, "_build_session", ("self", "exit_stack")),
        (Moved, "_build_capabilities", ("self", "version")),
    )
    assert sdk_adapter.changed(parts) == [
        "Moved._build_session is gone",
        "Moved._build_capabilities takes (self, protocol), not (self, version)",
    ]


def test_the_declaring_client_overrides_the_sdks_own_hook() -> None:
    # A rename of the hook would leave the override uncalled, and every client declaring everything.
    assert "_build_session" in vars(Client)
    assert sdk_adapter.DeclaringClient._build_session is not Client._build_session


def _private_sdk_uses(path: Path) -> list[str]:
    """`mcp` imports of private modules, and private attributes read off anything but self/cls."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mcp"):
            names = [node.module or "", *(alias.name for alias in node.names)]
            if any(part.startswith("_") for name in names for part in name.split(".")):
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = ast.unparse(node.value)
            if owner not in ("self", "cls") and node.attr in {
                name for _, name, _ in sdk_adapter.PRIVATE_PARTS
            } | set(sdk_adapter.PRIVATE_FIELDS):
                found.append(f"{path.name}:{node.lineno}: {owner}.{node.attr}")
        if isinstance(node, ast.Constant) and node.value in sdk_adapter.PRIVATE_FIELDS:
            found.append(f"{path.name}:{node.lineno}: {node.value!r}")
    return found


def test_no_module_but_the_adapter_reaches_into_the_sdk() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name != "sdk_adapter.py":
            found += _private_sdk_uses(path)
    assert not found, "move these into target/sdk_adapter.py:\n" + "\n".join(found)
    assert _private_sdk_uses(Path(sdk_adapter.__file__))


def test_the_sdk_is_pinned_to_its_minor_version_and_every_imported_library_is_declared() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {
        re.split(r"[\s;\[=<>~!]", dep, maxsplit=1)[0].lower().replace("_", "-")
        for dep in project["dependencies"]
    }
    installed = metadata.version("mcp")
    major, minor = installed.split(".")[:2]
    assert f"mcp>={major}.{minor},<{major}.{int(minor) + 1}" in project["dependencies"]
    imported = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                imported.add(node.module.split(".")[0])
    # A script run by path (target/netns_main.py) imports a module beside it by its bare name.
    beside = {path.stem for path in PACKAGE.rglob("*.py")}
    third_party = {
        name
        for name in imported
        if name not in sys.stdlib_module_names and name != "mcp_confirm_audit" and name not in beside
    }
    # The distribution that provides each import name (regex, yaml -> PyYAML, ...).
    provides = metadata.packages_distributions()
    missing = sorted(
        name
        for name in third_party
        if not {dist.lower().replace("_", "-") for dist in provides.get(name, [name])} & declared
    )
    assert not missing, f"imported but not declared in pyproject's dependencies: {', '.join(missing)}"
