"""The pytest plugin: options, markers, and nothing else unless a target is given.

It loads in every pytest run on a machine where the package is installed, so
without --mcp-target or --mcp-profile it must stay inert: it imports nothing
but pytest (not the MCP SDK, not YAML) and reads no file. Everything that
runs an audit is in `audit`, imported only when a target is given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .catalogue.generation import DEFAULT_EXAMPLES
from .run.markers import family_marker

# profile.ROOT_FROM, spelled out: importing the profile module reads YAML
# (tests/unit/test_plugin_inert.py checks the two agree).
ROOT_FROM = ("arg", "cwd")

OPTIONS: list[tuple[str, dict[str, Any], str]] = [
    (
        "--mcp-target",
        {"metavar": "CMD"},
        "the MCP server under test: a command with {root}, a URL, or py:module:factory",
    ),
    ("--mcp-profile", {"metavar": "FILE"}, "a target profile (YAML); --mcp-target overrides its command"),
    (
        "--mcp-root-from",
        {"choices": ROOT_FROM},
        "how the target learns its root: 'arg' ({root} in the command) or 'cwd'",
    ),
    ("--mcp-report-dir", {"metavar": "DIR"}, "write audit.json (and the other reports) into DIR"),
    ("--mcp-call-timeout", {"metavar": "SECONDS", "type": float}, "seconds to wait for any one round trip"),
    ("--mcp-start-timeout", {"metavar": "SECONDS", "type": float}, "seconds for the target to start"),
    (
        "--mcp-examples",
        {"metavar": "N", "type": int},
        f"hostile names generated per prompt-forging attack (default {DEFAULT_EXAMPLES})",
    ),
    (
        "--mcp-seed",
        {"metavar": "S", "type": int},
        "seed for generated names; each run prints its own (CI=true fixes it), pass it to repeat a run",
    ),
    (
        "--mcp-baseline",
        {"metavar": "FILE"},
        "accepted findings and expected layers (YAML or JSON); stale entries fail",
    ),
    ("--mcp-root", {"metavar": "DIR"}, "the directory a running (URL) target serves, made for the audit"),
    ("--mcp-replicas", {"metavar": "N"}, "start N processes of the target on one root (cross-replica)"),
    ("--mcp-redemptions", {"metavar": "N"}, "redemptions of one approval sent at once (double-spend; 8)"),
]


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from .run import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcp-confirm-audit", "MCP confirmation security audit")
    for flag, extra, help_text in OPTIONS:
        dest = flag.lstrip("-").replace("-", "_")
        group.addoption(flag, dest=dest, default=None, help=help_text, **extra)
        parser.addini(dest, help=f"{help_text} (ini twin of {flag})", default=None)
    group.addoption(
        "--mcp-strict",
        dest="mcp_strict",
        action="store_true",
        default=None,
        help="fail on weak results (SHOULD-level failures), not only on vulnerable ones",
    )
    parser.addini("mcp_strict", help="ini twin of --mcp-strict", type="bool", default=False)
    group.addoption(
        "--mcp-no-ablation",
        dest="mcp_no_ablation",
        action="store_true",
        default=None,
        help="in-process targets: do not run attacks the SDK boundary refused again without it",
    )
    parser.addini("mcp_no_ablation", help="ini twin of --mcp-no-ablation", type="bool", default=False)
    for flag, help_text in (
        (
            "--mcp-no-confinement",
            "start the target's processes in the host's namespaces (by default they run confined: "
            "read-only files but the sandbox, an empty home, a PID namespace, loopback-only network)",
        ),
        ("--mcp-require-confinement", "stop the run when the target cannot be confined (for CI)"),
    ):
        dest = flag.lstrip("-").replace("-", "_")
        group.addoption(flag, dest=dest, action="store_true", default=None, help=help_text)
        parser.addini(dest, help=f"ini twin of {flag}", type="bool", default=False)
    group.addoption(
        "--mcp-header",
        dest="mcp_header",
        action="append",
        default=None,
        metavar="'NAME: VALUE'",
        help="an HTTP header sent on every request (repeatable; ${NAME} is read from the environment; "
        "never shown in any report)",
    )
    parser.addini(
        "mcp_header", help="ini twin of --mcp-header, one header a line", type="linelist", default=[]
    )


def family_names() -> list[str]:
    """The catalogue's families, from its file names alone (the loader checks each file is named after its family)."""
    here = Path(__file__).resolve().parent
    for directory in (here / "attacks", here.parent / "attacks"):
        if directory.is_dir():
            return sorted(path.stem for path in directory.glob("*.yaml"))
    return []


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "mcp_audit: an attack or control run by mcp-confirm-audit")
    config.addinivalue_line("markers", "mcp_control: an honest-flow control of mcp-confirm-audit")
    for family in family_names():
        config.addinivalue_line("markers", f"{family_marker(family)}: mcp-confirm-audit {family} attacks")
    target, profile_path = config.getoption("mcp_target"), config.getoption("mcp_profile")
    if (
        not target
        and not profile_path
        and not config.getini("mcp_target")
        and not config.getini("mcp_profile")
    ):
        return
    from .run.audit import configure

    configure(config)
