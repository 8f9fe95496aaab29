"""`prompt-forging`: the question a human reads, about files with hostile names.

Real files are made with hostile names (fixed examples from the catalogue,
then names generated for the entry's character class) and the
target is asked about each, in round one only: nothing is ever accepted. The
checks in `prompt_checks` judge the elicitation `message` against the message
about a plain name, and the `requestedSchema` of the form. A URL-mode question's page is
opened as the person would (never completed), and its text as they read it
(`channels/url_page.py`) is part of what they were shown. The hostile files are
made after the snapshot and removed before the last one, so they never count as
an effect and never reach a report raw.

Over a token or pending flow, what the human reads is the preview's (the staging
call's) result text, judged by the same checks (`question_text.result_as_shown`:
a JSON result is read as code, its escapes as escapes); its handle is left out,
as it differs from call to call, but never the values the call sent
(`question_text.without_handle`: a pending id that is the command line itself keeps
the name in it). Nothing is confirmed. There is no form to check.
A person who approves on a channel of their own reads what their steps show them
(a `shows: true` command, a webhook read), never the reply to the agent: with no
such step the attack is `not_applicable`, saying so (`_flows.unseen_request`).

An action that names no file gets the hostile strings in its string arguments (or
its setup calls') whose plain value is in what the person read, over MRTR (the
question) and over a flow (the preview, or the person's own channel) alike.

Only questions that were asked are judged: a name the target refused before asking
anything (an error, or a result that says no, `file type not allowed`, whatever id it
also carries) is no question the person read. A staging reply whose only "no" is "not approved
yet" (`approved: false`, `requires_approval: true`) staged the call, as the controls read it
(`confirmations/staging.py`). It is recorded as not asked, never a finding,
and the transcript counts both (`Attack.asked_about`, `Attack.not_asked_about`): an attack
none of whose values reached a question judged nothing, and the verdict says so.

A structured plain value (a command line, a path) gets the hostile text inside it, so the
target still takes it (`_arguments.placements`).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ..catalogue.hostile_names import GENERATORS, valid_example, valid_path
from ..catalogue.prompt_checks import (
    Finding,
    collisions,
    escaped,
    form_nesting,
    form_secrets,
    message_problems,
    names_target,
    shown_whole,
)
from ..catalogue.question_text import result_as_shown, terminal_as_shown, without_handle
from ..confirmations import AgentFlow, Preview, as_flow, staging
from ..confirmations.replies import refusal_text
from ..engine.action import Instance
from ..engine.reading import literal
from ..models import Outcome, Response, Verdict
from . import OVER_A_PREVIEW, technique
from ._arguments import ArgumentSubject, Where, shown_arguments, strings
from ._flows import AttackChannel, unseen_request, what_the_person_read
from ._generated import search
from ._params import Params
from ._twins_closed import ClosedSet, twin_of
from .base import Attack

# Each distinct problem once, from the first named example that shows it; the
# shrunk generated example is always kept, as it is the smallest proof.
_MAX_NAMED_FINDINGS = 4


class PromptForgingParams(Params):
    names: Literal[
        "line-breaks",
        "bidi-controls",
        "invisible",
        "ansi-escapes",
        "other-controls",
        "forged-paragraph",
        "markup-and-links",
        "long-names",
        "look-alike-names",
        "credential-like",
        "form-secrets",
        "form-nesting",
        "names-target",
    ] = Field(
        description="the kind of hostile name (a generator of catalogue/hostile_names, or a form check)"
    )
    examples: list[str | list[str]] = Field(
        [], description="fixed examples tried first (a look-alike pair: two names)"
    )


@technique("prompt-forging", mechanisms=OVER_A_PREVIEW, input_value=True, params=PromptForgingParams)
async def prompt_forging(attack: Attack, params: Mapping[str, Any]) -> None:
    kind = params["names"]
    if (flow := as_flow(attack.plan.mechanism)) is not None:
        await _over_a_flow(attack, params, kind, flow)
        return
    if not attack.names_file:
        await _forge_arguments(attack, params, kind)
        return
    folder = attack.case.directory / "names"
    folder.mkdir()
    first = await attack.ask(attack.path_text(_made(os.fspath(folder), "plain-name.txt")))
    if attack.failed:
        return
    probe = _Probe(attack, folder, kind, await attack.shown(first))
    await attack.start_attack()
    try:
        if kind in ("form-secrets", "form-nesting", "names-target"):
            await probe.form(kind)
        else:
            await _hostile_names(attack, params, probe)
    finally:
        _remove_hostile(folder)
        probe.say_not_asked()


def _remove_hostile(folder: Path) -> None:
    # os.scandir: a few hundred names a run, each looked at once.
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name == "plain-name.txt":
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path)
            else:
                os.unlink(entry.path)


async def _over_a_flow(attack: Attack, params: Mapping[str, Any], kind: str, flow: AgentFlow) -> None:
    """What the human reads is the preview's text: the same checks, on hostile names or argument values."""
    if kind in ("form-secrets", "form-nesting"):
        attack.not_applicable(f"a {flow.kind} flow shows the text of its preview, not a form")
        return
    if (unseen := unseen_request(flow)) is not None:
        attack.not_applicable(unseen)
        return
    if not attack.names_file:
        victim = attack.use_of_action
        reader = _PreviewProbe(attack, attack.case.directory, kind, flow)
        baseline = await reader.first_read(attack.arguments(victim))
        if baseline is not None:
            await _forge_into(
                attack, params, victim, baseline, lambda where, text: _FlowArgumentProbe(reader, where, text)
            )
        return
    folder = attack.case.directory / "names"
    folder.mkdir()
    probe = _PreviewProbe(attack, folder, kind, flow)
    baseline = await probe.first_read(
        attack.arguments(attack.path_text(_made(probe.folder_text, "plain-name.txt")))
    )
    if baseline is None:
        return
    probe.baseline = baseline
    await attack.start_attack()
    try:
        if kind == "names-target":
            await probe.form(kind)
        else:
            await _hostile_names(attack, params, probe)
    finally:
        _remove_hostile(folder)
        probe.say_not_asked()


