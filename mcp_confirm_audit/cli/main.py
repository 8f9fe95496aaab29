"""`mcp-confirm-audit`: a thin wrapper over pytest.main.

Everything `run` and `replay` do, `pytest --mcp-...` does too; the CLI only
saves typing; pytest options go after `--` (`run --profile F -- -n 2 -k REPLAY`).
`init`, `catalogue` and `baseline` write files for a person to review.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shlex
import shutil
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import AuditError, TargetError, UsageError
from . import bench_cli, bench_inert

# pytest's exit codes, spelled out: this module imports neither pytest nor the SDK until a
# subcommand needs them, so `--help`, `--version` and a usage error answer at once
# (tests/cli/test_answers_at_once.py checks what they import).
USAGE = 4
FINDINGS = 1
INTERRUPTED = 2
# The audit alone: no test files and no conftest.py of the directory it runs
# in (a repository's own suite stays out of it); `pytest --mcp-...` combines both.
# Plain asserts: this process has already imported the package, which pytest
# could no longer rewrite (and would warn about, an error under -W error).
# A weak result is a warning by design; a repository whose own pytest config
# turns warnings into errors must not turn it into a failure here.
# The cache stays on, so `-- --lf` re-runs what failed last time.
_AUDIT_ONLY = [
    "--noconftest",
    "--ignore-glob=*",
    "--assert=plain",
    "-W",
    "default::mcp_confirm_audit.run.collect.AuditWarning",
]


def _pytest_main(args: list[str]) -> int:
    import pytest

    return int(pytest.main(args))


def _fail(command: str, message: str, code: int = USAGE) -> int:
    print(f"mcp-confirm-audit {command}: {message}", file=sys.stderr)
    return code


def _option(flag: str, value: object) -> str:
    # One word, "--flag=value": pytest takes a separate word that names an
    # existing file (a profile) for a test path, and its rootdir and ini with it.
    return f"{flag}={value}"


def _emit(text: str, output: str | None) -> None:
    if output:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
        Path(output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


# -- run -----------------------------------------------------------------------


_DESCRIPTION = """\
Audit an MCP server that asks a human before it acts: controls, then every
attack in the catalogue, each a pytest item; writes audit.json, review.md and
audit.sarif with --report-dir. Exit 1 with findings is the expected outcome
for a server that has any.

Anything after `--` goes to pytest untouched, the plugin's own options too:
  mcp-confirm-audit run --profile targets/my.yaml -- -n 2 -k REPLAY
  mcp-confirm-audit run --profile targets/my.yaml -- --lf      (what failed last time)
With neither a command nor --profile, the words after `--` are the server's
command line, up to a second `--` that starts pytest's arguments:
  mcp-confirm-audit run -- my-server --root {root} -- -k REPLAY
A command with a `--` of its own (a proxy before its upstream) goes as one quoted word:
  mcp-confirm-audit run 'proxy wrap -- my-server --root {root}' -- -k REPLAY
