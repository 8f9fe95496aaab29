"""`corpus`: audit the reference servers as a corpus, and say how often the audit is right.

`targets/corpus/corpus.yaml` lists every reference server configuration: the flaw it has and the
attacks that must find it (and with which verdict), and its careful twins, which must give
no finding. Each case is one audit, started as a real process as any target is. What is
counted:

- detection: each expected attack on a flawed case, found if its verdict is one the case
  lists (a missing or other verdict is a miss);
- false positives: every judged attack (refused, vulnerable or weak) on a careful twin that
  found something (vulnerable or weak); with `--all-families`, also every judged attack on a
  flawed case outside the families its flaw may fool (`families:`), as the detection matrix
  checks. A flawed case's other findings inside those families are the flaw's and not counted.

Each rate is printed per family and overall with the number of trials behind it and a 95%
Wilson score interval. `--write-docs` writes the table to docs/explanation/corpus.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import functools
import itertools
import logging
import math
import os
import shlex
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

USAGE = 4
DEFAULT_MANIFEST = Path("targets") / "corpus" / "corpus.yaml"
DOCS_PAGE = Path("docs") / "explanation" / "corpus.md"
FINDINGS = frozenset({"vulnerable", "weak"})
JUDGED = frozenset({"refused", "vulnerable", "weak"})
_Z95 = 1.959963984540054
# A control whose failure is a flaw's finding, expected as `control-NAME` (engine/baseline's CONTROL_PREFIX):
# `unasked`, a tool that acted on its first call with no question; `decline`, the person's no that acted
# (a review CLI that writes what was rejected); `preview-alone`, a staging call that acted with no yes.
_CONTROL = "control-"
EXPECTED_CONTROLS = ("control-unasked", "control-decline", "control-preview-alone")
# The controls a case's outcome keeps when they fail: the honest flow, and a tool that acted unasked.
_KEPT_CONTROLS = ("approve", "unasked")
# A Python target over stdio forks from one process that imported the SDK (target/zygote.py).
_SDK_ZYGOTE = ("mcp.server.mcpserver",)
# The controls a flawed case may expect its flaw to fail (engine/controls, confirmations/honest.py).
_CONTROL_NAMES = Literal["approve", "preview-alone", "decline", "cancel", "negative", "unanswered"]

if TYPE_CHECKING:
    from ..profile.loader import Profile


class ServerEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    command: str
    tool: str | None = None
    call_timeout: float | None = Field(default=None, gt=0)
    profile: str | None = None
    # Profile keys (docs/profile.md) beside the command, as a profile file would hold them.
    settings: dict[str, Any] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_source(self) -> ServerEntry:
        if self.profile and self.settings:
            raise ValueError("a server starts from a profile or has settings:, not both")
        return self


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    server: str
    flags: list[str] = Field(default_factory=list)
    families: list[str] | None = None
    careful: bool = False
    # A careful case that runs every family but these (each a finding its mechanism has by design).
    skip: list[str] | None = None
    # Why a careful case runs only some families (a careful case runs every family by default).
    why: str | None = None
    expect: dict[str, list[str]] = Field(default_factory=dict)
    # Profile keys of this case alone, over its server's `settings` (an in-process server's flaws go in
    # its `factory_args`, as flags go on a command).
    settings: dict[str, Any] = Field(default_factory=dict)
    # The controls a flawed case's flaw fails, beside its findings (`approve`: a gate that acts when nobody
    # answers is open, every other attack inconclusive, so no baseline holds its run green).
    fails_controls: list[_CONTROL_NAMES] = Field(default_factory=list)
    # Why this server has no honest flow to complete (it never asks, or its tool acts on its first call):
    # its approve control fails by design, and what needs no honest flow is judged all the same.
    no_honest_flow: str | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Case:
        if self.careful == bool(self.expect):
            raise ValueError(
                f"case {self.id}: a case is either careful: true or has expect:, not both or neither"
            )
        if self.skip is not None and (not self.careful or self.families is not None):
            raise ValueError(f"case {self.id}: skip: is for a careful case without families:")
        if self.careful and (self.families is None and self.skip is None) != (self.why is None):
            raise ValueError(
                f"case {self.id}: a careful case that runs only some families says why (why:), "
                "and one that runs them all has no why:"
            )
        if self.careful and self.fails_controls:
            raise ValueError(
                f"case {self.id}: fails_controls: is for a flawed case; a careful one fails none"
            )
        if self.fails_controls == ["approve"]:
            # The honest flow completed, then another control found the gate open: a harness that could not
            # complete it at all fails approve alone, never a case's expectation.
            raise ValueError(
                f"case {self.id}: fails_controls: [approve] names the control that failed it too, "
                "e.g. [approve, unanswered]"
            )
        if not self.careful and self.why is not None:
            raise ValueError(f"case {self.id}: why: is for a careful case that runs only some families")
        for attack, verdicts in self.expect.items():
            if attack.startswith(_CONTROL) and attack not in EXPECTED_CONTROLS:
                raise ValueError(
                    f"case {self.id}: {attack} is no control a flaw fails; one of {', '.join(EXPECTED_CONTROLS)}"
                )
            if not verdicts or set(verdicts) - FINDINGS:
                raise ValueError(
                    f"case {self.id}: {attack} must expect vulnerable and/or weak, got {verdicts}"
                )
        return self


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    # The folder of the servers and profiles ({targets}), relative to the manifest's own folder.
    targets: str = ".."
    servers: dict[str, ServerEntry]
    cases: list[Case]

    @model_validator(mode="after")
    def _known(self) -> Manifest:
        seen: set[str] = set()
        for case in self.cases:
            if case.server not in self.servers:
                raise ValueError(f"case {case.id}: no server {case.server!r} under servers:")
            if case.id in seen:
                raise ValueError(f"case {case.id} is listed twice")
            if case.settings and self.servers[case.server].profile:
                raise ValueError(
                    f"case {case.id}: its server starts from a profile; put settings in that profile"
                )
            seen.add(case.id)
        return self


def load_manifest(path: Path) -> Manifest:
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
        return Manifest.model_validate(raw)
    except OSError as exc:
        raise ValueError(
            f"cannot read the corpus {path}: {exc.strerror}; pass --manifest targets/corpus/corpus.yaml"
        ) from None
    except (yaml.YAMLError, ValidationError) as exc:
        first = str(exc).splitlines()
        raise ValueError(f"{path}: {' '.join(first[:3])}") from None


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """What one case's audit gave: (attack id, family, verdict) of each result, and failed controls."""

    case: str
    results: tuple[tuple[str, str, str], ...]
    failed_controls: tuple[str, ...] = ()
    error: str | None = None
    # What each failed control said, in the same order (the first of its tools'), for the line that names it.
    failed_why: tuple[str, ...] = ()
    # A flawed case: why its run gated by a baseline of its own findings would exit 1 ([]: it exits 0).
    baselined: tuple[str, ...] | None = None
    # A flawed case of the sample: `run --baseline` for real, its exit status and last line.
    reran: tuple[int, str] | None = None


