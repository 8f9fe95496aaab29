"""Controls: prove the honest flow works before attacking, and learn how its effect shows.

approve -> the effect happens. This also learns how the tool names its
subject (a root-relative path, an absolute one, or no file at all), which
read-only tools show the effect (zero configuration), and the target's
bookkeeping: whatever changes with no call, on a first round that only asks,
or during a decline or cancel that did not act. decline, cancel and an
accepted "no" -> no effect. If approve cannot be completed, no attack on the
tool can be judged.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any

from mcp import types

from .. import confirmations
from ..channels.human import CHANNELS_PAGE, HumanFailed
from ..channels.url_flow import Pages, answer_content
from ..confirmations import Mechanism, answers, detect, elicitation, honest, replies
from ..confirmations.flag import Flag
from ..models import (
    UNASKED,
    ControlResult,
    Exchange,
    Outcome,
    Phase,
    Question,
    Response,
    Said,
    Signature,
    Signatures,
    TreeSnapshot,
)
from ..oracle.counting import count_items
from ..oracle.effects import (
    ProbeSpec,
    Reworded,
    disk_places,
    generalised,
    is_ignored,
    probe_changes,
    probe_of,
    probe_places,
    reworded,
    where_of,
)
from ..oracle.kinds.file_rows import read_file
from ..oracle.sandbox import Case, Sandbox, diff, identity_of
from ..target.arguments import another
from ..target.discovery import ToolPlan
from ..target.driver import Connection, ToolInfo, got_no_answer
from . import pace
from .action import Instance, SetupFailed, prepare, render
from .action import not_again as setup_not_again
from .observation import Observer
from .search import Searched
from .verdict import describe

# The approve control's words for a first call that acted with nobody asked (init's draft reads them).
ACTED_UNASKED = "the tool acted without asking for confirmation"

# A fresh target process and root, for a target whose world carries over (`isolation: process`).
FreshWorld = Callable[[], Awaitable[tuple[Connection, Sandbox]]]


@dataclass(frozen=True, slots=True)
class ControlOutcome:
    style: str | None
    results: tuple[ControlResult, ...]
    evidence: tuple[str, ...]
    # The action's effect probes (declared, or the candidates whose result moved).
    probes: tuple[ProbeSpec, ...] = ()
    # Patterns of what changes without the action: excluded from every effect.
    bookkeeping: tuple[str, ...] = ()
    bookkeeping_notes: tuple[str, ...] = field(default=())
    # Zero configuration only: the tool neither asked, nor acted, nor refused
    # the harness's arguments; it is no gate, and nothing in it can be judged.
    inert: bool = False
    # How the tool confirms, as the controls found it (None: MRTR, as planned).
    mechanism: Mechanism | None = None
    # Why the controls chose `isolation: process` (the world carried over from one control to the next).
    isolation: str | None = None
    # Round one failed for want of a back channel: the tool asks with elicitation/create
    # (`ctx.elicit`), which a 2026-07-28 connection cannot carry.
    back_channel: bool = False
    # How this target refuses on its gate and how it fails otherwise, from its own controls.
    signatures: Signatures = field(default_factory=Signatures)
    # Where and how the honest approval's effect showed (`removed case/victim.txt`,
    # `added tool:list_payments.payments[*]`): what another tool is compared with (ungated).
    places: tuple[str, ...] = ()
    # Of `places`, each one-line text's change word by word: what another tool's change there is told
    # apart by (ungated: a note added beside the order the gated action cancels).
    reworded: Mapping[str, Reworded] = field(default_factory=dict)
    # How many items that one honest effect changed (`oracle.counting.count_items`): the unit a race
    # on an action that names no file is counted in (one apply rewriting six lines is one effect).
    items_per_effect: int = 1
    # Zero configuration's honest-flow search, when the first approve control failed (engine.search).
    search: Searched | None = None
    # The approve control's first call was refused, not asked: the arguments may be what is wrong.
    refused_arguments: bool = False
    # The approve control failed only because these changed on a call that did not ask (no finding):
    # what the session checks against the bookkeeping the other tools' controls learned.
    acted_on: tuple[str, ...] = ()
    # The person's pace the controls learned (engine/pace): the target refused a yes sent at once.
    pace: float | None = None
    # The approve control failed, and the target had refused its yes as sent too soon: it asked here.
    too_soon: bool = False
    # What the tool changed unasked beyond the sandbox's files (a permission mode a read-only tool
    # reports): the target's own state, which every later call on that process would inherit.
    changed_the_target: tuple[str, ...] = ()

    @property
    def approve_ok(self) -> bool:
        return self.style is not None


@dataclass
class _Look:
    """What the sandbox and the probes show at one moment."""

    tree: TreeSnapshot
    probes: dict[str, Any]


class _Runner:
    def __init__(
        self,
        plan: ToolPlan,
        conn: Connection,
        sandbox: Sandbox,
        observer: Observer,
        answer: Mapping[str, Any] | None,
        negative: Mapping[str, Any] | None,
        values: Mapping[str, Any],
        fresh_world: FreshWorld | None = None,
        isolated: bool = False,
        pages: Pages | None = None,
    ) -> None:
        self.plan, self.conn, self.sandbox, self.observer = plan, conn, sandbox, observer
        # `fresh_world` is how to get one; `isolated`: every control gets one (`isolation: process`).
        self.fresh_world, self.isolated = fresh_world, isolated
        # Why the controls chose `isolation: process` themselves (the world carried over), if they did.
        self.isolation: str | None = None
        self.channel: honest.RecordingChannel | None = None
        # The flow the controls drive, once known (a profile's or one they detected): forgets at `fresh`.
        self.flow: confirmations.AgentFlow | None = None
        self.answer, self.negative, self.values = answer, negative, values
        self.evidence: list[str] = []
        self.bookkeeping: list[str] = list(plan.ignore)
        self.notes: dict[str, str] = dict(getattr(plan, "bookkeeping_notes", ()))
        # The generalised names of the action's own effect: never bookkeeping.
        self.effect: set[str] = set()
        # The same effect as places, with how it changed (oracle.effects.disk_places, probe_places).
        self.places: set[str] = set()
        # Of those places, each one-line text's change word by word (oracle.effects.reworded).
        self.reworded: dict[str, Reworded] = {}
        # How many items the honest approval's effect changed, counted as a race counts them.
        self.items_per_effect = 1
        # The files in the root the honest approval created (an outbox its send began): read by a probe.
        self.created: set[str] = set()
        self.first: list[Response] = []  # round one's answers, for detecting another mechanism
        self.first_sent: list[Mapping[str, Any]] = []  # and the arguments each answered
        # Structured files the target kept in its root before the first call, read by rows meanwhile.
        self.kept: tuple[ProbeSpec, ...] = ()
        # The tool acted on the first call, asking nobody: a finding, not only a failed control.
        self.unasked: str | None = None
        # What alone made the first call count as acting unasked, when it was no finding (files only).
        self.acted_on: tuple[str, ...] = ()
        # Of what the first call changed unasked, what the probes saw (not a file of the sandbox).
        self.changed_the_target: tuple[str, ...] = ()
        # The path styles whose yes the target refused as sent too soon, and its words (engine/pace).
        self.hurried: list[str] = []
        self.hurried_said = ""
        # The pace learned from the ladder (engine/pace), 0: the profile's.
        self.pace = 0.0
        # The report's line for it, when the ladder found one.
        self.learned_pace: str | None = None
        # URL-mode questions: an honest accept is the person's consent, and they complete the page.
        self.pages = pages
        # An MRTR question approved elsewhere: the person takes the profile's steps before the retry.
        honest.elsewhere(
            getattr(plan, "mechanism", None),
            pages,
            lambda: honest.person_where(
                conn,
                sandbox.root,
                observer.sink.requests if observer.sink is not None else None,
                conn.call_timeout,
            ),
        )
        # The replies of controls the gate refused (a decline, a wrong state) and of a subject that
        # does not exist: how this target words "refused by the gate" and "failed otherwise".
        self.gate: list[Signature] = []
        self.other: list[Signature] = []
        # A refusal control that could not be run (it neither asked nor acted): why.
        self.unlearned = ""
        # A refusal control whose call moved what the action moves, so nothing was learned from it: why.
        self.untaught: list[str] = []

    def refusals(self) -> tuple[Signatures, ControlResult | None]:
        learned = Signatures(tuple(self.gate), tuple(self.other), self.unlearned)
        if not learned.learned() and not self.untaught:
            return learned, None
        detail = "; ".join([*learned.describe(), *self.untaught])
        return learned, ControlResult(self.plan.name, "refusals", True, True, detail)

    def gate_said(self, control: str, done: Response) -> None:
        """Learn how the gate refused a control, unless the SDK refused its arguments: that is never the gate.

        Nor is a success with nothing to do (a duplicate, `"moved": 0`): the world, not the gate,
        nor a rate limit: the server's throttle.
        """
        if (
            not replies.invalid_arguments(done)
            and replies.nothing_done(done) is None
            and replies.rate_limited(done) is None
        ):
            self.gate.append(replies.signature(control, done))

    async def look(self) -> _Look:
        return _Look(self.sandbox.snapshot(), await self.observer.observe([self.conn]))

    def changed(self, before: _Look, after: _Look, *, added: bool = False) -> list[str]:
        """Everything that changed between two looks and is not yet known as bookkeeping.

        `added`: new files count too. Not for effects (a server may write a
        backup beside its target), but a file a call that did not act created
        is bookkeeping when it grows later.
        """
        disk = diff(before.tree, after.tree)
        paths = [*disk.removed, *disk.changed, *(disk.added if added else ())]
        counted, _ = probe_changes(before.probes, after.probes, self.bookkeeping)
        return [p for p in paths if not is_ignored(p, self.bookkeeping)] + counted

    def placed(self, before: _Look, after: _Look, case: Case) -> list[str]:
        """What changed between two looks as places (`how where`), bookkeeping left out."""
        disk = diff(before.tree, after.tree)
        removed = [p for p in disk.removed if not is_ignored(p, self.bookkeeping)]
        changed = [p for p in disk.changed if not is_ignored(p, self.bookkeeping)]
        own = case.rel(case.directory)
        return [
            *disk_places(removed, changed, own),
            *probe_places(before.probes, after.probes, self.bookkeeping),
        ]

    def adopt(self, places: Iterable[str], reworded: Mapping[str, Reworded]) -> None:
        """Where the honest approval's effect showed, and how each one-line text of it changed."""
        self.places.update(places)
        for place, (gone, new) in reworded.items():
            had_gone, had_new = self.reworded.get(place, (frozenset(), frozenset()))
            self.reworded[place] = (had_gone | gone, had_new | new)

    def worded(self, before: _Look, after: _Look) -> dict[str, Reworded]:
        """How each one-line text a probe reads changed between two looks, word by word, bookkeeping left out."""
        return reworded(before.probes, after.probes, self.bookkeeping)

    def made(self, before: _Look, after: _Look) -> list[str]:
        """Files created between two looks directly in the root, less the bookkeeping: an outbox, say.

        Only a file in the root itself, named as no call mints a name (no date, no id): one an
        attack's probe can read again by that name. Never inside a case's own directory (a backup
        written beside the file an action names is not its effect).
        """
        found = []
        for path in diff(before.tree, after.tree).added:
            name = path.removeprefix("root/")
            if name == path or "/" in name or _MINTED.search(name) or is_ignored(path, self.bookkeeping):
                continue
            if (self.sandbox.root / name).is_file():
                found.append(path)
        return found

    def made_places(self, paths: Sequence[str]) -> list[str]:
        """Created files as places, by rows: what an attack's probe of each sees when it gains rows."""
        names = {f"file:{p.removeprefix('root/')}": p.removeprefix("root/") for p in paths}
        now = {probe: read_file(self.sandbox.root, PurePosixPath(name)) for probe, name in names.items()}
        empty = {
            probe: type(rows)() if isinstance(rows, list | dict | str) else None
            for probe, rows in now.items()
        }
        return probe_places(empty, now, self.bookkeeping)

    def subject_moved(
        self, before: _Look, after: _Look, seen: Sequence[str], arguments: Mapping[str, Any]
    ) -> list[str]:
        """What moved between two looks that is the action's own subject, whatever a flow has learned.

        A file the call's own arguments name (`touch made.txt` made it), an entry gone from the
        sandbox (as the approve control judges a call that did not ask: `_moved_away`). Bookkeeping
        is left out, as in `seen`.
        """
        named = [p for p in seen if _in_the_sandbox(p) and _named_by(arguments, PurePosixPath(p).name)]
        return list(dict.fromkeys([*named, *_moved_away(self, before, after)]))

    def learn(self, paths: list[str], why: str, case: Case | None) -> None:
        """Changes seen where the action did not happen: the target's bookkeeping."""
        own = f"{case.rel(case.directory)}/" if case is not None else None
        for path in paths:
            name = generalised(path)
            if own is not None and path.startswith(own):
                continue  # the case's own files are what an attack acts on, never bookkeeping
            if name in self.effect or name in self.bookkeeping:
                continue
            self.bookkeeping.append(name)
            self.notes.setdefault(name, why)

    def value(self, case: Case, style: str) -> str:
        if style == "absolute":
            return str(case.victim)
        return case.victim.relative_to(self.sandbox.root).as_posix()

    def arguments(self, subject: str | Instance) -> dict[str, Any]:
        if isinstance(subject, Instance):
            return dict(subject.arguments)
        assert self.plan.path_arg is not None
        # {path} the case file; {root} and {sink} what the harness gives.
        rendered = render(
            self.plan.arguments(self.values), {**self.values, "path": self.plan.placed(subject)}
        )
        # A path argument the template spells out ("{root}/{path}") is the template's, as in an attack.
        return {**rendered, self.plan.path_arg: rendered.get(self.plan.path_arg, subject)}

    async def call(self, label: str, subject: str | Instance, **kw: Any) -> Response:
        if self.pages is not None:
            seen = len(self.pages.lines)
            await self.pages.before_answer(kw.get("state"), kw.get("responses"))
            self.evidence.extend(self.pages.lines[seen:])
        exchange: Exchange = await self.conn.call(
            Phase.SETUP, label, self.plan.name, self.arguments(subject), **kw
        )
        self.evidence.append(describe(exchange))
        if self.pages is not None:
            self.pages.remember(exchange.response)
        return exchange.response

    async def subject(self, case: Case, style: str, label: str) -> str | Instance:
        if style != "value":
            return self.value(case, style)

        async def call(step: str, tool: str, args: Mapping[str, Any]) -> Response:
            exchange = await self.conn.call(Phase.SETUP, f"{label}: {step}", tool, args)
            self.evidence.append(describe(exchange))
            return exchange.response

        template = self.plan.arguments(self.values)
        # A setup call may name the control's case file ({path}): a preview of deleting it, say.
        values = {**self.values, "path": self.value(case, "relative")}
        mark = Sandbox.number(case.name)
        return await prepare(call, self.plan.name, self.plan.setup, template, values, mark=mark)

    async def renew(self) -> None:
        """`isolation: process`: the next control gets a fresh target and root, as every attack does."""
        if self.isolated:
            await self.fresh()

    async def fresh(self) -> bool:
        """A fresh target process and root for what follows; False when none can be had (a URL)."""
        if self.fresh_world is None:
            return False
        self.conn, self.sandbox = await self.fresh_world()
        if self.flow is not None:
            # A detected flow is the session's only once the controls return: its previews were the old world's.
            self.flow.forget()
        self.observer = Observer(
            self.observer.specs,
            self.sandbox.root,
            self.observer.sink,
            self.observer.clock,
            self.observer.serving,
        )
        if self.channel is not None:
            self.channel.conn, self.channel.root = self.conn, self.sandbox.root
        if self.pace:
            self.conn.answer_after = self.pace
        return True

    def paced(self, seconds: float) -> None:
        """Every answer of the controls from now on waits `seconds` after its question (engine/pace)."""
        self.pace = seconds
        self.conn.answer_after = seconds

    def too_soon(self, style: str, done: Response) -> str:
        """Note a yes the target refused as sent too soon; the words that say so, or ""."""
        said = pace.said_too_soon(done.text)
        if said is None:
            return ""
        self.hurried.append(style)
        self.hurried_said = self.hurried_said or said
        return said

    def not_again(self, failed: SetupFailed) -> str:
        """Why a use could not be set up though the same setup worked for the approve control.

        The profile's args are not the suspect then, and "fix its args" is wrong advice: the setup
        ran once and would not run again, in a fresh world too where one can be had (a seed a
        supplier outside the target sells once, a name a remote service keeps taken).
        """
        if self.fresh_world is not None:
            where = "again in a fresh target process and root"
            renew = "or let each fresh world renew what it uses up (kept under the target's root)"
        else:
            where = "again, and no fresh target process can be had for this target"
            renew = "or renew what it uses up before each use"
        return setup_not_again(failed, where, renew)

    def carried_over(self, control: str, failure: str) -> None:
        """A control that failed in the world the last one left passed in a fresh one: isolate."""
        if self.isolation is None:
            self.isolation = (
                f"isolation: process was chosen: the {control} control failed in the world the previous "
                f"control left ({replies.clipped(failure, 200)}) and passed in a fresh target process; every attack gets a "
                "fresh target process and root"
            )
            self.isolated = True

    def names(self, subject: str | Instance) -> tuple[str, str]:
        if isinstance(subject, Instance):
            return subject.label, subject.label
        return subject.rsplit("/", 1)[-1], subject

    def yes(self, q: Question, subject: str | Instance) -> dict[str, Any] | None:
        name, value = self.names(subject)
        return answer_content(q.url, answers.affirmative(q.schema, name, value, self.answer))


