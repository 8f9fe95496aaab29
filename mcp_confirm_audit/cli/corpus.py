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
import math
import os
import shlex
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

USAGE = 4
DEFAULT_MANIFEST = Path("targets") / "corpus" / "corpus.yaml"
DOCS_PAGE = Path("docs") / "explanation" / "corpus.md"
FINDINGS = frozenset({"vulnerable", "weak"})
JUDGED = frozenset({"refused", "vulnerable", "weak"})
_Z95 = 1.959963984540054
# A Python target over stdio forks from one process that imported the SDK (target/zygote.py).
_SDK_ZYGOTE = ("mcp.server.mcpserver",)

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
    expect: dict[str, list[str]] = Field(default_factory=dict)
    # Profile keys of this case alone, over its server's `settings` (an in-process server's flaws go in
    # its `factory_args`, as flags go on a command).
    settings: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _one_kind(self) -> Case:
        if self.careful == bool(self.expect):
            raise ValueError(
                f"case {self.id}: a case is either careful: true or has expect:, not both or neither"
            )
        for attack, verdicts in self.expect.items():
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


def run_case(
    manifest: Manifest, case: Case, targets: Path, *, all_families: bool = False, scale: float = 1.0
) -> Outcome:
    """One case's audit, in this process (the target is a real process of its own).

    A careful case runs its `families` (all by default); a flawed case runs the families its flaw
    may fool, or every family with `all_families`.
    """
    from ..catalogue.generation import CI_SEED, Generation
    from ..engine.session import run_audit
    from ..errors import AuditError

    try:
        profile = profile_of(manifest, case, targets, scale=scale)
        runs_all = case.families is None or (all_families and not case.careful)
        families = None if runs_all or case.families is None else frozenset(case.families)
        run = run_audit(
            profile,
            select=lambda spec: families is None or spec.family in families,
            generation=Generation(examples=10, seed=CI_SEED),
        )
    except (AuditError, OSError, RuntimeError) as exc:
        # A target that did not start (or a profile it cannot take) is this case's error, never the run's.
        return Outcome(case.id, (), error=f"{type(exc).__name__}: {exc}")
    results = tuple((r.id, r.family, r.verdict.value) for r in run.results)
    # The honest approve flow gates every attack; a flaw may break another control (a decline that acts).
    failed = tuple(c.name for c in run.controls if c.name == "approve" and not c.passed)
    return Outcome(case.id, results, failed)


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
        for control in outcome.failed_controls:
            wrong.append(f"{case.id}: control {control} failed, so its attacks are inconclusive")
        got = {attack: (family, verdict) for attack, family, verdict in outcome.results}
        for attack, wanted in case.expect.items():
            family, verdict = got.get(attack, (_family_of(attack, outcome), "missing"))
            tally = tallies[family]
            tally.expected += 1
            if verdict in wanted:
                tally.detected += 1
            else:
                wrong.append(f"{case.id}: {attack} missed ({verdict}, wanted {' or '.join(wanted)})")
        fooled = frozenset(case.families or ()) if not case.careful else frozenset()
        for attack, (family, verdict) in got.items():
            if attack in case.expect or verdict not in JUDGED or family in fooled:
                continue
            tally = tallies[family]
            tally.judged += 1
            if verdict in FINDINGS:
                tally.false_positives += 1
                wrong.append(f"{case.id}: {attack} is a false positive ({verdict})")
    return dict(tallies), wrong


def _family_of(attack: str, outcome: Outcome) -> str:
    from ..catalogue.loader import load_catalogue

    found = [spec.family for spec in load_catalogue().active if spec.id == attack]
    return found[0] if found else f"unknown ({attack})"


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
a real server process.

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
harness's own deadlines four times as long, never a server's lifetimes).
"""


def docs_page(
    tallies: Mapping[str, Tally],
    cases: int,
    of: int,
    wrong: Sequence[str],
    *,
    all_families: bool = False,
    scale: float = 1.0,
) -> str:
    scope = f"All {of} cases." if cases == of else f"{cases} of the {of} cases (a subset chosen with --only)."
    scope += (
        " Flawed cases ran every family (--all-families)."
        if all_families
        else " Flawed cases ran the families their flaw may fool; false positives are from the careful twins."
    )
    scope += f" The harness's deadlines were scaled by {scale:g} (--deadline-scale)." if scale != 1.0 else ""
    misses = "\n".join(f"- {line}" for line in wrong) or "None."
    return f"{_DOCS_HEAD}\n## The last run\n\n{scope}\n\n{table(tallies)}\n\nMisses and false positives: {misses}\n"


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


def select(manifest: Manifest, only: Sequence[str]) -> list[Case]:
    return [c for c in manifest.cases if not only or any(fnmatch.fnmatchcase(c.id, g) for g in only)]


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
    outcomes: list[Outcome] = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [
            pool.submit(
                run_case, manifest, case, targets, all_families=args.all_families, scale=args.deadline_scale
            )
            for case in cases
        ]
        for case, future in zip(cases, futures, strict=True):
            outcome = future.result()
            outcomes.append(outcome)
            print(f"{case.id}: {len(outcome.results)} results", file=sys.stderr, flush=True)
    tallies, wrong = score(manifest, outcomes)
    print(table(tallies))
    print(f"\n{len(cases)} cases of {len(manifest.cases)}.")
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
        )
        DOCS_PAGE.write_text(page, encoding="utf-8")
        print(f"wrote {DOCS_PAGE}")
    return 1 if wrong else 0
