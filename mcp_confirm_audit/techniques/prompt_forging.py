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
as it differs from call to call. Nothing is confirmed. There is no form to check.

Only questions that were asked are judged: a name the target refused before asking
anything (an error, or a result that says no, `file type not allowed`, whatever id it
also carries) is no question the person read. It is recorded as not asked, never a finding.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..catalogue.hostile_names import GENERATORS, valid_example, valid_path
from ..catalogue.prompt_checks import (
    Finding,
    collisions,
    escaped,
    form_nesting,
    form_secrets,
    message_problems,
    names_target,
)
from ..catalogue.question_text import result_as_shown, terminal_as_shown
from ..confirmations import AgentFlow, Preview, as_flow
from ..confirmations.replies import refusal, refusal_text
from ..confirmations.waits import Waits
from ..engine.action import Instance
from ..models import Outcome, Response, Verdict
from . import technique
from ._flows import AttackChannel, previewed, what_the_person_read
from ._generated import search
from .base import Attack

# Each distinct problem once, from the first named example that shows it; the
# shrunk generated example is always kept, as it is the smallest proof.
_MAX_NAMED_FINDINGS = 4


@technique("prompt-forging")
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
    first = await attack.ask(_made(folder, "plain-name.txt"))
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
    for entry in folder.iterdir():
        if entry.name == "plain-name.txt":
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


async def _over_a_flow(attack: Attack, params: Mapping[str, Any], kind: str, flow: AgentFlow) -> None:
    """What the human reads is the preview's text: the same checks, on files with hostile names."""
    if not attack.file_only():
        return
    if kind in ("form-secrets", "form-nesting"):
        attack.not_applicable(f"a {flow.kind} flow shows the text of its preview, not a form")
        return
    folder = attack.case.directory / "names"
    folder.mkdir()
    probe = _PreviewProbe(attack, folder, kind, flow)
    plain = _made(folder, "plain-name.txt")
    before = len(probe.channel.shown)
    if isinstance(flow, Waits):
        shown: Preview | None = await flow.preview(probe.channel, attack.arguments(plain))
    else:
        shown = await previewed(attack, flow, probe.channel, attack.arguments(plain))
    if shown is None:
        return
    if not isinstance(flow, Waits) and (said := refusal(shown.response)) is not None:
        attack.setup_failed(
            f"the preview of a plain name was refused, so nothing can be compared: {said[:160]}"
        )
        return
    read = await what_the_person_read(flow, probe.channel, shown, before)
    if read is None and isinstance(flow, Waits):
        attack.setup_failed("the person was shown nothing while the call waited (no prompt was read)")
        return
    probe.baseline = (
        probe.person(read, shown.handle)
        if read is not None
        else probe.read(shown.response.text, shown.handle)
    )
    await attack.start_attack()
    try:
        if kind == "names-target":
            second = _made(folder, "plain-second-name.txt")
            text = await probe.ask(second.name)
            found = [] if text is None else names_target(text, second.name)
            probe.record("the preview of a plain name", second.name, found)
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
    )
    attack.note(f"{outcome.tried} generated {kind} names asked about (seed {seed_value} for this attack)")
    if outcome.stopped:
        attack.note(f"generation stopped early: {outcome.stopped}")
    if outcome.failing is not None:
        probe.record("generated example, shrunk", *outcome.failing, always=True)


class _Probe:
    def __init__(self, attack: Attack, folder: Path, kind: str, baseline: str) -> None:
        self.attack, self.folder, self.kind, self.baseline = attack, folder, kind, baseline
        self._recorded: set[tuple[Any, str]] = set()
        self._named = 0
        # Names the target refused before asking anything: (name, what it said), never judged.
        self.not_asked: list[tuple[str, str]] = []

    def unasked(self, name: str, response: Response) -> None:
        """`name` got no question (the target refused it first, or answered without asking)."""
        self.not_asked.append((name, refusal_text(response)[:160] or response.outcome.value))

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

    async def ask(self, name: str) -> str | None:
        """The question's text about a real file called `name`, or None if not asked."""
        if not valid_path(name):
            raise ValueError(f"prompt-forging: {escaped(name)} is not a name a file can have")
        path = _made(self.folder, name)
        response = await self.attack.call(f"ask about a name ({self.kind})", path)
        if not os.path.lexists(path):
            # Made after the snapshot, so the oracle cannot see it go: the disk is checked here.
            removed = (Verdict.VULNERABLE, "the file was removed before any answer")
            self.record("acted in round one", name, [removed], always=True)
        if response.outcome is not Outcome.INPUT_REQUIRED or not response.questions:
            self.unasked(name, response)
            return None
        return await self.attack.shown(response)

    async def check(self, example: str | Sequence[str]) -> list[Finding]:
        if isinstance(example, str):
            message = await self.ask(example)
            return [] if message is None else message_problems(message, self.baseline, example)
        rendered = [(name, message) for name in example if (message := await self.ask(name)) is not None]
        return collisions(rendered)

    async def form(self, kind: str) -> None:
        second = _made(self.folder, "plain-second-name.txt")
        response = await self.attack.call("ask about another plain name", second)
        shown = await self.attack.shown(response)
        self.record(
            "the form for a plain name", second.name, _form_problems(kind, response, second.name, shown)
        )

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
    """Previews a real file called by each name; what it says is the question."""

    def __init__(self, attack: Attack, folder: Path, kind: str, flow: AgentFlow) -> None:
        super().__init__(attack, folder, kind, "")
        self.flow, self.channel = flow, AttackChannel(attack)

    @staticmethod
    def read(text: str, handle: str | None) -> str:
        return result_as_shown(text.replace(handle, "{handle}") if handle else text)

    @staticmethod
    def person(shown: Sequence[tuple[str, str]], handle: str | None) -> str:
        """What the person was shown on their channel, each piece read as its medium shows it."""
        pieces = [
            terminal_as_shown(text) if medium == "terminal" else _PreviewProbe.read(text, handle)
            for medium, text in shown
        ]
        return "\n".join(pieces)

    async def ask(self, name: str) -> str | None:
        """The preview's text about a real file called `name`, or None if it previewed nothing."""
        if not valid_path(name):
            raise ValueError(f"prompt-forging: {escaped(name)} is not a name a file can have")
        path = _made(self.folder, name)
        before = len(self.channel.shown)
        shown = await self.flow.preview(self.channel, self.attack.arguments(path))
        if not os.path.lexists(path):
            removed = (Verdict.VULNERABLE, "the file was removed by its preview")
            self.record("acted at the preview", name, [removed], always=True)
        if not isinstance(self.flow, Waits) and refusal(shown.response) is not None:
            # Refused before anything was previewed or staged: whatever id it carries, nobody is asked.
            self.unasked(name, shown.response)
            return None
        # What the person reads on their own channel is the question, where they are shown one.
        read = await what_the_person_read(self.flow, self.channel, shown, before)
        if read is not None:
            return self.person(read, shown.handle)
        return None if shown.handle is None else self.read(shown.response.text, shown.handle)