async def _hostile_names(attack: Attack, params: Mapping[str, Any], probe: _Probe) -> None:
    kind = probe.kind
    if kind not in GENERATORS:
        raise ValueError(f"prompt-forging: unknown names {kind!r}")
    for example in params.get("examples") or ():
        probe.record("named example", example, await probe.check(example))
    seed_value = attack.generation.seed_for(attack.spec.id)
    outcome = await search(
        GENERATORS[kind],
        probe.check,
        examples=attack.generation.examples,
        seed_value=seed_value,
        deadline=time.monotonic() + attack.primary.call_timeout * 4,
        alive=lambda: attack.primary.alive,
        valid=valid_example,
        shrink_tries=attack.generation.shrink_tries,
    )
    attack.note(f"{outcome.tried} generated {kind} names asked about (seed {seed_value} for this attack)")
    if outcome.stopped:
        attack.note(f"generation stopped early: {outcome.stopped}")
    if outcome.failing is not None:
        shrunk = "generated example, shrunk" if attack.generation.shrink_tries else "generated example"
        probe.record(shrunk, *outcome.failing, always=True)


class _Probe:
    plain_second = "plain-second-name.txt"

    def __init__(self, attack: Attack, folder: Path, kind: str, baseline: str) -> None:
        self.attack, self.folder, self.kind, self.baseline = attack, folder, kind, baseline
        # The folder's text, joined to each name as text: pathlib would parse every name again.
        self.folder_text = os.fspath(folder)
        self._recorded: set[tuple[Any, str]] = set()
        self._named = 0
        # Names the target refused before asking anything: (name, what it said), never judged.
        self.not_asked: list[tuple[str, str]] = []
        # The answer to the last request sent: the form of a question is read from it.
        self.last: Response | None = None
        # The questions asked before, the last one last (`_forge_into` shares one list among its probes).
        self.asked: list[str] = []

    def placements(self, name: str) -> list[tuple[int, str]]:
        """The values sent for `name`, in order until one is asked about: a file's name is itself."""
        return [(0, name)]

    def reached(self, placement: int) -> None:
        """A value placed so reached a question (a file's name has one placement)."""

    async def ask(self, name: str) -> str | None:
        """What the person read about `name` (its first placement asked about), or None: not asked."""
        answers: list[str] = []
        for placement, value in self.placements(name):
            text, said = await self.ask_once(value)
            if text is not None:
                self.reached(placement)
                self.attack.asked_about()
                return text
            answers.append(said)
        # What the target said to the first placement, the one most like the value it takes.
        said = answers[0] if answers else "nothing was sent"
        self.not_asked.append((name, said))
        self.attack.not_asked_about(name, said)
        return None

    @staticmethod
    def said(response: Response) -> str:
        """What a target answered instead of asking, as a note quotes it."""
        return refusal_text(response)[:160] or response.outcome.value

    def say_not_asked(self) -> None:
        """One note for every name no question was asked about: what was not judged, and why."""
        if not self.not_asked:
            return
        shown = "; ".join(f"{escaped(name)}: {said[:120]}" for name, said in self.not_asked[:3])
        more = f" (and {len(self.not_asked) - 3} more)" if len(self.not_asked) > 3 else ""
        self.attack.note(
            f"not asked, so not judged: {len(self.not_asked)} name(s) the target refused or answered "
            f"without asking: {shown}{more}"
        )

    async def ask_once(self, name: str) -> tuple[str | None, str]:
        """The question's text about a real file called `name`; else None and what the target said."""
        if not valid_path(name):
            raise ValueError(f"prompt-forging: {escaped(name)} is not a name a file can have")
        path = _made(self.folder_text, name)
        # The path's text as the tool takes it: a str subject is sent as written.
        value = self.attack.path_text(path)
        self.last = response = await self.attack.call(f"ask about a name ({self.kind})", value)
        if not os.path.lexists(path):
            # Made after the snapshot, so the oracle cannot see it go: the disk is checked here.
            removed = (Verdict.VULNERABLE, "the file was removed before any answer")
            self.record("acted in round one", name, [removed], always=True)
        if response.outcome is not Outcome.INPUT_REQUIRED or not response.questions:
            return None, self.said(response)
        shown = await self.attack.shown(response)
        observer = self.attack.observer
        if observer is not None and observer.serving.one_at_a_time and response.request_state:
            # A target that serves one request at a time would hold the next name's call until this
            # question expired: the person lets it go first (a file made after the snapshot: unjudged).
            cancel = self.attack.reply(response, "cancel")
            await self.attack.call(
                "let the question go", value, state=response.request_state, responses=cancel
            )
        return shown, ""

    async def check(self, example: str | Sequence[str]) -> list[Finding]:
        if isinstance(example, str):
            message = await self.ask(example)
            if message is None:
                return []
            found = message_problems(message, self.baseline, example)
            # Names only a redactor finds hostile: showing them as they are is the careful answer.
            return [*found, *shown_whole(message, example)] if self.kind == "credential-like" else found
        rendered = [(name, message) for name in example if (message := await self.ask(name)) is not None]
        return collisions(rendered)

    async def form(self, kind: str) -> None:
        """The form (and, for names-target, the question) about another plain value, if it was asked."""
        plain = self.plain_second
        shown = await self.ask(plain)
        if shown is None or self.last is None:
            return
        sent = getattr(self, "lead", "") + plain
        self.record("the form for a plain value", sent, _form_problems(kind, self.last, sent, shown))

    def record(
        self, how: str, example: str | Sequence[str], found: list[Finding], *, always: bool = False
    ) -> None:
        shown = escaped(example) if isinstance(example, str) else " and ".join(map(escaped, example))
        for verdict, message in found:
            if not always and ((verdict, message) in self._recorded or self._named >= _MAX_NAMED_FINDINGS):
                continue
            self._recorded.add((verdict, message))
            self._named += not always
            self.attack.finding(verdict, f"{message} [{how}: {shown}]")


