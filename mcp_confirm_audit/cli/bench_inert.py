"""`mcp-confirm-audit bench-plugin`: what the installed plugin costs a pytest run that audits nothing.

The plugin loads in every pytest run on a machine where the package is
installed. This times a one-test project that has nothing to do with MCP,
run by the same interpreter with the plugin and with `-p no:mcp_confirm_audit`,
alternating, in fresh processes, and prints the medians and their ratio:
of the CPU time each run used (user and system, which other jobs on the
machine barely move) and of its wall-clock time. A measurement for the
README, not a test: timings move with the machine.
"""

from __future__ import annotations

# What only the timing needs (statistics, subprocess, tempfile...) is imported where it is used:
# every command's parser imports this module, and --version answers without them.
import argparse
import os
import sys
from pathlib import Path
from typing import Any

_PROJECT_TEST = "def test_one():\n    assert 1 + 1 == 2\n"
# Nothing of the caller's pytest configuration may reach the runs.
_DROPPED_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_DISABLE_PLUGIN_AUTOLOAD", "CI")


def add_parser(sub: Any) -> None:
    bench = sub.add_parser(
        "bench-plugin",
        help="time a one-test project unrelated to MCP with the plugin and without it (-p no:mcp_confirm_audit)",
    )
    bench.add_argument("--repeat", type=int, default=15, help="runs of each, alternating (default 15)")


def _cpu_of_children() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _once(project: Path, env: dict[str, str], *extra: str) -> tuple[float, float]:
    """(CPU seconds, wall-clock seconds) of one pytest run of the project."""
    import subprocess
    import time

    cpu = _cpu_of_children()
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"the one-test project failed: {done.stdout[-500:]}{done.stderr[-500:]}")
    return _cpu_of_children() - cpu, elapsed


def main(args: argparse.Namespace) -> int:
    import statistics
    import tempfile

    if args.repeat < 1:
        print("mcp-confirm-audit bench-plugin: --repeat must be at least 1", file=sys.stderr)
        return 4
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    with tempfile.TemporaryDirectory(prefix="mcp-audit-bench-") as scratch:
        project = Path(scratch)
        (project / "test_one.py").write_text(_PROJECT_TEST)
        _once(project, env)  # warm the file system cache, not measured
        with_plugin, without = [], []
        for _ in range(args.repeat):
            with_plugin.append(_once(project, env))
            without.append(_once(project, env, "-p", "no:mcp_confirm_audit"))
    print(f"one-test project, medians of {args.repeat}, alternating:")
    for label, index in (("CPU time", 0), ("wall clock", 1)):
        a = statistics.median(run[index] for run in with_plugin)
        b = statistics.median(run[index] for run in without)
        print(f"  {label:<11} with the plugin {a:.3f} s, -p no:mcp_confirm_audit {b:.3f} s: {a / b:.3f}x")
    return 0