async def run_controls(
    plan: ToolPlan,
    conn: Connection,
    sandbox: Sandbox,
    answer: Mapping[str, Any] | None = None,
    negative: Mapping[str, Any] | None = None,
    *,
    observer: Observer | None = None,
    values: Mapping[str, Any] | None = None,
    fresh_world: FreshWorld | None = None,
    isolated: bool = False,
    tools: Sequence[ToolInfo] = (),
    call_timeout: float = 15.0,
    pages: Pages | None = None,
) -> ControlOutcome:
    """The controls of one tool; `fresh_world` makes a new target process and root (`isolated`: always)."""
    observer = observer or Observer((*plan.probes, *plan.candidate_probes), sandbox.root)
    kept = _kept_in_the_root(plan, sandbox, observer)
    observer = observer.with_specs((*observer.specs, *kept)) if kept else observer
    run = _Runner(plan, conn, sandbox, observer, answer, negative, values or {}, fresh_world, isolated, pages)
    run.kept = kept
    if (flow := confirmations.as_flow(plan.mechanism)) is not None:
        return await _other_mechanism(run, flow, call_timeout)
    style, approve, inert = await _approve_at_a_persons_pace(run)
    if (
        style is None
        and plan.mechanism is None
        and (tool := next((t for t in tools if t.name == plan.name), None))
    ):
        # A switch named in the reply to a call that acted unasked is not what confirms it ("done; pass
        # notify=false to stop the emails"): only a reply to a call that did nothing may name the way in.
        acted = run.unasked is not None or bool(run.acted_on)
        found = next(
            (
                m
                for r, sent in zip(run.first, run.first_sent, strict=True)
                if (m := detect.from_response(r, tool, tools, sent)) is not None
                and not (acted and isinstance(m, Flag) and m.source == detect.NAMED_SWITCH)
            ),
            None,
        )
        if (flow := confirmations.as_flow(found)) is not None:
            return await _other_mechanism(run, flow, call_timeout)
        advice = next(
            (
                w
                for r, sent in zip(run.first, run.first_sent, strict=True)
                if (w := detect.switch_advice(r, tool, sent)) is not None
            ),
            None,
        )
        if advice is not None and not approve.passed and not acted:
            # It did not ask, yet its reply names a switch of its own with another value: maybe the way in.
            approve = replace(approve, detail=f"{approve.detail}; {advice}")
        if fix := next((w for r in run.first if (w := detect.signed_challenge(r, tool)) is not None), None):
            inert = False
            approve = ControlResult(plan.name, "approve", False, True, fix)
        elif why := next((w for r in run.first if (w := detect.asking_payload(r)) is not None), None):
            # It asked, in a payload of its own: a gate, though the harness cannot answer it unaided.
            inert = False
            approve = ControlResult(
                plan.name,
                "approve",
                False,
                True,
                f"the tool asked in its result ({why}) but named no token, id or flag to answer with: "
                f"say how it confirms with confirmation: in a profile ({replies.clipped(approve.detail, 300)})",
            )
    results = [approve]
    if run.unasked is not None:
        results.append(ControlResult(plan.name, UNASKED, False, True, run.unasked))
    probes: tuple[ProbeSpec, ...] = ()
    if style is not None:
        for name in ("decline", "cancel", "negative"):
            await run.renew()
            results.append(await _refusal_in_a_fresh_world_if_need_be(run, style, name))
        await run.renew()
        await _wrong_state(run, style)
        await run.renew()
        await _no_such_subject(run, style)
        # After it: a place every call moves leaves the effect there, and is then read by no probe.
        probes = _effect_probes(run)
    signatures, learned = run.refusals()
    if learned is not None:
        results.append(learned)
    notes = tuple(f"{name}: {why}" for name, why in run.notes.items())
    if notes:
        results.append(
            ControlResult(plan.name, "bookkeeping", True, True, "ignored as bookkeeping: " + "; ".join(notes))
        )
    if run.isolation is not None:
        results.append(ControlResult(plan.name, "isolation", True, True, run.isolation))
    if run.observer.serving.one_at_a_time:
        results.append(ControlResult(plan.name, "one-at-a-time", True, True, run.observer.serving.learned))
    if run.learned_pace is not None:
        results.append(ControlResult(plan.name, "pace", True, True, run.learned_pace))
    back_channel = style is None and any(elicitation.needs_back_channel(r) for r in run.first)
    refused_arguments = style is None and any(replies.said(r) is Said.REFUSED for r in run.first)
    return ControlOutcome(
        style,
        tuple(results),
        tuple(run.evidence),
        probes,
        tuple(run.bookkeeping),
        notes,
        inert,
        isolation=run.isolation,
        back_channel=back_channel,
        signatures=signatures,
        places=tuple(sorted(run.places)),
        reworded=dict(run.reworded),
        items_per_effect=run.items_per_effect,
        refused_arguments=refused_arguments,
        acted_on=run.acted_on,
        changed_the_target=run.changed_the_target,
        pace=run.pace if run.learned_pace is not None else None,
        too_soon=style is None and bool(run.hurried_said),
    )