class _PreviewProbe(_Probe):
    """Previews a real file called by each name; what the person reads is the question."""

    def __init__(self, attack: Attack, folder: Path, kind: str, flow: AgentFlow, baseline: str = "") -> None:
        super().__init__(attack, folder, kind, baseline)
        self.flow, self.channel = flow, AttackChannel(attack)

    @staticmethod
    def read(text: str, handle: str | None, sent: Sequence[str] = ()) -> str:
        """The preview's reply as the person reads it, the handle left out where the server minted it
        (`without_handle`: a pending id that is the command sent keeps the name in it)."""
        return result_as_shown(without_handle(text, handle, sent))

    @staticmethod
    def person(shown: Sequence[tuple[str, str]], handle: str | None, sent: Sequence[str] = ()) -> str:
        """What the person was shown on their channel, each piece read as its medium shows it (the handle
        left out of each, as it differs from call to call: a card that names its request id)."""
        pieces = [
            terminal_as_shown(without_handle(text, handle, sent))
            if medium == "terminal"
            else _PreviewProbe.read(text, handle, sent)
            for medium, text in shown
        ]
        return "\n".join(pieces)

    async def first_read(self, arguments: Mapping[str, Any]) -> str | None:
        """What the person read about the plain subject (the baseline); None, set up wrong, if nothing."""
        shown, text = await self._preview(arguments)
        asks_elsewhere = self.flow.waits_for_person
        if not asks_elsewhere and shown.handle is None:
            what = shown.response.text[:200] or shown.response.outcome.value
            self.attack.setup_failed(f"the preview handed out no token or pending id ({what})")
        elif not asks_elsewhere and (refused := staging.refused(shown)) is not None:
            self.attack.setup_failed(
                f"the preview of a plain value was refused, so nothing can be compared: {refused[:160]}"
            )
        elif text is None and self.flow.hands_over is not None:
            self.attack.setup_failed(
                "the person's steps that show them the request showed nothing about a plain value "
                "(see the notes), so what they read cannot be compared"
            )
        elif text is None:
            # A waits flow is previewed with the person saying no, so that a hostile name is never
            # approved: what they read is what their decline: steps show, not their approving ones.
            self.attack.setup_failed(
                "the person was shown nothing while the call waited (no prompt was read): a waits flow's "
                "question is read by the person's decline: steps, so a hostile name is never approved; "
                "give decline: the step that shows them the call (a read:, a terminal:, or a command: "
                "with shows: true)"
                if asks_elsewhere
                else "the person was shown nothing while the call waited (no prompt was read)"
            )
        return None if self.attack.failed else text

    async def _preview(self, arguments: Mapping[str, Any]) -> tuple[Preview, str | None]:
        """The preview of `arguments`, and what the person read of it (None: nothing was previewed)."""
        before = len(self.channel.shown)
        shown = await self.flow.preview(self.channel, arguments)
        if not self.flow.waits_for_person and staging.refused(shown) is not None:
            return shown, None  # refused before anything was previewed or staged, whatever id it carries
        # What the person reads on their own channel is the question, where they are shown one.
        read = await what_the_person_read(self.flow, self.channel, shown, before)
        # The values this call sent: a handle that is one, or holds one, keeps it in what was read.
        sent = [value for _, value in strings(arguments)]
        if read is not None:
            return shown, self.person(read, shown.handle, sent)
        if self.flow.hands_over is not None:
            # The person approves on their own channel, whose steps showed nothing this time: the
            # reply went to the agent, not to them (`unseen_request`), so nothing they read is judged.
            return shown, None
        return shown, None if shown.handle is None else self.read(shown.response.text, shown.handle, sent)

    async def arguments_for(self, name: str) -> dict[str, Any] | None:
        """The preview's arguments for `name`: a real file called so."""
        if not valid_path(name):
            raise ValueError(f"prompt-forging: {escaped(name)} is not a name a file can have")
        return self.attack.arguments(self.attack.path_text(_made(self.folder_text, name)))

    def after_preview(self, name: str) -> None:
        """After the preview about `name`: the file must still be there."""
        if not os.path.lexists(f"{self.folder_text}/{name}"):
            # Made after the snapshot, so the oracle cannot see it go: the disk is checked here.
            removed = (Verdict.VULNERABLE, "the file was removed by its preview")
            self.record("acted at the preview", name, [removed], always=True)

    async def ask_once(self, name: str) -> tuple[str | None, str]:
        """What the person read about `name`; else None (nothing was previewed) and what the target said."""
        arguments = await self.arguments_for(name)
        if arguments is None:
            return None, "its setup call refused it, so nothing was previewed"
        shown, text = await self._preview(arguments)
        self.after_preview(name)
        return text, "" if text is not None else self.said(shown.response)

    async def form(self, kind: str) -> None:
        """Over a flow only names-target gets here: a plain value's preview must name it."""
        plain = self.plain_second
        text = await self.ask(plain)
        sent = getattr(self, "lead", "") + plain
        self.record("the preview of a plain value", sent, [] if text is None else names_target(text, sent))

    def never_staged(self) -> None:
        """A file is made by the harness: nothing is staged."""