"""


def _plugin_options() -> str:
    from ..plugin import OPTIONS

    lines = ["options of the pytest plugin (after --, or as the ini setting named in brackets):"]
    for flag, extra, help_text in OPTIONS:
        metavar = extra.get("metavar") or "{" + ",".join(extra.get("choices", ())) + "}"
        lines.append(f"  {flag} {metavar}  [{flag.lstrip('-').replace('-', '_')}]")
        lines.append(f"      {help_text}")
    lines.append("  --mcp-strict  [mcp_strict]\n      fail on weak results (SHOULD-level failures) too")
    lines.append(
        "  --mcp-no-ablation  [mcp_no_ablation]\n"
        "      in-process targets: do not run attacks the SDK boundary refused again without it"
    )
    return "\n".join(lines)


def _add_run(sub: Any) -> None:
    run = sub.add_parser(
        "run",
        help="audit a target (arguments after -- go to pytest)",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    # Written when `run --help` prints it: the plugin's options come with pytest.
    run.epilog_from = _plugin_options
    run.add_argument("target", nargs="?", help="the server command, with {root} where it takes its directory")
    run.add_argument("--profile", help="a target profile (YAML)")
    run.add_argument("--report-dir", help="write audit.json, review.md and audit.sarif here")
    run.add_argument("--baseline", help="accepted findings (YAML or JSON); stale entries fail the run")


def _run(args: argparse.Namespace, rest: list[str]) -> int:
    if not args.target and not args.profile and args.after_dashes[:1] and _is_command(args.after_dashes[0]):
        # `run -- my-server --root {root} [-- PYTEST-ARGS]`: the words up to the next `--`
        # are the server's command line, as `docker run` and `uvx` take one.
        words = args.after_dashes
        end = words.index("--") if "--" in words else len(words)
        if words[end + 1 : end + 2] and not words[end + 1].startswith("-"):
            # pytest would take them for test files, and the server would start without them: most
            # likely the command's own `--` (a proxy's `wrap -- upstream`), cut in two.
            return _fail(
                "run",
                f"the words after the second -- ({shlex.join(words[end + 1 :][:4])} ...) go to pytest, "
                "which takes no file here; if they are the server's own (a proxy's -- before its upstream), "
                f"give the whole command as one quoted word: run {shlex.quote(shlex.join(words))}",
            )
        whole = words[0] if end == 1 and any(c.isspace() for c in words[0]) else None
        # `run -- 'proxy wrap -- upstream {root}'`: one quoted word that is no program is the whole
        # command line, as `run 'CMD'` takes it (the advice above, given with the -- kept).
        args.target = whole if whole and shutil.which(whole) is None else shlex.join(words[:end])
        rest = rest[: len(rest) - len(words)] + words[end + 1 :]
    # The plugin's own options after `--` say the target too (the container's entry point).
    given = any(word.startswith(("--mcp-target", "--mcp-profile")) for word in rest)
    if not args.target and not args.profile and not given:
        return _fail(
            "run",
            "give the server to audit: run 'my-server --root {root}', run -- my-server --root {root}, "
            "or run --profile FILE (what follows a second -- goes to pytest)",
        )
    if args.profile and (problem := _profile_problem(Path(args.profile))):
        # As pytest prints it, without first importing pytest and the SDK (a typo answers at once).
        print(f"ERROR: {problem}", file=sys.stderr)
        return USAGE
    pytest_args = list(_AUDIT_ONLY)
    for flag, value in (
        ("--mcp-target", args.target),
        ("--mcp-profile", args.profile),
        ("--mcp-report-dir", args.report_dir),
        ("--mcp-baseline", args.baseline),
    ):
        if value:
            pytest_args.append(_option(flag, value))
    with _sigterm_as_ctrl_c():
        return _pytest_main([*pytest_args, *rest])


@contextmanager
def _sigterm_as_ctrl_c() -> Iterator[None]:
    """SIGTERM (a fleet's --timeout, a cancelled CI job) stops the audit as Ctrl-C does: pytest ends
    the session, the targets' processes are ended and the reports of what ran are written."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    # Until the plugin is configured: its own handler, which also knows when pytest is ending the
    # session (a KeyboardInterrupt raised inside those hooks is an internal error), replaces this one.
    interrupt.stands_in_for_the_plugin = True  # type: ignore[attr-defined]
    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _profile_problem(path: Path) -> str | None:
    """The one line a profile's loader has against it, checked before pytest starts."""
    from ..profile.yamlfile import read_yaml

    try:
        raw = read_yaml(path, "profile", "pass a YAML file from targets/ or your own")
        if isinstance(raw, Mapping):
            # The keys' models first, as the loader's first step reads them: a typo answers
            # before the loader imports the mechanisms, channels and effect kinds it builds.
            from ..profile import placeholders
            from ..profile.contract import read
            from ..profile.keys import ProfileKeys

            read(ProfileKeys, placeholders.spelled_out(raw, str(path.parent.resolve())), str(path))
        from ..profile.loader import load_profile

        load_profile(path)
    except UsageError as exc:
        return str(exc)
    return None


def _is_command(word: str) -> bool:
    # A pytest option starts with "-"; a command (or a URL, or py:module:factory) does not.
    return not word.startswith("-")


# -- init ----------------------------------------------------------------------


def _add_init(sub: Any) -> None:
    init = sub.add_parser("init", help="start a target and draft a profile from what discovery finds")
    init.add_argument("target", help="the server command, with {root} where it takes its directory")
    init.add_argument("--root-from", choices=("arg", "cwd"), help="how the target learns its root")
    init.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="'NAME: VALUE'",
        help="an HTTP header for an authenticated server (repeatable; ${NAME} is read from the "
        "environment, and the draft writes ${NAME}, never the credential)",
    )
    init.add_argument("-o", "--output", help="write the profile here instead of to stdout")