def _kept_in_the_root(plan: ToolPlan, sandbox: Sandbox, observer: Observer) -> tuple[ProbeSpec, ...]:
    """The structured files the target keeps in its root before the first call, each a candidate probe.

    Read by rows from the approve control on, the honest effect is known row by row (`removed
    file:store.json.products[*]`), not only as the file rewritten: another tool that adds a row to
    the same store is then another change there, never the gated one (a JSON store in the root,
    stocktrim's fake API's, read as one rewritten file, made an ungated create "the gated harm").
    """
    named = {spec.name for spec in observer.specs}
    kept = []
    for path in sorted(sandbox.root.iterdir(), key=lambda p: p.name):
        name = f"file:{path.name}"
        structured = path.is_file() and path.name.endswith(_STRUCTURED)
        if structured and name not in named and not is_ignored(f"root/{path.name}", plan.ignore):
            kept.append(ProbeSpec("file", name, {"path": path.name}))
    return tuple(kept)


def _effect_probes(run: _Runner) -> tuple[ProbeSpec, ...]:
    """Declared probes stay; of the candidates, those whose result the honest approval moved."""
    candidates = [*run.plan.candidate_probes, *run.kept]
    moved = {probe_of(name, [spec.name for spec in candidates]) for name in run.effect}
    learned = [spec for spec in candidates if spec.name in moved]
    # A structured file in the root that the action changed is read by rows and cells, so a
    # finding names the cell ("file:jobs.csv[2].status"), not only the file.
    named = {spec.name for spec in (*run.plan.probes, *learned)}
    for path in sorted(run.effect):
        inside = path.removeprefix("root/")
        if is_ignored(path, run.bookkeeping):
            continue  # a log the target keeps is never read by rows as if it were the effect
        readable = inside.endswith(_STRUCTURED) or path in run.created
        if path.startswith("root/") and readable and f"file:{inside}" not in named:
            learned.append(ProbeSpec("file", f"file:{inside}", {"path": inside}))
    return (*run.plan.probes, *learned)