class _FlowArgumentProbe(_PreviewProbe):
    """Previews one use of the action with one string set to each hostile value."""

    def __init__(self, reader: _PreviewProbe, where: Where, baseline: str) -> None:
        super().__init__(reader.attack, reader.folder, reader.kind, reader.flow, baseline)
        self.subject = ArgumentSubject(reader.attack, reader.attack.use_of_action, where)
        self.plain_second = f"plain-{self.subject.argument}-value"
        # What each hostile value goes in after: a value of the honest one's shape, when only those are asked.
        self.lead = ""

    def placements(self, name: str) -> list[tuple[int, str]]:
        return self.subject.values(self.lead + name)

    def reached(self, placement: int) -> None:
        self.subject.reached(placement)

    async def arguments_for(self, name: str) -> dict[str, Any] | None:
        subject = await self.subject(name)
        return None if subject is None else self.attack.arguments(subject)

    def after_preview(self, name: str) -> None:
        """An effect of the action is seen by the oracle: the harness made nothing it must look for."""

    def never_staged(self) -> None:
        self.subject.never_staged()


async def _forge_arguments(attack: Attack, params: Mapping[str, Any], kind: str) -> None:
    """An action that names no file: hostile strings go into the arguments the question shows."""
    victim = attack.use_of_action
    first = await attack.ask(victim)
    if attack.failed:
        return
    baseline = await attack.shown(first)
    await _forge_into(
        attack,
        params,
        victim,
        baseline,
        lambda where, text: _ArgumentProbe(attack, victim, where, kind, text),
    )