def _init(args: argparse.Namespace, rest: list[str]) -> int:
    from .init_profile import draft_profile

    try:
        text = draft_profile(args.target, args.root_from, args.header)
    except TargetError as exc:
        return _fail("init", str(exc), int(INTERRUPTED))
    except UsageError as exc:
        # The profile's checks speak of the plugin's option; init's is --root-from. Only the first
        # mention is init's: the advice for `run` after it keeps run's spelling, which is what run takes.
        return _fail("init", str(exc).replace("--mcp-root-from", "--root-from", 1))
    except AuditError as exc:
        return _fail("init", str(exc))
    _emit(text, args.output)
    if args.output:
        # What was learned is in the file; what to do with it, here.
        print(f"wrote {args.output}\nnext: mcp-confirm-audit run --profile {shlex.quote(args.output)}")
    return 0


# -- catalogue -----------------------------------------------------------------


def _add_catalogue(sub: Any) -> None:
    cat = sub.add_parser("catalogue", help="list the attacks, or write docs/attacks.md (--markdown)")
    cat.add_argument("--markdown", action="store_true", help="the catalogue as Markdown (docs/attacks.md)")
    cat.add_argument("-o", "--output", help="write to this file instead of stdout")


def _catalogue(args: argparse.Namespace, rest: list[str]) -> int:
    from ..catalogue.docs import listing, markdown
    from ..catalogue.loader import load_catalogue

    catalogue = load_catalogue()
    _emit(markdown(catalogue) if args.markdown else listing(catalogue), args.output)
    return 0


# -- schema --------------------------------------------------------------------


def _add_schema(sub: Any) -> None:
    schema = sub.add_parser(
        "schema", help="print the JSON Schema of a profile, or write docs/profile.md (--markdown)"
    )
    schema.add_argument(
        "what",
        choices=("profile", "attacks", "audit"),
        help="the file format: profile (a target profile), attacks (a family of attacks/*.yaml), audit (audit.json)",
    )
    schema.add_argument(
        "--markdown", action="store_true", help="the key reference as Markdown (docs/profile.md)"
    )
    schema.add_argument("-o", "--output", help="write to this file instead of stdout")


def _schema(args: argparse.Namespace, rest: list[str]) -> int:
    from ..profile import docs

    if args.what == "attacks":
        from ..catalogue import entries

        _emit(entries.catalogue_schema_text(), args.output)
        return 0
    if args.what == "audit":
        from ..report import audit_model

        _emit(audit_model.schema_text(), args.output)
        return 0
    _emit(docs.markdown() if args.markdown else docs.schema_text(), args.output)
    return 0


# -- replay --------------------------------------------------------------------


def _add_replay(sub: Any) -> None:
    replay = sub.add_parser("replay", help="re-run one result of an audit.json against the same target")
    replay.add_argument("report", help="an audit.json written by --mcp-report-dir")
    replay.add_argument("id", help="the attack id, e.g. MCA-REPLAY-001")
    replay.add_argument("--tool", help="which tool, when the report audited more than one")