_STRUCTURED = (".csv", ".json", ".jsonl", ".yaml", ".yml")
# A name a call mints (a date, an id): a file so named is made anew by every call, and an attack's
# probe could never read it again by that name.
_MINTED = re.compile(r"\d{4,}|[0-9a-f]{8,}", re.I)


def _watched(run: _Runner) -> str:
    probes = [spec.name for spec in run.observer.specs]
    return ", ".join(["the sandbox", *probes])


async def _other_mechanism(run: _Runner, flow: confirmations.AgentFlow, timeout: float) -> ControlOutcome:
    sink = run.observer.sink
    previews: list[Response] = []

    def record(exchange: Exchange) -> None:
        run.evidence.append(describe(exchange))
        if exchange.label == "preview":
            previews.append(exchange.response)

    channel = honest.RecordingChannel(
        run.conn,
        Phase.SETUP,
        record,
        run.sandbox.root,
        timeout,
        sink.requests if sink is not None else None,
    )
    run.channel, run.flow = channel, flow
    done = await honest.run(flow, _Uses(run), run.plan.path_styles, channel)
    results = list(done.results)
    run.gate.extend(done.gate)  # honest.run leaves out the SDK's refusals of arguments too
    run.untaught.extend(done.untaught)
    if done.style is not None:
        await _no_such_subject_of_flow(run, flow, channel, done.style)
    signatures, refusals = run.refusals()
    if refusals is not None:
        results.append(refusals)
    probes = _effect_probes(run) if done.style is not None else ()
    notes = tuple(f"{name}: {why}" for name, why in run.notes.items())
    if notes:
        learned = "ignored as bookkeeping: " + "; ".join(notes)
        results.append(ControlResult(run.plan.name, "bookkeeping", True, True, learned))
    if run.isolation is not None:
        results.append(ControlResult(run.plan.name, "isolation", True, True, run.isolation))
    return ControlOutcome(
        done.style,
        tuple(results),
        (*run.evidence, *channel.said),
        probes,
        tuple(run.bookkeeping),
        notes,
        mechanism=flow,
        refused_arguments=done.style is None and any(replies.said(r) is Said.REFUSED for r in previews),
        isolation=run.isolation,
        signatures=signatures,
        places=tuple(sorted(run.places)),
        reworded=dict(run.reworded),
        items_per_effect=run.items_per_effect,
    )


