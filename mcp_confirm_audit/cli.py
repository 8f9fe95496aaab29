"""`mcp-confirm-audit`: a thin wrapper over pytest.main.

Everything it does, `pytest --mcp-...` does too; the CLI only saves typing.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import pytest

from . import bench


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mcp-confirm-audit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="audit a target (extra arguments go to pytest)")
    run.add_argument("target", nargs="?", help="the server command, with {root} where it takes its directory")
    run.add_argument("--profile", help="a target profile (YAML)")
    run.add_argument("--report-dir", help="write the reports here")
    bench.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args, rest = _parser().parse_known_args(argv)
    if args.command == "bench":
        return _bench(args, rest)
    if args.command == "run":
        pytest_args = ["-p", "no:cacheprovider"]
        if args.target:
            pytest_args += ["--mcp-target", args.target]
        if args.profile:
            pytest_args += ["--mcp-profile", args.profile]
        if args.report_dir:
            pytest_args += ["--mcp-report-dir", args.report_dir]
        if not args.target and not args.profile:
            print("mcp-confirm-audit run: give a target command or --profile FILE", file=sys.stderr)
            return int(pytest.ExitCode.USAGE_ERROR)
        return int(pytest.main([*pytest_args, *rest]))
    return int(pytest.ExitCode.USAGE_ERROR)


def _bench(args: argparse.Namespace, rest: Sequence[str]) -> int:
    if rest:
        print(f"mcp-confirm-audit bench: unknown arguments {' '.join(rest)}", file=sys.stderr)
        return int(pytest.ExitCode.USAGE_ERROR)
    return bench.main(args)


if __name__ == "__main__":
    sys.exit(main())