def _replay(args: argparse.Namespace, rest: list[str]) -> int:
    try:
        document = json.loads(Path(args.report).read_text())
    except (OSError, ValueError) as exc:
        return _fail("replay", f"cannot read {args.report} as an audit.json: {exc}")
    matches = [
        r
        for r in document.get("results", ())
        if r.get("id") == args.id and (args.tool is None or r.get("tool") == args.tool)
    ]
    tools = sorted({r["tool"] for r in matches})
    if not matches:
        return _fail(
            "replay", f"{args.report} has no result {args.id}" + (f" on {args.tool}" if args.tool else "")
        )
    if len(tools) > 1:
        return _fail("replay", f"{args.id} ran on {', '.join(tools)}: choose one with --tool")
    target = document.get("target") or {}
    pytest_args = [*_AUDIT_ONLY, _option("--mcp-target", target.get("command", ""))]
    if (profile := target.get("profile")) and Path(profile).is_file():
        pytest_args.append(_option("--mcp-profile", profile))
    elif profile:
        # Without it the same command is audited with no profile: other tools, other arguments,
        # called for real. That is another audit, not this result again.
        return _fail(
            "replay",
            f"the run used the profile {profile}, which is not found from {Path.cwd()}; "
            "run replay from the directory the audit ran in",
        )
    if target.get("root_from"):
        pytest_args.append(_option("--mcp-root-from", target["root_from"]))
    if target.get("call_timeout"):
        pytest_args.append(_option("--mcp-call-timeout", target["call_timeout"]))
    return _pytest_main([*pytest_args, "-k", f"{args.id} and {tools[0]}", *rest])


# -- baseline ------------------------------------------------------------------


def _add_baseline(sub: Any) -> None:
    base = sub.add_parser(
        "baseline",
        help="write a baseline accepting every finding of an audit.json, or --prune its stale entries",
    )
    base.add_argument("report", help="an audit.json written by --mcp-report-dir")
    base.add_argument("-o", "--output", help="write the baseline here instead of stdout")
    base.add_argument(
        "--no-layers", action="store_true", help="do not pin the layer that refused each attack"
    )
    base.add_argument(
        "--prune",
        metavar="BASELINE",
        help="drop from BASELINE the entries the audit.json (run with it) found stale; rewritten in "
        "place, or to -o",
    )


def _baseline(args: argparse.Namespace, rest: list[str]) -> int:
    from ..report.baseline_file import baseline_from_audit, left_out

    try:
        document = json.loads(Path(args.report).read_text())
    except (OSError, ValueError) as exc:
        return _fail("baseline", f"cannot read {args.report} as an audit.json: {exc}")
    if document.get("schema_version") != 1 or not isinstance(document.get("results"), list):
        return _fail("baseline", f"{args.report} is not an audit.json of schema_version 1")
    if args.prune:
        return _prune(args, document)
    _emit(baseline_from_audit(document, args.report, layers=not args.no_layers), args.output)
    if unjudged := left_out(document):
        print(
            f"mcp-confirm-audit baseline: left out {len(unjudged)} inconclusive result(s), which a baseline "
            "cannot excuse (review.md's 'Not testable here' says what would judge each; or exclude: the "
            "attack in the profile, with the reason):",
            file=sys.stderr,
        )
        for line in unjudged:
            print(f"  {line}", file=sys.stderr)
    print(
        "mcp-confirm-audit baseline: replace each 'TODO say why' with the reason the finding is accepted; "
        "the gate refuses a TODO",
        file=sys.stderr,
    )
    return 0


def _prune(args: argparse.Namespace, document: Any) -> int:
    from ..profile.yamlfile import read_yaml
    from ..report.baseline_file import pruned, stale_entries

    path = Path(args.prune)
    try:
        raw = read_yaml(path, "baseline", "give the baseline the audit ran with", kind="YAML or JSON")
    except UsageError as exc:
        return _fail("baseline", str(exc))
    if not isinstance(raw, dict):
        return _fail("baseline", f"{path} is not a baseline (a mapping with 'findings')")
    if not (document.get("baseline") or {}).get("file"):
        return _fail(
            "baseline",
            f"{args.report} was not written with a baseline: run the audit with --baseline {path} first",
        )
    text, dropped = pruned(raw, stale_entries(document), args.report)
    _emit(text, args.output or str(path))
    print(
        f"mcp-confirm-audit baseline: dropped {dropped} stale entr{'y' if dropped == 1 else 'ies'} "
        f"from {path}",
        file=sys.stderr,
    )
    return 0