class _Use:
    """One use of the action in a token, pending or flag control: a case file, or setup calls made."""

    def __init__(self, run: _Runner, case: Case, style: str, subject: str | Instance, look: _Look) -> None:
        self._run, self._case, self._style = run, case, style
        self.arguments = run.arguments(subject)
        self._last = look
        self._victim = identity_of(case.victim)
        # The kinds of file this use's steps created so far (a log its preview began).
        self._made: set[str] = set()

    async def moved(self) -> honest.Moved:
        now = await self._run.look()
        effect = self._run.changed(self._last, now)
        seen = self._run.changed(self._last, now, added=True)
        places = self._run.placed(self._last, now, self._case)
        worded = tuple(self._run.worded(self._last, now).items())
        made: list[str] = []
        if self._style == "value":
            # An action that names no file may show only as a file it creates (honest.Moved.with_made).
            made = [p for p in self._run.made(self._last, now) if generalised(p) not in self._made]
            self._made.update(generalised(p) for p in made)
        before, self._last = self._last, now
        victim = self._style != "value" and identity_of(self._case.victim) != self._victim
        made_places = tuple(self._run.made_places(made))
        subject = self._run.subject_moved(before, now, seen, self.arguments)
        declared = [p for p in seen if _declared_effect(self._run, [p])]
        return honest.Moved(
            tuple(effect),
            tuple(seen),
            victim,
            tuple(places),
            tuple(made),
            made_places,
            reworded=worded,
            subject=tuple(subject),
            declared=tuple(declared),
        )

    def learn(self, moved: honest.Moved, why: str) -> None:
        self._run.learn(list(moved.seen), why, self._case)


class _Uses:
    """`honest.Uses` for one tool: a fresh case (and setup calls) per use; the effect the runner learns."""

    def __init__(self, run: _Runner) -> None:
        self._run = run

    async def new(self, style: str, label: str) -> _Use | str:
        run = self._run
        if run.isolated and run.effect:
            await run.fresh()
        made = await self._new(style, label)
        if isinstance(made, SetupFailed) and run.effect and not run.isolated and await run.fresh():
            # The honest confirmation acted already: its world may be why this use cannot be set up.
            again = await self._new(style, label)
            if not isinstance(again, SetupFailed):
                run.carried_over(label.removeprefix("control-"), made.happened)
            made = again
        if isinstance(made, SetupFailed):
            # Once the honest confirmation acted, its own setup had worked: the args are not the suspect.
            return run.not_again(made) if run.effect else str(made)
        return made

    async def _new(self, style: str, label: str) -> _Use | SetupFailed:
        run = self._run
        case = run.sandbox.new_case(label)
        idle, start = await run.look(), await run.look()
        run.learn(run.changed(idle, start, added=True), "changed while the harness only looked", case)
        try:
            subject = await run.subject(case, style, label)
        except SetupFailed as exc:
            return exc
        return _Use(run, case, style, subject, await run.look())

    async def afresh(self, control: str, failure: str) -> bool:
        run = self._run
        if run.isolated or not await run.fresh():
            return False
        run.carried_over(control, failure)
        return True

    def is_effect(self, moved: honest.Moved) -> bool:
        return any(generalised(p) in self._run.effect for p in moved.seen)

    def of_its_kind(self, moved: honest.Moved) -> bool:
        # A file the honest confirmation created is its effect (`Moved.with_made`): another made in the
        # root by a step that should not act is of that kind, whatever its name.
        return self.is_effect(moved) or (bool(moved.made) and bool(self._run.created))

    def effect(self, moved: honest.Moved) -> None:
        run = self._run
        # What the confirmation moved that its preview's look has since taught is bookkeeping (a
        # proxy's log of calls, learned after the confirmation was looked at) is no place of the effect.
        kept = [p for p in moved.effect if not is_ignored(p, run.bookkeeping)]
        places = [p for p in moved.places if not is_ignored(where_of(p), run.bookkeeping)]
        run.effect.update(generalised(p) for p in kept)
        run.created.update(p for p in moved.made if p in kept)
        run.adopt(places, dict(moved.reworded))
        run.items_per_effect = max(count_items(kept), 1)


async def _approve_at_a_persons_pace(run: _Runner) -> tuple[str | None, ControlResult, bool]:
    """The approve control; when the target refused its yes as sent too soon, again at a person's pace.

    Only when no pace is set (no `answer_after`): each pace of the ladder (engine/pace) in turn, for
    the first path style whose yes was refused so, until one passes; that pace is kept for the tool.
    """
    style, approve, inert = await _approve(run)
    if style is not None or not run.hurried or run.conn.answer_after > 0:
        return style, approve, inert
    tried: list[float] = []
    other: str | None = None
    for seconds in pace.LADDER:
        styles = run.hurried[:1]  # the pace is the target's, whatever the path's style: one is enough
        run.hurried = []
        run.paced(seconds)
        style, again, _ = await _approve(run, styles)
        if style is not None:
            run.learned_pace = pace.learned(run.plan.name, seconds, tried, run.hurried_said)
            return (
                style,
                replace(again, detail=f"{again.detail} (answered {seconds:g} s after the question)"),
                False,
            )
        tried.append(seconds)
        if not run.hurried:
            other = again.detail  # refused at this pace for another reason: no slower pace will tell
            break
    run.paced(0.0)
    return None, replace(approve, detail=approve.detail + pace.still_refused(tried, other)), inert