def wilson(successes: int, trials: int) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (0 to 1 when there are no trials)."""
    if trials == 0:
        return 0.0, 1.0
    p, z2 = successes / trials, _Z95 * _Z95
    scale = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / scale
    half = _Z95 * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / scale
    return max(0.0, centre - half), min(1.0, centre + half)


def command_of(manifest: Manifest, case: Case, targets: Path) -> str:
    server = manifest.servers[case.server]
    words = [
        word.replace("{python}", sys.executable).replace("{targets}", str(targets))
        for word in shlex.split(server.command)
    ]
    return shlex.join([*words, *case.flags])


def _placed(value: Any, words: Mapping[str, str]) -> Any:
    """`value` with each of `words` ({python}, {targets}, {flags}) put in every string."""
    if isinstance(value, str):
        for word, meaning in words.items():
            value = value.replace(word, meaning)
        return value
    if isinstance(value, list):
        return [_placed(item, words) for item in value]
    if isinstance(value, dict):
        return {key: _placed(item, words) for key, item in value.items()}
    return value


def settings_of(manifest: Manifest, case: Case, targets: Path) -> dict[str, Any]:
    """The profile keys of a case: its server's, then its own (a key of both is the case's).

    With `servers:` (a target of several servers) there is no one command to add the case's flags to:
    `{flags}` in a server's command says where they go.
    """
    words = {"{python}": sys.executable, "{targets}": str(targets), "{flags}": shlex.join(case.flags)}
    merged = {**manifest.servers[case.server].settings, **case.settings}
    return {key: _placed(value, words) for key, value in merged.items()}


def profile_of(manifest: Manifest, case: Case, targets: Path, *, scale: float = 1.0) -> Profile:
    """The profile a case is audited with; UsageError (one line) if its settings are not a profile's.

    `scale` multiplies the harness's own deadlines (a round trip, a start, an answer), as the suite's
    MCA_DEADLINE_SCALE does on a loaded machine; never a server's own lifetimes (ttl), which the
    verdicts are about.
    """
    from ..profile.loader import Profile, load_profile, profile_from_mapping, resolve_profile

    server = manifest.servers[case.server]
    for name, value in server.env.items():
        os.environ.setdefault(name, value)
    command = command_of(manifest, case, targets)
    settings = settings_of(manifest, case, targets)
    if server.profile:
        profile = resolve_profile(load_profile(targets / server.profile), command, None)
    elif settings:
        command_key = {} if "servers" in settings else {"command": command}
        raw = {**command_key, **({"tool": server.tool} if server.tool else {}), **settings}
        profile = profile_from_mapping(raw, source=f"corpus case {case.id}")
        profile = profile if "servers" in settings else resolve_profile(profile, None, None)
    else:
        profile = Profile(command=command, tool=server.tool)
    if server.call_timeout is not None:
        profile = dataclasses.replace(profile, call_timeout=server.call_timeout)
    if not (profile.is_url or profile.is_in_process or profile.serves_http or profile.tty):
        profile = dataclasses.replace(profile, zygote=_SDK_ZYGOTE)
    if scale != 1.0:
        answer = profile.answer_deadline
        profile = dataclasses.replace(
            profile,
            call_timeout=profile.call_timeout * scale,
            start_timeout=profile.start_timeout * scale,
            answer_deadline=None if answer is None else answer * scale,
        )
    return profile


_EXAMPLES = 10


def run_case(
    manifest: Manifest,
    case: Case,
    targets: Path,
    *,
    all_families: bool = False,
    scale: float = 1.0,
    rerun: bool = False,
) -> Outcome:
    """One case's audit, in this process (the target is a real process of its own).

    A careful case runs its `families` (all by default); a flawed case runs the families its flaw
    may fool, or every family with `all_families`. A flawed case's results are then put to the CI
    gate under a baseline of its own findings, and with `rerun` the CLI runs it again for real,
    gated by that baseline.
    """
    from ..catalogue.generation import CI_SEED, Generation
    from ..engine.session import run_audit
    from ..errors import AuditError
    from . import corpus_gate

    try:
        profile = profile_of(manifest, case, targets, scale=scale)
        runs_all = case.families is None or (all_families and not case.careful)
        families = None if runs_all or case.families is None else frozenset(case.families)
        skipped = frozenset(case.skip or ())
        excluded = profile.exclude
        run = run_audit(
            profile,
            # As `run` leaves out what the profile excludes: an attack a case's settings exclude is not run.
            select=lambda spec: (
                (families is None or spec.family in families)
                and spec.family not in skipped
                and spec.id not in excluded
            ),
            generation=Generation(examples=_EXAMPLES, seed=CI_SEED),
        )
    except (AuditError, OSError, RuntimeError) as exc:
        # A target that did not start (or a profile it cannot take) is this case's error, never the run's.
        return Outcome(case.id, (), error=f"{type(exc).__name__}: {exc}")
    results = tuple((r.id, r.family, r.verdict.value) for r in run.results)
    # The honest approve flow gates every attack; a flaw may break another control (a decline that acts),
    # kept when the case names it (fails_controls), and a tool that acts on its first call fails `unasked`.
    expected = (attack.removeprefix(_CONTROL) for attack in case.expect if attack.startswith(_CONTROL))
    named = {*_KEPT_CONTROLS, *case.fails_controls, *expected}
    failed = tuple(dict.fromkeys(c.name for c in run.controls if c.name in named and not c.passed))
    why = tuple(next(c.detail for c in run.controls if c.name == name and not c.passed) for name in failed)
    if case.careful or case.no_honest_flow:
        # With no honest flow a real run errors on its approve control, as it must: no baseline is put to it.
        return Outcome(case.id, results, failed, failed_why=why)
    text = corpus_gate.baseline_text(run.results, run.controls)
    baselined = tuple(corpus_gate.gated(run.results, run.controls, text))
    reran = None
    if rerun and not baselined:
        server = manifest.servers[case.server]
        file, raw, command = _source_of(manifest, case, targets)
        try:
            reran = corpus_gate.rerun(
                file,
                raw,
                command,
                text=text,
                families=None if families is None else sorted(families),
                timeouts=(profile.call_timeout, profile.start_timeout),
                env=server.env,
                seed=CI_SEED,
                examples=_EXAMPLES,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            reran = (-1, f"{type(exc).__name__}: {exc}")
    return Outcome(case.id, results, failed, baselined=baselined, reran=reran, failed_why=why)


def _source_of(
    manifest: Manifest, case: Case, targets: Path
) -> tuple[Path | None, dict[str, Any] | None, str | None]:
    """What `run` is given for a case: its profile file and command, or the mapping of its keys."""
    server = manifest.servers[case.server]
    command = command_of(manifest, case, targets)
    if server.profile:
        return targets / server.profile, None, command
    settings = settings_of(manifest, case, targets)
    command_key = {} if "servers" in settings else {"command": command}
    return None, {**command_key, **({"tool": server.tool} if server.tool else {}), **settings}, None


@dataclasses.dataclass(slots=True)
class Tally:
    detected: int = 0
    expected: int = 0
    false_positives: int = 0
    judged: int = 0


def score(manifest: Manifest, outcomes: Iterable[Outcome]) -> tuple[dict[str, Tally], list[str]]:
    """Per family: detections and false positives; and one line per miss, false positive or error."""
    cases = {case.id: case for case in manifest.cases}
    tallies: dict[str, Tally] = defaultdict(Tally)
    wrong: list[str] = []
    for outcome in outcomes:
        case = cases[outcome.case]
        if outcome.error:
            wrong.append(f"{case.id}: the audit did not run: {outcome.error}")
        for control, why in itertools.zip_longest(outcome.failed_controls, outcome.failed_why, fillvalue=""):
            if control == "approve" and case.no_honest_flow:
                continue
            if control not in case.fails_controls and _CONTROL + control not in case.expect:
                said = f" ({why[:300]!a})" if why else ""
                wrong.append(f"{case.id}: control {control} failed{said}, so its attacks are inconclusive")
        if not outcome.error:
            for control in case.fails_controls:
                if control not in outcome.failed_controls:
                    wrong.append(
                        f"{case.id}: control {control} did not fail, where this case's flaw must fail it"
                    )
        # An audit of several tools (zero configuration) has a result per attack and tool: an expected
        # attack is found when it is found on any of them, and every other judged result is a trial.
        # A failed control a case expects (control-unasked) is a finding of its own.
        got: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for attack, family, verdict in outcome.results:
            got[attack].append((family, verdict))
        for name in outcome.failed_controls:
            got[_CONTROL + name].append((name, "vulnerable"))
        for attack, wanted in case.expect.items():
            default = (
                attack.removeprefix(_CONTROL) if attack.startswith(_CONTROL) else _family_of(attack, outcome)
            )
            seen = got.get(attack) or [(default, "missing")]
            tally = tallies[seen[0][0]]
            tally.expected += 1
            if any(verdict in wanted for _, verdict in seen):
                tally.detected += 1
            else:
                said = ", ".join(sorted({verdict for _, verdict in seen}))
                wrong.append(f"{case.id}: {attack} missed ({said}, wanted {' or '.join(wanted)})")
        fooled = frozenset(case.families or ()) if not case.careful else frozenset()
        for attack, family, verdict in outcome.results:
            if attack in case.expect or verdict not in JUDGED or family in fooled:
                continue
            tally = tallies[family]
            tally.judged += 1
            if verdict in FINDINGS:
                tally.false_positives += 1
                wrong.append(f"{case.id}: {attack} is a false positive ({verdict})")
    return dict(tallies), wrong


@dataclasses.dataclass(slots=True)
class Careful:
    """One family on the careful cases: judged, found (vulnerable/weak), and left inconclusive."""

    judged: int = 0
    found: int = 0
    input_inconclusive: int = 0
    other_inconclusive: int = 0


def careful_score(manifest: Manifest, outcomes: Iterable[Outcome]) -> tuple[dict[str, Careful], list[str]]:
    """Per family on the careful cases; and one line per inconclusive input attack, which fails the run.

    An input attack (its hostile part a path, a name, a token, an id or text the question shows) runs
    beside its benign twin (techniques/_twins.py, _twins_closed.py, the family's `input_value` trait):
    on a careful server it must end refused or not applicable, never inconclusive. A finding is a false positive, counted by `score`.
    """
    from ..techniques import traits

    inputs = {name for name, trait in traits().items() if trait.input_value}
    careful = {case.id for case in manifest.cases if case.careful}
    tallies: dict[str, Careful] = defaultdict(Careful)
    wrong: list[str] = []
    for outcome in outcomes:
        if outcome.case not in careful:
            continue
        for attack, family, verdict in outcome.results:
            tally = tallies[family]
            tally.judged += verdict in JUDGED
            tally.found += verdict in FINDINGS
            if verdict == "inconclusive" and family in inputs:
                tally.input_inconclusive += 1
                wrong.append(f"{outcome.case}: {attack} (an input attack) is inconclusive on a careful case")
            elif verdict == "inconclusive":
                tally.other_inconclusive += 1
    return dict(tallies), wrong


def _expected_lines(case: Case, lines: Sequence[str]) -> tuple[str, ...]:
    """The gate's lines that are the failures of controls this case expects (fails_controls).

    With `approve` among them, an attack left inconclusive because the honest flow failed is that
    failure too (a family the case does not run, with --all-families); any other line is not.
    """
    open_gate = "approve" in case.fails_controls
    return tuple(
        line
        for line in lines
        if any(line.startswith(f"control {c} on ") for c in case.fails_controls)
        or (open_gate and ": error, honest flow failed: " in line)
    )


def baseline_wrong(manifest: Manifest, outcomes: Iterable[Outcome]) -> list[str]:
    """One line per flawed case whose run, gated by a baseline of its own findings, would not exit 0.

    A line of a control the case expects to fail (fails_controls) is its expectation, not a fault.
    """
    cases = {case.id: case for case in manifest.cases}
    wrong: list[str] = []
    for outcome in outcomes:
        expected = _expected_lines(cases[outcome.case], outcome.baselined or ())
        for line in outcome.baselined or ():
            if line in expected:
                continue
            wrong.append(f"{outcome.case}: under a baseline of its own findings the run exits 1: {line}")
        if outcome.reran is not None and outcome.reran[0] != 0:
            wrong.append(f"{outcome.case}: run --baseline exited {outcome.reran[0]}: {outcome.reran[1]}")
    return wrong


def partial(manifest: Manifest, cases: Iterable[Case] | None = None) -> list[Case]:
    """The careful cases that do not run every family (each says why)."""
    return [c for c in (manifest.cases if cases is None else cases) if c.careful and c.why is not None]


def default_sample(cases: Sequence[Case]) -> list[str]:
    """The flawed cases run again for real under their baseline: the first of each server.

    The first whose verdicts are settled, where a server has one: a baseline pins the verdict it
    was written with, and a race's flaw may be found `vulnerable` in one run and `weak` in the next
    (its case accepts either), as a family the case runs but expects nothing of (one its flaw may
    fool) may find it in one run and not the next.
    """
    first: dict[str, str] = {}
    for case in sorted(cases, key=lambda c: not _settled(c)):
        if not case.careful and not case.no_honest_flow and "approve" not in case.fails_controls:
            first.setdefault(case.server, case.id)
    return sorted(first.values(), key=[c.id for c in cases].index)


@functools.cache
def _families() -> dict[str, str]:
    """Each active attack's family, by id (the catalogue is read once, not once per case)."""
    from ..catalogue.loader import load_catalogue

    return {spec.id: spec.family for spec in load_catalogue().active}


def _settled(case: Case) -> bool:
    """Every family the case runs has attacks it expects, each with one verdict."""
    expected = {family for attack, family in _families().items() if attack in case.expect}
    return set(case.families or ()) <= expected and all(len(v) == 1 for v in case.expect.values())


def _family_of(attack: str, outcome: Outcome) -> str:
    return _families().get(attack, f"unknown ({attack})")


def _rate(part: int, whole: int) -> str:
    if whole == 0:
        return "n/a"
    low, high = wilson(part, whole)
    return f"{part}/{whole} = {100 * part / whole:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"


def table(tallies: Mapping[str, Tally]) -> str:
    """The Markdown table: per family and overall, with the trials behind each rate."""
    lines = [
        "| family | detection (found/expected) [95% CI] | false positives (found/judged) [95% CI] |",
        "| --- | --- | --- |",
    ]
    total = Tally()
    for family in sorted(tallies):
        tally = tallies[family]
        lines.append(
            f"| {family} | {_rate(tally.detected, tally.expected)} | "
            f"{_rate(tally.false_positives, tally.judged)} |"
        )
        total.detected += tally.detected
        total.expected += tally.expected
        total.false_positives += tally.false_positives
        total.judged += tally.judged
    lines.append(
        f"| **overall** | {_rate(total.detected, total.expected)} | "
        f"{_rate(total.false_positives, total.judged)} |"
    )
    return "\n".join(lines)


_DOCS_HEAD = """# The reference servers as a corpus

The reference servers under `targets/` are a corpus of live confirmation flaws: each
configuration in `targets/corpus/corpus.yaml` has exactly one flaw, names the attacks that must
find it and with which verdict, and each has careful twins (the careful server, in several
styles and on several channels) that must give no finding. Every case is one real audit of
a real server process, or, for a server with no command line (`py:FILE:FACTORY`), a real
server built in the audit's own process, its flaws given to its factory (`factory_args`); a
server that asks on its own terminal runs under a pseudo-terminal (`tty:`), as any audit does.

- **Detection**: an expected attack on a flawed case counts as found when its verdict is
  one the case lists (`vulnerable`, or `weak` where the flaw only weakens a defence).
- **False positives**: every judged attack (`refused`, `vulnerable` or `weak`) on a careful
  twin counts as a false positive when it found something; with `--all-families`, so does
  one on a flawed case outside the families its flaw may fool (what the detection matrix
  checks). A flawed case's other findings inside those families are its flaw's, not counted.
  `not_applicable` and `inconclusive` results are not judged and are not counted.

The intervals are 95% Wilson score intervals: with few trials even a perfect score leaves
a wide interval, which is why each rate shows the count behind it.

Regenerate this page with `mcp-confirm-audit corpus --write-docs` (from the repository's
root; `-j 2` runs two audits at once; on a loaded machine `--deadline-scale 4` gives the
harness's own deadlines four times as long, never a server's lifetimes). The command exits 1
when anything below failed: a miss, a false positive, an audit that did not run, an input
attack left inconclusive on a careful case, or a flawed case that would not exit 0 under a
baseline of its own findings.

## One manifest, read by the command and by the matrix

The manifest is the one place a flaw's expectation is written. The detection matrix
(`tests/matrix/test_detection_matrix.py`) does not keep a copy: its parameters (each flaw of
the reference server, the families it may fool, the verdict each listed attack must give, the
command line it starts with, the careful twin and the hostile modes) are the manifest's cases
for the servers it starts, read when the test module is imported. The matrix runs the same
audits as before, one per flaw, with every family, and asserts what it asserted: each flaw
caught by its attacks and no other family fooled. A flaw added to the manifest is in the
matrix; a flaw taken out of it leaves an attack that no flaw catches, which the matrix fails.

## Why the baselines are checked here, and not by more audits in CI

Issue 31 asks that a run with `--mcp-baseline` of the findings on each flawed server exits 0:
the CI gate can be held green on a server whose flaws are known and accepted. Proving that
with a second real run per flawed case would double the corpus's audits in CI. It does not
need to: a run's exit status is a pure function of its results, its controls and the baseline
(`engine/gate.failing`, which every attack and control item of a real run asks), and the
baseline is what the CLI's own writer makes of the run. So the command, which already audits
every flawed case, writes that baseline from each case's results and asks the gate what the
run would do under it, at the cost of a function call. A baseline cannot excuse what was not
judged: a case left with an inconclusive result, or whose approve control failed, is a line
here, as it would fail a real run. A server with no honest flow at all (`no_honest_flow:`, one that
never asks, or whose tool acts on its first call) fails its approve control by design: a real run
errors there whatever the baseline says, so its flawed cases are shown as not gated, with why, and
their finding is an attack that needs no honest flow (flag-bypass) or the failed control itself
(`control-unasked`). The real runs of the sample (the first settled flawed case of
each server, run again by the CLI with `run --baseline`) show that the function and the run
agree, and that the exit 0 excused findings rather than finding none. A settled case expects
attacks of every family it runs, each with one verdict: a baseline pins the verdict it was
written with, and a race, or a family the flaw may fool that the case expects nothing of, can
change its verdict between two runs (`legacy/decline-as-accept`'s MCA-DSPEND-002 did once); `tests/plugin/test_baselined_flaws.py`
shows the same inside CI for one server of each mechanism. `tests/matrix/test_corpus.py` reads the
table below and fails when a flawed case of the manifest is missing from it or did not exit 0.
"""


def careful_table(tallies: Mapping[str, Careful]) -> str:
    """The careful cases per family: judged, found, inconclusive input attacks, other inconclusive."""
    lines = [
        "| family | judged | vulnerable or weak | inconclusive input attacks | other inconclusive |",
        "| --- | --- | --- | --- | --- |",
    ]
    total = Careful()
    for family in sorted(tallies):
        t = tallies[family]
        lines.append(
            f"| {family} | {t.judged} | {t.found} | {t.input_inconclusive} | {t.other_inconclusive} |"
        )
        total.judged += t.judged
        total.found += t.found
        total.input_inconclusive += t.input_inconclusive
        total.other_inconclusive += t.other_inconclusive
    lines.append(
        f"| **overall** | {total.judged} | {total.found} | {total.input_inconclusive} | "
        f"{total.other_inconclusive} |"
    )
    return "\n".join(lines)


def partial_lines(cases: Iterable[Case]) -> str:
    def runs(case: Case) -> str:
        if case.skip is not None:
            return f"every family but {', '.join(case.skip)}"
        return ", ".join(case.families or ())

    return "\n".join(f"- `{c.id}` runs {runs(c)}: {c.why}" for c in cases) or "None."


def baseline_table(manifest: Manifest, outcomes: Iterable[Outcome]) -> str:
    """Per flawed case: its findings, what the gate makes of them under their baseline, a real run's exit."""
    flawed = {case.id: case for case in manifest.cases if not case.careful}
    lines = [
        "| flawed case | findings baselined | gated by that baseline (engine/gate.failing) | `run --baseline` |",
        "| --- | --- | --- | --- |",
    ]
    for outcome in outcomes:
        if outcome.case not in flawed:
            continue
        found = sum(verdict in FINDINGS for _, _, verdict in outcome.results)
        found += sum(_CONTROL + name in flawed[outcome.case].expect for name in outcome.failed_controls)
        expected = _expected_lines(flawed[outcome.case], outcome.baselined or ())
        why = flawed[outcome.case].no_honest_flow
        if why is not None:
            gate = f"not gated, no honest flow: {why}; a real run errors on its approve control".replace(
                "|", "\\|"
            )
        elif outcome.baselined is None:
            gate = "not run: the audit did not run"
        elif outcome.baselined and outcome.baselined == expected:
            gate = "exits 1, as this case expects (fails_controls): " + "; ".join(expected).replace(
                "|", "\\|"
            )
        elif outcome.baselined:
            gate = "exits 1: " + "; ".join(outcome.baselined).replace("|", "\\|")
        else:
            gate = "exits 0"
        real = "not in the sample"
        if outcome.reran is not None:
            code, last = outcome.reran
            real = f"exit {code}: " + last.replace("|", "\\|")
        lines.append(f"| `{outcome.case}` | {found} | {gate} | {real} |")
    return "\n".join(lines)


def docs_page(
    tallies: Mapping[str, Tally],
    cases: int,
    of: int,
    wrong: Sequence[str],
    *,
    all_families: bool = False,
    scale: float = 1.0,
    careful: Mapping[str, Careful] | None = None,
    partial_cases: Sequence[Case] = (),
    baselines: str = "",
    elapsed: float = 0.0,
    jobs: int = 1,
) -> str:
    scope = f"All {of} cases." if cases == of else f"{cases} of the {of} cases (a subset chosen with --only)."
    scope += (
        " Flawed cases ran every family (--all-families)."
        if all_families
        else " Flawed cases ran the families their flaw may fool; false positives are from the careful twins."
    )
    scope += f" The harness's deadlines were scaled by {scale:g} (--deadline-scale)." if scale != 1.0 else ""
    scope += f" It took {elapsed / 60:.1f} min with {jobs} audit(s) at once (-j)." if elapsed else ""
    misses = "\n".join(f"- {line}" for line in wrong) or "None."
    page = f"{_DOCS_HEAD}\n## The last run\n\n{scope}\n\n{table(tallies)}\n\nWhat failed: {misses}\n"
    page += (
        f"\n## The careful cases\n\n{_CAREFUL_HEAD}\n\n{careful_table(careful or {})}\n\n"
        f"The careful cases that do not run every family, and why:\n\n{partial_lines(partial_cases)}\n"
    )
    page += f"\n## Each flawed case under a baseline of its own findings\n\n{_BASELINE_HEAD}\n\n{baselines}\n"
    return page


_CAREFUL_HEAD = """A careful case runs every family unless it says why not (`families:`, what it runs,
or `skip:`, what it does not: a finding its mechanism has by design, which a flawed case expects). Every judged attack on one must be
`refused` (a finding is a false positive, above), and no input attack (an attack whose hostile
part is an input value: a path, a name, a token, an id, text the question shows, run beside its benign twin) may end
`inconclusive`: either fails the run. Other inconclusive results are counted, not failed."""

_BASELINE_HEAD = """Each flawed case's findings are written as a baseline by the CLI's own writer (what
`mcp-confirm-audit baseline` writes from its audit.json), read back by the plugin's loader, and
the case's results are put to `engine/gate.failing`, the function every item of a real
`--mcp-baseline` run asks: "exits 0" is what such a run's exit status is. For a sample (the first
settled flawed case of each server, or `--rerun GLOB`) the CLI is run again for real, `run --baseline`,
on the same case with the same families, seed and deadlines, and its exit status is shown.
A case whose flaw fails the approve control (`fails_controls: [approve]`: a gate that acts when
nobody answers is open, and every attack but the one that finds that is left inconclusive) exits 1
under any baseline: its row says so, as the case expects, and it is never in the sample."""


def add_parser(sub: Any) -> None:
    corpus = sub.add_parser(
        "corpus",
        help="audit every reference server of targets/corpus/corpus.yaml; print detection and false-positive rates",
    )
    corpus.add_argument(
        "--manifest", default=str(DEFAULT_MANIFEST), help="default: targets/corpus/corpus.yaml"
    )
    corpus.add_argument("--only", action="append", default=[], metavar="GLOB", help="cases whose id matches")
    corpus.add_argument("-j", "--jobs", type=int, default=1, help="audits at once (default 1)")
    corpus.add_argument(
        "--all-families",
        action="store_true",
        help="flawed cases run every family: a finding outside the flaw's families is a false positive",
    )
    corpus.add_argument(
        "--deadline-scale",
        type=float,
        default=1.0,
        metavar="X",
        help="multiply the harness's deadlines (start, round trip, answer) on a loaded machine (default 1)",
    )
    corpus.add_argument("--write-docs", action="store_true", help=f"write the table to {DOCS_PAGE}")
    corpus.add_argument(
        "--rerun",
        action="append",
        default=None,
        metavar="GLOB",
        help="flawed cases run again for real with run --baseline (default: the first of each server)",
    )
    corpus.add_argument("--no-rerun", action="store_true", help="run no flawed case again for real")


def select(manifest: Manifest, only: Sequence[str]) -> list[Case]:
    return [c for c in manifest.cases if not only or any(fnmatch.fnmatchcase(c.id, g) for g in only)]


def plain_logging() -> None:
    """A plain handler on the root logger of each worker, before any case runs.

    An in-process target's SDK server calls `logging.basicConfig` with a rich handler at INFO, which
    does nothing once the root has a handler of its own: without this, every refusal such a target
    logged was drawn with rich on the console ("Tool 'apply_change' failed", with its traceback),
    and the drawing cost CPU the cases share (as `bench` found for an in-process audit).
    """
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.StreamHandler())


