"""`mcp-confirm-audit fleet FLEET.yaml`: many targets, each audited on its own, then one summary.

Each target is its own `mcp-confirm-audit run` process, with its own profile,
sandbox, report folder and log: nothing is shared, so one target that hangs,
crashes or leaks cannot touch another, and a failing one does not stop the
rest. `-n` runs that many side by side (bounded). `--matrix` prints the same
fleet as a GitHub Actions matrix instead, so that each target gets its own
runner (CI runners are the distributed engine, not a scheduler of ours), and
`merge DIR...` builds the same summary from the artifacts they upload.

FLEET.yaml:

    targets:
      - name: my-server                 # a folder name: letters, digits, . _ -
        profile: targets/my-server.yaml # relative to FLEET.yaml (--matrix: to where the job runs)
      - name: other
        command: "other-server --root {root}"
        args: [-k, REPLAY]              # for pytest (or one string, split into words)
        baseline: ci/other-baseline.yaml
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..profile.yamlfile import read_yaml

if TYPE_CHECKING:
    # The report writers (and the models under them) come only when targets run: --matrix answers at once.
    from ..report.fleet import TargetOutcome

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_KEYS = {"name", "profile", "command", "args", "baseline"}
_EXAMPLE = "e.g. 'targets: [{name: my-server, profile: targets/my-server.yaml}]'"
# GitHub Actions runs at most 256 jobs from one matrix.
MATRIX_LIMIT = 256
# Seconds a run stopped at --timeout has, after SIGTERM (its Ctrl-C), to end its targets and write
# what it can, before it is killed.
STOP_GRACE = 15.0


@dataclass(frozen=True, slots=True)
class FleetTarget:
    name: str
    profile: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()
    baseline: str | None = None

    def run_args(self, report_dir: Path) -> list[str]:
        words = ["run"]
        if self.command:
            words.append(self.command)
        if self.profile:
            words += ["--profile", self.profile]
        if self.baseline:
            words += ["--baseline", self.baseline]
        # No cache: targets running side by side share no file but their own folder.
        return [*words, "--report-dir", str(report_dir), "--", "-p", "no:cacheprovider", *self.args]


def load_fleet(path: Path) -> tuple[FleetTarget, ...]:
    """FLEET.yaml's targets, paths made relative to the directory the fleet runs in (its own)."""
    raw = read_yaml(path, "fleet", "pass a YAML file with a list of targets")
    if not isinstance(raw, Mapping) or set(raw) != {"targets"} or not isinstance(raw["targets"], list):
        raise UsageError(f"fleet {path}: must be a mapping with one key, 'targets', a list; {_EXAMPLE}")
    targets: list[FleetTarget] = []
    for number, entry in enumerate(raw["targets"], start=1):
        targets.append(_target(path, number, entry))
    names = [t.name for t in targets]
    if not targets:
        raise UsageError(f"fleet {path}: 'targets' is empty; {_EXAMPLE}")
    if dup := next((n for n in names if names.count(n) > 1), None):
        raise UsageError(f"fleet {path}: two targets are named {dup!r}; each needs its own name (its folder)")
    return tuple(targets)


def _target(path: Path, number: int, entry: object) -> FleetTarget:
    where = f"fleet {path}: target {number}"
    if not isinstance(entry, Mapping):
        raise UsageError(f"{where} must be a mapping; {_EXAMPLE}")
    if unknown := sorted(set(entry) - _KEYS):
        raise UsageError(f"{where}: unknown key {unknown[0]!r}; a target has {', '.join(sorted(_KEYS))}")
    name = entry.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise UsageError(f"{where}: 'name' must be a folder name (letters, digits, . _ -), got {name!r}")
    for key in ("profile", "command", "baseline"):
        if entry.get(key) is not None and (not isinstance(entry[key], str) or not entry[key].strip()):
            raise UsageError(f"{where} ({name}): {key!r} must be a non-empty string")
    if not entry.get("profile") and not entry.get("command"):
        raise UsageError(f"{where} ({name}): give a 'profile' (a file) or a 'command' (with {{root}})")
    args = entry.get("args") or ()
    if isinstance(args, str):
        try:
            args = shlex.split(args)
        except ValueError as exc:
            raise UsageError(f"{where} ({name}): 'args' cannot be split into words ({exc})") from None
    if not isinstance(args, list | tuple) or not all(isinstance(a, str) for a in args):
        raise UsageError(f"{where} ({name}): 'args' must be a list of words for pytest, e.g. [-k, REPLAY]")
    for key in ("profile", "baseline"):
        if entry.get(key) and not (path.parent / entry[key]).is_file():
            raise UsageError(
                f"{where} ({name}): {key} {entry[key]!r} is not a file (paths are relative to the fleet)"
            )
    return FleetTarget(name, entry.get("profile"), entry.get("command"), tuple(args), entry.get("baseline"))