async def _forge_into(
    attack: Attack,
    params: Mapping[str, Any],
    victim: Instance,
    baseline: str,
    probe_for: Callable[[Where, str], _ArgumentProbe | _FlowArgumentProbe],
) -> None:
    """Hostile strings into each string argument whose plain value is in `baseline` (what the person read)."""
    shown = shown_arguments(attack, victim, baseline)
    if not shown:
        attack.not_applicable(
            f"no string argument of {attack.plan.name!r} or its setup reaches the question "
            "(none of their values is in it)"
        )
        return
    # Each argument's benign twin first: one that takes only a closed set of values ("vent must be
    # one of north, south, roof") carries no text to the person, and is left out (_twins_closed.py).
    probes = [probe_for(where, baseline.replace(where[2], "")) for where in shown]
    previewed = as_flow(attack.plan.mechanism) is not None
    twins = [
        await twin_of(attack, where[1], where[2], probe, previewed=previewed)
        for where, probe in zip(shown, probes, strict=True)
    ]
    closed = ClosedSet(tuple(twins))
    attack.record(closed)
    for where, probe, twin in zip(shown, probes, twins, strict=True):
        if twin.reached:
            # The other plain value the form checks ask about is the twin, which the argument took: a made-up
            # `plain-to-value` is refused by an argument with a pattern, and nothing is judged.
            probe.plain_second = twin.twin
        elif twin.shape_reached:
            # Only a value of the honest one's shape was asked about: the hostile text goes in after one,
            # and the form checks ask about that value alone.
            probe.lead = twin.shape
            probe.plain_second = ""
            attack.note(
                f"hostile strings in {where[1]!r} go in after {literal(twin.shape)}, a value of its shape"
            )
    kept = [
        (where, probe) for where, probe, twin in zip(shown, probes, twins, strict=True) if twin in closed.open
    ]
    if not kept:
        return  # the verdict reads the twins: a closed set or a lookup is not applicable, else inconclusive
    shown, probes = [where for where, _ in kept], [probe for _, probe in kept]
    names = ", ".join(repr(k) if i is None else f"{attack.plan.setup[i].tool}'s {k!r}" for i, k, _ in shown)
    attack.note(f"hostile strings go into {names}, which the question shows")
    if any(i is not None for i, _, _ in shown):
        # Staging a hostile value runs the setup calls again after the snapshot: what they change is ours.
        attack.stages_at_the_gate()
    await attack.start_attack()
    # Each probe's baseline is the question without its plain value: what the hostile one brings in
    # is compared to the rest.
    probe = probes[0]
    # The questions asked so far, the plain one first, shared by every argument's probe.
    asked = [baseline]
    probe.asked = asked
    if probe.kind in ("form-secrets", "form-nesting", "names-target"):
        await probe.form(probe.kind)
        probe.never_staged()
        return
    for where, other in zip(shown[1:], probes[1:], strict=True):
        # Every argument the question shows gets the named examples; the search runs on the first.
        other.asked = asked
        for example in params.get("examples") or ():
            other.record(f"named example in {where[1]!r}", example, await other.check(example))
        other.say_not_asked()
    await _hostile_names(attack, params, probe)
    probe.never_staged()
    probe.say_not_asked()