def main(args: argparse.Namespace) -> int:
    path = Path(args.manifest)
    try:
        manifest = load_manifest(path)
    except ValueError as exc:
        print(f"mcp-confirm-audit corpus: {exc}", file=sys.stderr)
        return USAGE
    cases = select(manifest, args.only)
    if not cases or args.jobs < 1 or not args.deadline_scale > 0:
        why = (
            "--jobs must be at least 1"
            if args.jobs < 1
            else f"--deadline-scale must be a positive number, such as 1 or 2.5, not {args.deadline_scale}"
            if not args.deadline_scale > 0
            else f"no case of {path} matches --only {args.only}"
        )
        print(f"mcp-confirm-audit corpus: {why}", file=sys.stderr)
        return USAGE
    targets = (path.resolve().parent / manifest.targets).resolve()
    sample = set() if args.no_rerun else set(default_sample(cases))
    if args.rerun and not args.no_rerun:
        sample = {c.id for c in select(manifest, args.rerun) if not c.careful}
    outcomes: list[Outcome] = []
    started = time.monotonic()
    with ProcessPoolExecutor(max_workers=args.jobs, initializer=plain_logging) as pool:
        futures = [
            pool.submit(
                run_case,
                manifest,
                case,
                targets,
                all_families=args.all_families,
                scale=args.deadline_scale,
                rerun=case.id in sample,
            )
            for case in cases
        ]
        for case, future in zip(cases, futures, strict=True):
            outcome = future.result()
            outcomes.append(outcome)
            print(f"{case.id}: {len(outcome.results)} results", file=sys.stderr, flush=True)
    elapsed = time.monotonic() - started
    tallies, wrong = score(manifest, outcomes)
    careful, inconclusive = careful_score(manifest, outcomes)
    wrong += inconclusive + baseline_wrong(manifest, outcomes)
    print(table(tallies))
    print(f"\nThe careful cases:\n\n{careful_table(careful)}")
    print(f"\nCareful cases that do not run every family:\n{partial_lines(partial(manifest, cases))}")
    flawed = [o for o in outcomes if o.baselined is not None]
    green = sum(not o.baselined for o in flawed)
    by_id = {case.id: case for case in cases}
    held = sum(
        bool(lines) and lines == _expected_lines(by_id[o.case], lines)
        for o in flawed
        if (lines := o.baselined)
    )
    reran = [o.reran for o in outcomes if o.reran is not None]
    print(
        f"\nUnder a baseline of its own findings: {green} of {len(flawed)} flawed cases exit 0"
        f"{f' ({held} exit 1, as they expect: fails_controls)' if held else ''}; "
        f"run --baseline for real: {sum(r[0] == 0 for r in reran)} of {len(reran)} exited 0."
    )
    print(f"\n{len(cases)} cases of {len(manifest.cases)}, in {elapsed / 60:.1f} min with -j {args.jobs}.")
    for line in wrong:
        print(line)
    if args.write_docs:
        DOCS_PAGE.parent.mkdir(parents=True, exist_ok=True)
        page = docs_page(
            tallies,
            len(cases),
            len(manifest.cases),
            wrong,
            all_families=args.all_families,
            scale=args.deadline_scale,
            careful=careful,
            partial_cases=partial(manifest, cases),
            baselines=baseline_table(manifest, outcomes),
            elapsed=elapsed,
            jobs=args.jobs,
        )
        DOCS_PAGE.write_text(page, encoding="utf-8")
        print(f"wrote {DOCS_PAGE}")
    return 1 if wrong else 0