async def _approve(run: _Runner, styles: Sequence[str] = ()) -> tuple[str | None, ControlResult, bool]:
    tried = []
    # Every way of calling it answered normally, without asking and without an effect.
    inert = True
    name = run.plan.name
    for style in styles or run.plan.path_styles:
        case = run.sandbox.new_case(f"control-approve-{style}")
        idle = await run.look()
        start = await run.look()
        run.learn(run.changed(idle, start, added=True), "changed while the harness only looked", case)
        try:
            subject = await run.subject(case, style, "approve")
        except SetupFailed as exc:
            tried.append(f"{style}: {exc}")
            inert = False
            continue
        before_victim = identity_of(case.victim)
        before = await run.look()
        first = await run.call(f"approve ({style}): ask", subject)
        run.first.append(first)
        run.first_sent.append(run.arguments(subject))
        asked = first.outcome is Outcome.INPUT_REQUIRED and bool(first.questions)
        knew = run.observer.serving.one_at_a_time
        after_ask = await run.look()
        if asked and run.observer.serving.one_at_a_time and not knew:
            # Learned just now: the look waited its bound, so this yes would go later than any attack's
            # does. The person lets this question go, and the control asks again at the attacks' pace.
            cancel = {q.key: types.ElicitResult(action="cancel") for q in first.questions}
            await run.call(
                f"approve ({style}): cancel (the look waited)",
                subject,
                state=first.request_state,
                responses=cancel,
            )
            return await _approve(run, styles)
        round_one = run.changed(before, after_ask, added=True)
        victim_moved = style != "value" and identity_of(case.victim) != before_victim
        if not asked:
            acted = victim_moved or (style == "value" and bool(run.changed(before, after_ask)))
            if not acted and replies.said(first) is Said.REFUSED:
                # Refused, the subject untouched: a file that moved all the same (an evidence log, its
                # write-ahead file) moves on every call, approved or not. The target's bookkeeping.
                run.learn(_on_disk(before, after_ask), "moved on a call the target refused", case)
            if acted:
                run.changed_the_target = tuple(
                    probe_changes(before.probes, after_ask.probes, run.bookkeeping)[0]
                )
                where = ", ".join(round_one[:4]) or run.value(case, style)
                said = f"{ACTED_UNASKED} ({where})"
                if victim_moved or _declared_effect(run, round_one) or _moved_away(run, before, after_ask):
                    # Not a file the server only logs to: the subject itself, where the profile says,
                    # or files that went from where they were, whatever the action's kind.
                    run.unasked = said
                else:
                    run.acted_on = tuple(round_one)
                return None, ControlResult(name, "approve", False, True, said), False
            inert = inert and first.outcome is Outcome.COMPLETE
            tried.append(f"{style}: {_did_not_ask(first, run, style, round_one)}")
            continue
        inert = False
        run.learn(round_one, "changed on a first round that only asked", case)
        responses = {
            q.key: types.ElicitResult(action="accept", content=run.yes(q, subject)) for q in first.questions
        }
        done = await run.call(
            f"approve ({style}): accept", subject, state=first.request_state, responses=responses
        )
        after = await run.look()
        effect = run.changed(after_ask, after)
        # An action that names no file may show only as a file it creates (an outbox a send began);
        # one the ask round created is bookkeeping already (learned above), never among these.
        made = run.made(after_ask, after) if style == "value" else []
        if style != "value":
            if identity_of(case.victim) != before_victim:
                run.effect.update(generalised(p) for p in effect)
                run.adopt(run.placed(after_ask, after, case), run.worded(after_ask, after))
                said = f"asked, accepted, acted ({style} paths)"
                return style, ControlResult(name, "approve", True, True, said), False
            elsewhere = [p for p in effect if not p.startswith(case.rel(case.directory))]
            seen = f"; what did change: {', '.join(elsewhere[:6])}" if elsewhere else ""
            run.too_soon(style, done)
            tried.append(
                f"{style}: accepted, the file was untouched ({done.outcome}: {replies.clipped(done.text, 200)}){seen}"
                f"{_paced(run, done)}"
            )
            continue
        if (effect or made) and (said := run.too_soon(style, done)):
            # The target says it refused the yes as no person's: what moved is its record of that refusal.
            tried.append(f"accepted, but the target refused the yes (…{said}…){_paced(run, done)}")
            continue
        if effect or made:
            effect = [*effect, *made]
            run.effect.update(generalised(p) for p in effect)
            run.created.update(made)
            run.adopt(
                [*run.placed(after_ask, after, case), *run.made_places(made)], run.worded(after_ask, after)
            )
            run.items_per_effect = max(count_items(effect), 1)
            shown = ", ".join(effect[:4])
            return (
                style,
                ControlResult(name, "approve", True, True, f"asked, accepted, acted: {shown}"),
                False,
            )
        run.too_soon(style, done)
        tried.append(
            f"accepted, but no effect was seen in {_watched(run)} ({done.outcome}: {replies.clipped(done.text, 200)}); "
            "say where it shows with effect: in a profile (a read-only tool, a file, sqlite, the sink)"
            f"{_paced(run, done)}{_held_back(run)}"
        )
    return None, ControlResult(name, "approve", False, True, "; ".join(tried)), inert


def _paced(run: _Runner, done: Response) -> str:
    """A hint when the person's yes was refused and the harness answered at once (no `answer_after`)."""
    refused = done.outcome in (Outcome.TOOL_ERROR, Outcome.RPC_ERROR) or replies.refusal(done) is not None
    if run.conn.answer_after > 0 or not (refused or pace.TOO_SOON.search(done.text)):
        return ""
    return (
        "; the yes went at once, as no person answers: a target that refuses an answer faster than a "
        "person reads sets the pace with answer_after: SECONDS in the profile"
    )


def _held_back(run: _Runner) -> str:
    """A hint when the read-only tools went unasked while the question was open (`Serving`)."""
    if not run.observer.serving.one_at_a_time:
        return ""
    return (
        f"; the target {run.observer.serving.learned.split(':')[0]}, so its read-only tools were not asked "
        "while its question was open: an effect seen without asking it (a file, sqlite, the sink) can be judged"
    )


def _on_disk(before: _Look, after: _Look) -> list[str]:
    """The sandbox entries made or changed between two looks (never one gone, never a probe's value)."""
    disk = diff(before.tree, after.tree)
    return [*disk.added, *disk.changed]


def _in_the_sandbox(path: str) -> bool:
    """Whether a change's name is a sandbox entry (`root/...`), not a probe's (`tool:...`, `sink`)."""
    return path.startswith(("root/", "outside/"))


def _named_by(arguments: Mapping[str, Any], name: str) -> bool:
    """Whether a string among the call's arguments names the file `name`, as a whole word or path part."""
    if len(name) < 3:
        return False
    whole = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])")
    texts = [v for v in arguments.values() if isinstance(v, str)]
    return any(whole.search(text) for text in texts)


def _declared_effect(run: _Runner, changed: list[str]) -> bool:
    """Whether a change shows through a probe the profile declared as the action's effect."""
    declared = [spec.name for spec in run.plan.probes]
    return any(probe_of(path, declared) is not None for path in changed)


def _moved_away(run: _Runner, before: _Look, after: _Look) -> list[str]:
    """Entries of the sandbox that are gone (moved or deleted) between two looks, less the bookkeeping.

    A tool that did not ask and moved files in the sandbox acted without asking, whether its
    action names a file or not (a photo organiser's revert). A log only grows, and a file the
    server creates is no loss: neither is counted, so logging a refusal is never acting.
    """
    gone = diff(before.tree, after.tree).removed
    return [p for p in gone if not is_ignored(p, run.bookkeeping)]


# A refusal that says a person (an approver, a terminal) was looked for: the gate asks elsewhere.
_ASKS_ELSEWHERE = re.compile(r"\b(approver|approval|terminal|tty|operator)\b", re.I)
# A refusal that says the call is pending and names its id in prose (actgate: `ACTGATE_PENDING
# intent_id=64f6…`, an isError result): the call was staged, not refused, and the id is the handle.
_PENDING = re.compile(r"pending", re.I)
_ID_IN_PROSE = re.compile(r"\b([A-Za-z_]*id)(\s*[=:]\s*)[\"']?([A-Za-z0-9][A-Za-z0-9_.-]{5,})", re.I)