async def _forge_arguments(attack: Attack, params: Mapping[str, Any], kind: str) -> None:
    """An action that names no file: hostile strings go into the arguments the question shows."""
    victim = attack.use_of_action
    first = await attack.ask(victim)
    if attack.failed:
        return
    baseline = await attack.shown(first)
    # Where the question's text comes from: the gated call's own strings, else (a handle)
    # the strings its setup call staged, which the question quotes back.
    handles = {str(v) for v in victim.saved.values()}
    shown: list[tuple[int | None, str, str]] = [
        (None, k, v)
        for k, v in victim.arguments.items()
        if isinstance(v, str) and v and v in baseline and v not in handles  # a handle is a lookup, not text
    ]
    for index, step in enumerate(attack.plan.setup):
        shown += [(index, k, v) for k, v in step.args.items() if isinstance(v, str) and v and v in baseline]
    shown.sort(key=lambda where: where[0] is not None)
    if not shown:
        attack.not_applicable(
            f"no string argument of {attack.plan.name!r} or its setup reaches the question "
            "(none of their values is in it)"
        )
        return
    names = ", ".join(repr(k) if i is None else f"{attack.plan.setup[i].tool}'s {k!r}" for i, k, _ in shown)
    attack.note(f"hostile strings go into {names}, which the question shows")
    if any(i is not None for i, _, _ in shown):
        # Staging a hostile value runs the setup calls again after the snapshot: what they change is ours.
        attack.stages_at_the_gate()
    await attack.start_attack()
    probe = _ArgumentProbe(attack, victim, shown[0], kind, baseline)
    if kind in ("form-secrets", "form-nesting", "names-target"):
        await probe.form(kind)
        probe.never_staged()
        return
    for where in shown[1:]:
        # Every argument the question shows gets the named examples; the search runs on the first.
        other = _ArgumentProbe(attack, victim, where, kind, baseline)
        for example in params.get("examples") or ():
            other.record(f"named example in {where[1]!r}", example, await other.check(example))
        other.say_not_asked()
    await _hostile_names(attack, params, probe)
    probe.never_staged()
    probe.say_not_asked()


class _ArgumentProbe(_Probe):
    """Asks about one use of the action with one string (its own, or staged by setup) set to the hostile text."""

    def __init__(
        self, attack: Attack, victim: Instance, where: tuple[int | None, str, str], kind: str, baseline: str
    ) -> None:
        super().__init__(attack, attack.case.directory, kind, baseline.replace(where[2], ""))
        self.victim, (self.step, self.argument, _) = victim, where
        self.staged = self.unstaged = 0

    async def subject(self, value: str) -> Instance | None:
        if self.step is None:
            return replace(self.victim, arguments={**self.victim.arguments, self.argument: value})
        staged = await self.attack.staged_with(self.step, self.argument, value)
        if staged is None:
            self.unstaged += 1
        else:
            self.staged += 1
        return staged

    def never_staged(self) -> None:
        """No hostile value ever got past the setup call: nothing about the question was tested."""
        if self.step is not None and self.unstaged and not self.staged:
            tool = self.attack.plan.setup[self.step].tool
            self.attack.setup_failed(
                f"{tool} refused every hostile {self.argument!r} ({self.unstaged} tried), so no question "
                "about one was ever asked; stage it with a value the setup call accepts"
            )

    async def ask(self, name: str) -> str | None:
        subject = await self.subject(name)
        if subject is None:
            return None
        response = await self.attack.call(f"ask with a hostile {self.argument!r} ({self.kind})", subject)
        if response.outcome is not Outcome.INPUT_REQUIRED or not response.questions:
            self.unasked(name, response)
            return None
        return await self.attack.shown(response)

    async def form(self, kind: str) -> None:
        plain = f"plain-{self.argument}-value"
        subject = await self.subject(plain)
        if subject is None:
            return
        response = await self.attack.call(f"ask with another plain {self.argument!r}", subject)
        shown = await self.attack.shown(response)
        self.record("the form for a plain value", plain, _form_problems(kind, response, plain, shown))


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


def _made(folder: Path, name: str) -> Path:
    """A real file called `name` (nested directories for a long path); never overwritten."""
    path = folder / name
    if "/" in name:
        path.parent.mkdir(parents=True, exist_ok=True)
    # os-level calls: one file per generated name, a few hundred a run.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    except FileExistsError:
        return path
    try:
        os.write(fd, _HOSTILE_FILE_TEXT)
    finally:
        os.close(fd)
    return path