class _ArgumentProbe(_Probe):
    """Asks about one use of the action with one string (its own, or staged by setup) set to the hostile text."""

    def __init__(self, attack: Attack, victim: Instance, where: Where, kind: str, baseline: str) -> None:
        super().__init__(attack, attack.case.directory, kind, baseline)
        self.subject = ArgumentSubject(attack, victim, where)
        self.argument = self.subject.argument
        self.plain_second = f"plain-{self.argument}-value"
        # What each hostile value goes in after: a value of the honest one's shape, when only those are asked.
        self.lead = ""

    def placements(self, name: str) -> list[tuple[int, str]]:
        return self.subject.values(self.lead + name)

    def reached(self, placement: int) -> None:
        self.subject.reached(placement)

    def never_staged(self) -> None:
        self.subject.never_staged()

    async def ask_once(self, name: str) -> tuple[str | None, str]:
        subject = await self.subject(name)
        if subject is None:
            return None, "its setup call refused it, so nothing was asked"
        label = f"ask with a hostile {self.argument!r} ({self.kind})"
        self.last = response = await self.attack.call(label, subject)
        if response.outcome is not Outcome.INPUT_REQUIRED or not response.questions:
            return None, self.said(response)
        text = await self.attack.shown(response)
        before = self.asked[-1] if self.asked else None
        self.asked.append(text)
        if self.subject.step is not None and text == before:
            # A setup call staged it, and the question about everything staged did not change: the
            # target held the item out of what the person is asked about (and a yes to), as a refusal
            # would; a name it shows masked still changes the question.
            return None, "staged, then left out of the question: the question was the same as before it"
        return text, ""


_HOSTILE_FILE_TEXT = b"a file with a hostile name\n"


def _form_problems(kind: str, response: Response, plain: str, shown: str) -> list[Finding]:
    """What is wrong with the form asked about a plain value (nothing, if it did not ask).

    A URL-mode question has no form: the page is what the person fills in, out of the client's sight.
    """
    if response.outcome is not Outcome.INPUT_REQUIRED:
        return []
    found: list[Finding] = []
    for question in response.questions:
        if question.url is not None:
            continue
        if kind == "form-secrets":
            found += form_secrets(question.schema)
        elif kind == "form-nesting":
            found += form_nesting(question.schema)
    if kind == "names-target":
        found += names_target(shown, plain)
    return found


def _made(folder: str, name: str) -> str:
    """A real file called `name` in `folder` (nested directories for a long path), its path's text; never overwritten.

    `name` is a valid path (`valid_path`: no empty, `.` or `..` part), so the text joined here is
    what `str(Path(folder) / name)` would be, without pathlib's parsing.
    """
    path = f"{folder}/{name}"
    if "/" in name:
        os.makedirs(os.path.dirname(path), exist_ok=True)
    # os-level calls on text: one file per generated name, a few hundred a run.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    except FileExistsError:
        return path
    try:
        os.write(fd, _HOSTILE_FILE_TEXT)
    finally:
        os.close(fd)
    return path