def run_target(target: FleetTarget, out: Path, cwd: Path, timeout: float) -> TargetOutcome:
    """One target in a process of its own; what it leaves is its folder, whatever became of it."""
    from ..report.fleet import RECORD_FILE, STATUS_FILE, read_folder, record

    folder = (out / target.name).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "run.log"
    command = [sys.executable, "-m", "mcp_confirm_audit.cli.main", *target.run_args(folder)]
    failure: str | None = None
    started, clock = datetime.now(UTC), time.monotonic()
    with log.open("w", encoding="utf-8") as written:
        process = subprocess.Popen(
            command, cwd=cwd, stdout=written, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        try:
            exit_code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            exit_code, failure = _stop(process), f"did not finish within {timeout:g}s: stopped (see run.log)"
    if failure is None and not (folder / "audit.json").is_file():
        failure = _why(log.read_text(encoding="utf-8", errors="replace"), exit_code)
    status = {
        "name": target.name,
        "exit_code": exit_code,
        "failure": failure,
        "started": started.isoformat(timespec="seconds"),
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
        "seconds": round(time.monotonic() - clock, 1),
    }
    (folder / STATUS_FILE).write_text(json.dumps(status, indent=2) + "\n", encoding="utf-8")
    outcome = read_folder(target.name, folder)
    (folder / RECORD_FILE).write_text(json.dumps(record(outcome), indent=2) + "\n", encoding="utf-8")
    return outcome


def _stop(process: subprocess.Popen[bytes]) -> int:
    """Stop a run as Ctrl-C does (it takes SIGTERM as one and ends its targets), then kill it."""
    process.terminate()
    try:
        return process.wait(STOP_GRACE)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()


def _why(log: str, exit_code: int) -> str:
    """The one line a run that wrote no report said about why (its `mcp-confirm-audit...` line)."""
    # pytest prints a run stopped by the plugin as "Exit: mcp-confirm-audit: ...".
    lines = [line.strip().removeprefix("Exit: ") for line in log.splitlines() if line.strip()]
    said = [line for line in lines if line.startswith(("mcp-confirm-audit", "ERROR:", "error:"))]
    line = (said or lines or [f"exited {exit_code} without a report"])[-1]
    return f"exit {exit_code}: {line[:300]}"


def run_fleet(
    targets: Sequence[FleetTarget],
    out: Path,
    cwd: Path,
    workers: int,
    timeout: float,
    say: Callable[[str], None] | None = None,
) -> list[TargetOutcome]:
    """Every target, at most `workers` at once; the outcomes in the fleet's order.

    `say` gets a line as each target starts and one as it ends, with its outcome.
    """
    lock = threading.Lock()
    total = len(targets)

    def tell(line: str) -> None:
        if say is not None:
            with lock:
                say(line)

    def one(number: int, target: FleetTarget) -> TargetOutcome:
        tell(f"[{number}/{total}] {target.name}: started")
        outcome = run_target(target, out, cwd, timeout)
        took = outcome.extra.get("seconds")
        tell(f"[{number}/{total}] {target.name}: {describe(outcome)}" + (f" ({took}s)" if took else ""))
        return outcome

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        futures = [pool.submit(one, n, t) for n, t in enumerate(targets, start=1)]
        return [f.result() for f in futures]


def describe(outcome: TargetOutcome) -> str:
    """A target's outcome in a few words: its status, and its findings or why it failed."""
    if outcome.failure:
        return f"{outcome.status}: {outcome.failure}"
    counts = outcome.counts
    said = f"{outcome.status}, {outcome.findings} finding(s)"
    if counts.get("inconclusive"):
        said += f", {counts['inconclusive']} inconclusive"
    return said


def matrix(targets: Sequence[FleetTarget], base: Path | None = None) -> dict[str, Any]:
    """The fleet as `strategy.matrix` takes it (`fromJSON`): one job per target, every value a string.

    Paths are written relative to where the job runs (this folder), not to FLEET.yaml's: a
    FLEET.yaml in a subfolder gives `ci/targets/a.yaml`, as the job's `run --profile` needs.
    """
    if len(targets) > MATRIX_LIMIT:
        raise UsageError(f"a GitHub Actions matrix runs at most {MATRIX_LIMIT} jobs; split the fleet")

    def here(path: str | None) -> str:
        if not path:
            return ""
        if base is None or Path(path).is_absolute():
            return path
        return Path(os.path.relpath((base / path).resolve(), Path.cwd().resolve())).as_posix()

    return {
        "include": [
            {
                "name": t.name,
                "profile": here(t.profile),
                "target": t.command or "",
                "args": shlex.join(t.args),
                "baseline": here(t.baseline),
                "category": f"mcp-confirm-audit/{t.name}",
            }
            for t in targets
        ]
    }