# -- fleet and merge -----------------------------------------------------------


def _add_fleet(sub: Any) -> None:
    fleet = sub.add_parser(
        "fleet",
        help="audit many targets, each on its own, and write one summary (or --matrix for CI)",
        description="A line per target as it starts and as it ends; then fleet.md, fleet.html, "
        "fleet.sarif and fleet.json in the output folder, and a record.json in each target's folder.",
    )
    fleet.add_argument("file", help="FLEET.yaml: targets: [{name, profile or command, args, baseline}]")
    fleet.add_argument(
        "-n", "--workers", type=int, default=1, help="targets audited side by side (default 1)"
    )
    fleet.add_argument("-o", "--output", default="fleet-reports", help="a folder per target, and the summary")
    fleet.add_argument(
        "--timeout",
        type=float,
        default=1800,
        help="seconds one target may take; then it is stopped as Ctrl-C stops it (SIGTERM), and killed "
        "if it has not ended 15 s later",
    )
    fleet.add_argument("--matrix", action="store_true", help="print a GitHub Actions matrix, run nothing")


def _fleet(args: argparse.Namespace, rest: list[str]) -> int:
    from .fleet import load_fleet, matrix, run_fleet

    if args.workers < 1 or args.timeout <= 0:
        return _fail("fleet", "-n must be 1 or more, and --timeout a positive number of seconds")
    path = Path(args.file)
    try:
        targets = load_fleet(path)
        if args.matrix:
            sys.stdout.write(json.dumps(matrix(targets, path.parent)) + "\n")
            return 0
    except UsageError as exc:
        return _fail("fleet", str(exc))
    out = Path(args.output).resolve()
    outcomes = run_fleet(targets, out, path.parent.resolve(), args.workers, args.timeout, say=_progress)
    return _summarised(out, outcomes)


def _progress(line: str) -> None:
    print(line, flush=True)


def _summarised(out: Path, outcomes: Sequence[Any]) -> int:
    from ..report.fleet_files import write_summary

    for written in write_summary(out, outcomes):
        print(f"summary: {written}")
    for o in outcomes:
        print(f"{o.name}: {o.status}" + (f": {o.failure}" if o.failure else f", {o.findings} finding(s)"))
    # pytest's codes: 0 all clean, 1 a finding or a target not judged or failed.
    return 0 if all(o.status == "clean" for o in outcomes) else FINDINGS


def _add_merge(sub: Any) -> None:
    merge = sub.add_parser(
        "merge", help="combine the report folders (CI artifacts) of a fleet into one summary"
    )
    merge.add_argument(
        "dirs", nargs="+", help="folders holding audit.json (downloaded artifacts, or a fleet's output)"
    )
    merge.add_argument(
        "-o", "--output", default="fleet-summary", help="write fleet.md, fleet.sarif, fleet.json here"
    )


def _merge(args: argparse.Namespace, rest: list[str]) -> int:
    from ..report.fleet import artifact_name, folders_with_reports, read_folder

    roots = [Path(d) for d in args.dirs]
    if missing := [str(r) for r in roots if not r.is_dir()]:
        return _fail("merge", f"not a folder: {', '.join(missing)}")
    folders = folders_with_reports(roots)
    # A folder given that holds nothing is a target whose artifact never came: listed as failed.
    empty = [r for r in roots if not any(f == r or r in f.parents for f in folders)]
    outcomes = [read_folder(artifact_name(f), f) for f in folders] + [
        read_folder(artifact_name(r), r) for r in empty
    ]
    return _summarised(Path(args.output), outcomes)