def _did_not_ask(first: Response, run: _Runner, style: str, written: Sequence[str] = ()) -> str:
    said = f"did not ask ({first.outcome}: {replies.clipped(first.text, 200)})"
    if got_no_answer(first):
        # Alive but silent: a gate that blocks the call until a person answers elsewhere (a CLI, a
        # page, a queue of files) looks exactly like this, and what it wrote while waiting is where.
        wrote = f"; while it waited it wrote {', '.join(written[:3])}" if written else ""
        return (
            f"{said}{wrote}; if the call waits for a person who answers elsewhere (a command, a page, a "
            "file they move), say how in the profile (confirmation: {kind: waits, waits: {human: [...], "
            "decline: [...]}}, and answer_deadline: the seconds it waits for them; see "
            f"{CHANNELS_PAGE})"
        )
    staged = _ID_IN_PROSE.search(first.text) if _PENDING.search(first.text) else None
    if first.outcome in (Outcome.TOOL_ERROR, Outcome.RPC_ERROR) and staged is not None:
        name, between, value = staged.groups()
        pattern = f"{re.escape(name)}{between}([A-Za-z0-9_.-]+)"
        return (
            f"{said}; the reply says the call is pending under {name} {value}, not that the arguments are "
            "wrong: if a person approves that id elsewhere, say how in the profile (confirmation: {kind: "
            f"pending, pending: {{id_pattern: '{pattern}', human: [...]}}}}; see {CHANNELS_PAGE})"
        )
    if first.outcome in (Outcome.TOOL_ERROR, Outcome.RPC_ERROR) and _ASKS_ELSEWHERE.search(first.text):
        return (
            f"{said}; the refusal names an approver: if a person answers elsewhere (a terminal prompt, a "
            "device, a link), say how in the profile (tty: true with confirmation: {kind: waits, waits: "
            "{human: [...]}}, or a pending or token flow with human: steps; see "
            f"{CHANNELS_PAGE})"
        )
    if (gone := replies.unreachable(first)) is not None:
        return (
            f"{said}; the target could not reach a service it depends on ({gone!r}), which says nothing "
            "of the arguments: the confined target reaches loopback only, so start a fake of that service "
            "from the target's command, or name a loopback address with its port in the command for one "
            "you start beside the run (see docs/how-to/confinement.md)"
        )
    if first.outcome in (Outcome.TOOL_ERROR, Outcome.RPC_ERROR):
        if run.plan.setup or run.plan.template is not None:
            fix = "check args: and setup: in the profile"
        elif style == "value":
            fix = "set args: in the profile, and setup: if an argument is a handle another tool mints"
        else:
            fix = "set path_arg (or args: with {path}) in the profile"
        return f"{said}; the target refused the harness's arguments: {fix}"
    return said


async def _refusal_in_a_fresh_world_if_need_be(run: _Runner, style: str, name: str) -> ControlResult:
    """A refusal control; one that cannot even begin in the world approve left runs again in a fresh one.

    "Already booked", "duplicate", a state the previous control changed: the
    approve control worked with the same calls, so the world is the suspect.
    Only a run in a fresh target process can tell, and it decides: when it
    passes there, the world carried over and every attack gets a fresh one.
    One whose setup fails there too (or where no fresh world can be had: a URL)
    never put its question: not applicable, never a finding (`ControlResult.not_begun`).
    """
    unlearned = run.unlearned
    result, unable = await _refusal(run, style, name)
    if unable is None or run.isolated or not await run.fresh():
        return result
    # Judged again in a fresh world: whether it could be run there is what counts, not the old world's.
    run.unlearned = unlearned
    again, still = await _refusal(run, style, name)
    if still is None:
        run.carried_over(name, unable)
    return again


async def _refusal(run: _Runner, style: str, name: str) -> tuple[ControlResult, str | None]:
    """The control, and why it could not begin (setup failed, the first call refused), if it could not."""
    tool = run.plan.name
    case = run.sandbox.new_case(f"control-{name}")
    try:
        subject = await run.subject(case, style, name)
    except SetupFailed as exc:
        # Never asked: no refusal to judge. A fresh world may still let it begin (the caller's retry).
        return ControlResult.not_begun(tool, name, run.not_again(exc)), exc.happened
    before_victim = identity_of(case.victim)
    before = await run.look()
    first = await run.call(f"{name}: ask", subject)
    if first.outcome is not Outcome.INPUT_REQUIRED or not first.questions:
        said = f"did not ask ({first.outcome}: {replies.clipped(first.text, 200)})"
        # Approve's same call asked: a refusal, or a call with nothing left to do ("already
        # Interview"), may be the world approve left. A target that stopped answering is not.
        begun = first.outcome is not Outcome.TRANSPORT
        if not begun:
            return ControlResult(tool, name, False, True, said), None
        moved = run.changed(before, await run.look(), added=True)
        acted = [p for p in moved if generalised(p) in run.effect]
        if acted or (style != "value" and identity_of(case.victim) != before_victim):
            # Acting unasked may be the world approve left too (a yes it still remembers): a fresh one tells.
            where = ", ".join(acted[:4]) or "the victim"
            return ControlResult(tool, name, False, True, f"{said}, and acted: {where}"), said
        # Neither asked nor acted (magnemo-mcp's handoff once nothing waits): no refusal to judge, no finding.
        unjudged = f"could not be run: the call {said}; nothing moved where the approval's effect shows"
        run.unlearned = run.unlearned or f"the {name} control {unjudged}"
        return ControlResult(tool, name, True, False, unjudged), said
    return await _answered(run, style, name, case, subject, first, before_victim), None


async def _answered(
    run: _Runner,
    style: str,
    name: str,
    case: Case,
    subject: str | Instance,
    first: Response,
    before_victim: Any,
) -> ControlResult:
    tool = run.plan.name
    if name == "negative" and honest.approved_elsewhere(run.plan.mechanism):
        # The person's steps on their own channel come before any accepting retry: the client's "no" is not theirs.
        return ControlResult(
            tool, name, True, False, "the person approves on their own channel: the client's no is not theirs"
        )
    if name == "negative":
        label, value = run.names(subject)
        contents = {q.key: answers.negative(q.schema, label, value, run.negative) for q in first.questions}
        if any(c is None for c in contents.values()):
            return ControlResult(tool, name, True, False, "the form has no field that can say no")
        responses: dict[str, Any] = {
            k: types.ElicitResult(action="accept", content=c) for k, c in contents.items()
        }
    else:
        responses = {q.key: types.ElicitResult(action=name) for q in first.questions}  # type: ignore[arg-type]
    before = await run.look()
    done = await run.call(f"{name}: answer", subject, state=first.request_state, responses=responses)
    after = await run.look()
    if style != "value" and identity_of(case.victim) != before_victim:
        return ControlResult(tool, name, False, True, f"the victim was removed or changed after a {name}")
    moved = run.changed(before, after, added=True)
    acted = [p for p in moved if generalised(p) in run.effect]
    if acted:
        return ControlResult(
            tool, name, False, True, f"the action took effect after a {name}: {', '.join(acted[:4])}"
        )
    run.learn(moved, f"changed on a {name} that did not act", case)
    if done.outcome is Outcome.TRANSPORT:
        return ControlResult(tool, name, False, True, f"the target stopped answering: {done.text}")
    run.gate_said(name, done)
    return ControlResult(
        tool, name, True, True, f"no effect ({done.outcome}: {replies.clipped(done.text, 200)})"
    )


async def _wrong_state(run: _Runner, style: str) -> None:
    """An accept that comes back with a state the target never minted: how its gate refuses a forgery."""
    case = run.sandbox.new_case("control-wrong-state")
    try:
        subject = await run.subject(case, style, "wrong-state")
    except SetupFailed:
        return
    first = await run.call("wrong state: ask", subject)
    if first.outcome is not Outcome.INPUT_REQUIRED or not first.questions or not first.request_state:
        return
    responses = {
        q.key: types.ElicitResult(action="accept", content=run.yes(q, subject)) for q in first.questions
    }
    before = await run.look()
    done = await run.call(
        "wrong state: accept", subject, state=_forged(first.request_state), responses=responses
    )
    moved = run.changed(before, await run.look(), added=True)
    if any(generalised(p) in run.effect for p in moved) or done.outcome is Outcome.TRANSPORT:
        return  # a forgery that acts is the forged-state family's finding, not a refusal to learn
    run.learn(moved, "changed on an accept with a forged state that did not act", case)
    run.gate_said("wrong-state", done)


