"""`mcp-confirm-audit bench-cli`: how long the commands that run no audit take to answer.

Each case is a fresh `python -m mcp_confirm_audit.cli.main ...` process, run `--repeat` times
in a folder of its own after one untimed run (which writes the bytecode an installed package has,
even where PYTHONDONTWRITEBYTECODE is set); the median wall time and CPU seconds of each are printed,
each CPU median against the goal of half a second. CPU is the figure to read on a shared machine:
wall time there counts the other processes' turns. Timings are printed here only (and by
`benchmarks/cli_latency.sh`), never asserted by a test.
"""

from __future__ import annotations

# What only the timing needs (statistics, subprocess, tempfile...) is imported where it is used:
# every command's parser imports this module, and --version answers without them.
import argparse
import os
import sys
from pathlib import Path
from typing import Any

_FILES = {
    "typo.yaml": "command: my-server --root {root}\ntol: delete_file\n",
    "syntax.yaml": "command: my-server --root {root}\ntool: [delete_file\n",
    "FLEET.yaml": "targets:\n  - {name: one, command: 'my-server --root {root}'}\n",
}
CASES: dict[str, tuple[str, ...]] = {
    "--version": ("--version",),
    "--help": ("--help",),
    "usage error": ("run",),
    "profile YAML syntax error": ("run", "--profile", "syntax.yaml"),
    "profile key typo": ("run", "--profile", "typo.yaml"),
    "fleet --matrix": ("fleet", "FLEET.yaml", "--matrix"),
}


def add_parser(sub: Any) -> None:
    bench = sub.add_parser(
        "bench-cli", help="time --version, --help, a usage error, a profile typo and fleet --matrix"
    )
    bench.add_argument("--repeat", type=int, default=5, help="runs of each (default 5)")


def _children_cpu() -> float:
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


# CPU seconds each command should stay under: "well under half a second" (issue 34).
GOAL = 0.5
_UNSET = ("PYTEST_ADDOPTS", "PYTHONDONTWRITEBYTECODE")


def _once(folder: Path, command: list[str]) -> tuple[float, float]:
    import subprocess
    import time

    cpu, start = _children_cpu(), time.perf_counter()
    subprocess.run(
        command,
        cwd=folder,
        env={k: v for k, v in os.environ.items() if k not in _UNSET},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return time.perf_counter() - start, _children_cpu() - cpu


def main(args: argparse.Namespace) -> int:
    import statistics
    import tempfile

    if args.repeat < 1:
        print("mcp-confirm-audit bench-cli: --repeat must be at least 1", file=sys.stderr)
        return 4
    with tempfile.TemporaryDirectory(prefix="mcp-bench-cli-") as tmp:
        folder = Path(tmp)
        for name, text in _FILES.items():
            (folder / name).write_text(text, encoding="utf-8")
        # The floor no command can go below: the interpreter starting and exiting.
        floor = [_once(folder, [sys.executable, "-c", "pass"])[0] for _ in range(args.repeat)]
        print(f"{'case':<28} {'wall s':>8} {'cpu s':>8}  goal")
        over = []
        for name, argv in CASES.items():
            command = [sys.executable, "-m", "mcp_confirm_audit.cli.main", *argv]
            _once(folder, command)  # the bytecode written, as an installed package has it
            runs = [_once(folder, command) for _ in range(args.repeat)]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            if cpu >= GOAL:
                over.append(name)
            print(f"{name:<28} {wall:>8.3f} {cpu:>8.3f}  {'over' if cpu >= GOAL else 'ok'}")
        print(
            f"({args.repeat} runs each, medians; a bare interpreter start took {statistics.median(floor):.3f} s)"
        )
    if over:
        print(f"over {GOAL:g} s of CPU: {', '.join(over)}", file=sys.stderr)
    return 1 if over else 0