# -- bench ---------------------------------------------------------------------


def _add_bench(sub: Any) -> None:
    # The full parser only when bench runs (bench imports the SDK); a line in the list otherwise.
    sub.add_parser("bench", help="time the audit against a bare SDK client making the same round trips")


def _bench(args: argparse.Namespace, rest: list[str]) -> int:
    from . import bench

    return bench.main(args)


def _add_corpus(sub: Any) -> None:
    # As bench: the full parser only when corpus runs (it imports pydantic and YAML).
    sub.add_parser("corpus", help="audit the reference corpus: detection and false-positive rates")


def _corpus(args: argparse.Namespace, rest: list[str]) -> int:
    from . import corpus

    return corpus.main(args)


# Subcommands whose module is heavy: their own parser is built only when they run.
_BUILT_WHEN_RUN = ("bench", "corpus")

_Handler = Callable[[argparse.Namespace, list[str]], int]
_COMMANDS: dict[str, tuple[Callable[[Any], None], _Handler]] = {
    "run": (_add_run, _run),
    "init": (_add_init, _init),
    "catalogue": (_add_catalogue, _catalogue),
    "schema": (_add_schema, _schema),
    "replay": (_add_replay, _replay),
    "baseline": (_add_baseline, _baseline),
    "fleet": (_add_fleet, _fleet),
    "merge": (_add_merge, _merge),
    "bench": (_add_bench, _bench),
    "bench-plugin": (bench_inert.add_parser, lambda args, rest: bench_inert.main(args)),
    "bench-cli": (bench_cli.add_parser, lambda args, rest: bench_cli.main(args)),
    "corpus": (_add_corpus, _corpus),
}
# Subcommands that pass unknown arguments on to pytest.
_PASS_THROUGH = {"run", "replay"}


class _Parser(argparse.ArgumentParser):
    epilog_from: Callable[[], str] | None = None

    def format_help(self) -> str:
        if self.epilog_from is not None:
            self.epilog = self.epilog_from()
        return super().format_help()

    def error(self, message: str) -> Any:
        # pytest's exit code for a usage error, not argparse's 2 (which here
        # means the target did not start).
        self.print_usage(sys.stderr)
        self.exit(USAGE, f"{self.prog}: error: {message}\n")


def _parser(command: str | None = None) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="mcp-confirm-audit",
        description="Audit the confirmations of an MCP server, as a real client, through pytest.",
        epilog="'mcp-confirm-audit run --help' lists the plugin's --mcp-* options.",
    )
    parser.add_argument("--version", action="version", version=f"mcp-confirm-audit {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (add, _) in _COMMANDS.items():
        if name in _BUILT_WHEN_RUN and command == name:
            importlib.import_module(f"{__package__}.{name}").add_parser(sub)
        else:
            add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    ours = list(sys.argv[1:] if argv is None else argv)
    parser = _parser(next((word for word in ours if word in _COMMANDS), None))
    # Everything after "--" goes to pytest untouched: `run --profile F -- -n 2`
    # cannot mistake the "2" for the target command.
    extra = ours[ours.index("--") + 1 :] if "--" in ours else []
    ours = ours[: ours.index("--")] if "--" in ours else ours
    args, rest = parser.parse_known_args(ours)
    args.after_dashes = extra
    if rest and args.command not in _PASS_THROUGH:
        parser.error(f"unrecognized arguments: {' '.join([*rest, *extra])}")
    # An unknown option before `--` would leave its value to be read as the server's command.
    if misplaced := [word for word in rest if word.startswith("-")]:
        parser.error(
            f"{misplaced[0]} is not an option of {args.command!r}: pytest's and the plugin's options go "
            f"after -- ({args.command} --profile FILE -- {misplaced[0]} ...), and a server's command is "
            "one quoted word or follows --"
        )
    rest += extra
    return _COMMANDS[args.command][1](args, rest)


if __name__ == "__main__":
    sys.exit(main())