def _forged(state: str) -> str:
    """The same state with its middle character changed: no key the target holds seals it."""
    i = len(state) // 2
    return state[:i] + ("A" if state[i] != "A" else "B") + state[i + 1 :]


async def _no_such_subject(run: _Runner, style: str) -> None:
    """The action on a subject that does not exist: how this target fails for a reason not its gate's.

    A file that is not there, or a handle no setup minted. Asked, it is
    accepted, as a person would: the failure comes where the action begins.
    """
    case = run.sandbox.new_case("control-no-such-subject")
    subject = await _absent_subject(run, case, style)
    if subject is None:
        return
    before = await run.look()
    done = await run.call("no such subject", subject)
    if done.outcome is Outcome.INPUT_REQUIRED and done.questions:
        responses = {
            q.key: types.ElicitResult(action="accept", content=run.yes(q, subject)) for q in done.questions
        }
        done = await run.call(
            "no such subject: accept", subject, state=done.request_state, responses=responses
        )
    moved = run.changed(before, await run.look(), added=True)
    _learn_from_no_such_subject(run, moved, done, case)


def _learn_from_no_such_subject(run: _Runner, moved: list[str], done: Response, case: Case) -> None:
    """What a refused call about a subject that does not exist changed: the target's bookkeeping.

    It acted on nothing, so what moved is what every call leaves: a log line, a rate counter.
    Where the honest approval moved the same places (sendgrid-mcp-secure's audit log and write
    counter, beside the suppression it removed), they are learned as bookkeeping and leave the
    effect, so long as some of the effect did not move here: a call that moved all of it may
    have acted, and teaches nothing.
    """
    if replies.said(done) is not Said.REFUSED:
        return
    why = "changed on a call about a subject that does not exist"
    shared = {generalised(p) for p in moved} & run.effect
    if shared:
        patterns = [*run.bookkeeping, *shared]
        left = {name for name in run.effect if not is_ignored(name, patterns)}
        if not left:
            return
        for name in sorted(shared):
            run.bookkeeping.append(name)
            run.notes.setdefault(name, f"{why}, as the honest approval did: every call's, not the action's")
        run.effect = left
        run.places = {p for p in run.places if not is_ignored(where_of(p), run.bookkeeping)}
    run.learn(moved, why, case)
    learned = replies.signature("no-such-subject", done)
    if any((g.said, g.code, g.shape) == (learned.said, learned.code, learned.shape) for g in run.gate):
        # Worded as a refusal the gate gave: the two could not be told apart, and the gate's is known.
        return
    run.other.append(learned)


_NAMED_LIKE_AN_ID = re.compile(r"(^|_)(id|ref|handle|key|slug|number)$|[a-z](Id|Ref|Number)$", re.I)
# A value that names one thing by its shape: an email, or a code that counts on (`WIDGET-001`, `S-102`).
_NAMES_A_THING = re.compile(r"[^@\s]+@[^@\s]+\.\w+|(?=.*[A-Za-z])[\w.-]*\d+")
# How far another value of the same shape is counted on: far enough to name nothing that exists.
_FAR = 7919


def _absent(instance: Instance) -> Instance | None:
    """The same use with every handle a setup call saved replaced by one nobody minted."""
    handles = {str(v) for v in instance.saved.values()}

    def names_a_subject(name: str, value: Any) -> bool:
        # A handle a setup call saved, else an argument named like an id (`job_id`, `orderId`).
        return str(value) in handles if handles else bool(_NAMED_LIKE_AN_ID.search(name))

    changed = {
        k: (f"{v}0000" if isinstance(v, str) else v + 1_000_003)
        for k, v in instance.arguments.items()
        if isinstance(v, str | int) and not isinstance(v, bool) and names_a_subject(k, v)
    }
    if not changed and not handles:
        # Nothing named like an id (`email`, `sku`): the values that name one thing by their shape, as
        # another valid value of it (an address nobody has, a code counted far on), so the call fails
        # where the action begins instead of on its arguments' form.
        changed = {
            k: other
            for k, v in instance.arguments.items()
            if isinstance(v, str)
            and _NAMES_A_THING.fullmatch(v)
            and (other := another(v, _FAR, k)) is not None
            and other != v
        }
    if not changed:
        return None
    return Instance({**instance.arguments, **changed}, instance.label, instance.saved)


async def _absent_subject(run: _Runner, case: Case, style: str) -> str | Instance | None:
    """A subject of the action that does not exist: a file not there, or handles nobody minted."""
    try:
        subject = await run.subject(case, style, "no-such-subject")
    except SetupFailed:
        return None
    if isinstance(subject, Instance):
        return _absent(subject)
    folder, _, _ = subject.rpartition("/")
    return f"{folder}/mca-no-such-file.txt" if folder else "mca-no-such-file.txt"


async def _no_such_subject_of_flow(
    run: _Runner, flow: confirmations.AgentFlow, channel: honest.RecordingChannel, style: str
) -> None:
    """A token, pending or flag flow on a subject that does not exist: how it fails otherwise."""
    case = run.sandbox.new_case("control-no-such-subject")
    subject = await _absent_subject(run, case, style)
    if subject is None:
        return
    before = await run.look()
    arguments = run.arguments(subject)
    if flow.waits_for_person and flow.asks_a_person:
        done = await _no_such_subject_while_the_person_approves(flow, channel, arguments)
    else:
        preview = await flow.preview(channel, arguments)
        done = preview.response
        # A flag's preview is the call without it, which the gate refuses: the flag is how the flow confirms.
        if flow.caller_approves or (replies.said(done) is not Said.REFUSED and preview.handle is not None):
            try:
                done = await flow.confirm(channel, arguments, preview.handle)
            except HumanFailed:
                return
    moved = run.changed(before, await run.look(), added=True)
    _learn_from_no_such_subject(run, moved, done, case)


async def _no_such_subject_while_the_person_approves(
    flow: confirmations.AgentFlow, channel: honest.RecordingChannel, arguments: Mapping[str, Any]
) -> Response:
    """A call that waits for a person, about a subject that does not exist: the person says yes.

    Its preview is the call while the person says no, which the gate refuses: learned as the world's
    failure, that refusal would be the gate's words twice over (a terminal approver's "refused by the
    approver"). The world fails where the action begins, once the person said yes, as an MRTR
    question's is accepted. A target that fails before any prompt (the subject checked first) gave the
    person nothing to say yes to; its reply is the call's own, said to nobody, as the preview's is.
    """
    try:
        return await flow.confirm(channel, arguments, None)
    except HumanFailed:
        return (await flow.preview(channel, arguments)).response
