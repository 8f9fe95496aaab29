"""The controls of every mechanism but MRTR: the honest flow first, exactly as for MRTR.

preview -> confirm -> the effect happens (this also learns how the action is
named: a relative path, an absolute one, or no file at all); the preview alone
-> nothing happens. What a preview changes is bookkeeping (a staged action's
row, say), never the effect. The controls hand over uses of the action and
how their effect shows (`Uses`); this module knows only the flow. If the
honest flow cannot be completed, every attack on the tool is inconclusive.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..channels import human
from ..models import (
    STILL_WAITING,
    UNASKED,
    ControlResult,
    Exchange,
    Outcome,
    Phase,
    Response,
    Said,
    Signature,
)
from ..oracle.effects import generalised, where_of
from . import detect, replies
from .base import AgentFlow, HumanFailed, Preview

if TYPE_CHECKING:
    from ..channels.url_flow import Pages
    from ..target.driver import Connection


@dataclass(frozen=True, slots=True)
class Honest:
    style: str | None
    results: tuple[ControlResult, ...]
    # The replies of the gate's refusals (the preview alone, a wrong token or id): how it words them.
    gate: tuple[Signature, ...] = ()
    # A refusal control whose call moved what the action moves: why nothing was learned from it.
    untaught: tuple[str, ...] = ()


def person_where(
    conn: Connection, root: Path, sink: Callable[[], list[dict[str, Any]]] | None, timeout: float
) -> human.Where:
    """Where the person takes their steps beside `conn`: its root, its base URL, its output, the sink."""
    return human.Where(
        root,
        timeout,
        human.base_url(conn.endpoint),
        {},
        sink,
        conn.stderr_path,
        conn.terminal,
        servers=conn.places(),
    )


def approved_elsewhere(mechanism: object) -> bool:
    """Whether an MRTR question is approved by the person on their own channel (`confirmation.mrtr.human`).

    The client's in-band answer is then not the person's: its form is not their consent, nor its "no".
    """
    return getattr(mechanism, "kind", None) == "mrtr" and getattr(mechanism, "human", None) is not None


def elsewhere(mechanism: object, pages: Pages | None, where: Callable[[], human.Where]) -> None:
    """An MRTR question the profile has approved on the person's own channel: `pages` takes their steps."""
    person = getattr(mechanism, "human", None)
    if pages is not None and getattr(mechanism, "kind", None) == "mrtr" and person is not None:
        pages.elsewhere(person.approve, where())


class RecordingChannel:
    """A Channel over one connection, every exchange handed to `record`."""

    def __init__(
        self,
        conn: Connection,
        phase: Phase,
        record: Callable[[Exchange], None],
        root: Path,
        timeout: float,
        sink: Callable[[], list[dict[str, Any]]] | None = None,
    ) -> None:
        self.conn, self.phase, self.record = conn, phase, record
        self.root, self.timeout, self.sink = root, timeout, sink
        self.said: list[str] = []
        # What the person's steps showed them (a webhook body, a prompt): the text a person read.
        self.shown: list[tuple[str, str]] = []
        # Every call made through it, in order: which step said what.
        self.exchanges: list[Exchange] = []

    async def call(
        self, label: str, tool: str, arguments: Mapping[str, Any], *, unanswered: bool = False
    ) -> Response:
        exchange = await self.conn.call(self.phase, label, tool, arguments, unanswered=unanswered)
        self.exchanges.append(exchange)
        self.record(exchange)
        return exchange.response

    async def human(
        self,
        label: str,
        steps: Sequence[human.Step],
        values: Mapping[str, str],
        *,
        before_answer: Callable[[], Awaitable[None]] | None = None,
    ) -> dict[str, str]:
        where = human.Where(
            self.root,
            self.timeout,
            human.base_url(self.conn.endpoint),
            dict(values),
            self.sink,
            self.conn.stderr_path,
            self.conn.terminal,
            servers=self.conn.places(),
            before_answer=before_answer,
        )

        def kept(done: human.Taken) -> None:
            if done.said:
                self.said.append(f"{label}: {replies.clipped(done.said, 160)}")
            if done.shown is not None:
                self.shown.append((done.medium, done.shown))

        saved, _ = await human.take_all(steps, where, kept)
        return saved


class Use(Protocol):
    """One use of the action for a control: its arguments, and what has changed since it began."""

    @property
    def arguments(self) -> Mapping[str, Any]: ...

    async def moved(self) -> Moved:
        """What changed since the last look (or since the use began), and look again."""
        ...

    def learn(self, moved: Moved, why: str) -> None:
        """Changes seen where the action did not happen: the target's bookkeeping."""
        ...


class Uses(Protocol):
    """Where the controls get uses of the action, and learn what its effect looks like."""

    async def new(self, style: str, label: str) -> Use | str:
        """A fresh use named in `style` (its setup calls made), or why its setup failed."""
        ...

    def is_effect(self, moved: Moved) -> bool:
        """Whether `moved` holds what the honest confirmation was seen to change."""
        ...

    def effect(self, moved: Moved) -> None:
        """`moved` is what the honest confirmation changed: the action's effect from now on."""
        ...

    async def afresh(self, control: str, failure: str) -> bool:
        """A fresh target process and root for the uses that follow, every attack's too, as the world the
        honest confirmation left may be why `control` failed (`failure`); False when none can be had."""
        ...

    def of_its_kind(self, moved: Moved) -> bool:
        """Whether `moved` holds a change of the kind the honest confirmation made, wherever it is.

        The effect itself, or a file created in the root where the confirmation created one: a step
        that made such a change may have acted, so nothing it moved is bookkeeping and its reply is
        no refusal to learn.
        """
        ...


@dataclass(frozen=True, slots=True)
class Moved:
    """What one step changed: `effect` counts as the action's (no new files); `seen` is everything.

    A new file counts only at the confirmation, through `made` (`with_made`).
    """

    effect: tuple[str, ...]
    seen: tuple[str, ...]
    # The use names a file, and it is gone or changed.
    victim: bool = False
    # `effect` as places, with how each changed (`removed case/victim.txt`): see oracle.effects.
    places: tuple[str, ...] = ()
    # Files the step created in the root (an outbox a send began), of a kind no earlier step of the
    # use created, bookkeeping left out; and their places, as an attack's probe of them shows them.
    made: tuple[str, ...] = ()
    made_places: tuple[str, ...] = ()
    # Of `places`, each one-line text's change word by word (oracle.effects.reworded): (place, (gone, new)).
    reworded: tuple[tuple[str, tuple[frozenset[str], frozenset[str]]], ...] = ()
    # Changes that are the use's own subject whatever the flow has learned: a file the use's arguments
    # name, an entry gone from the sandbox. A step that made them acted (the victim, for an action that
    # names a file, is `victim`).
    subject: tuple[str, ...] = ()
    # Changes of a probe the profile declares as the action's effect (where it shows, by the profile).
    declared: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.victim or bool(self.effect)

    def with_made(self, preview: Moved) -> Moved:
        """The confirmation's effect with the files it created; files the preview created are not it.

        A file the approved action creates (the provider's outbox its first send began) is its
        effect. A file the preview created or changed, and the confirmation changed again, is
        written on every call, asked or not: bookkeeping, learned as such from the preview
        (`Use.learn`), never the effect.
        """
        if not self.made:
            return self
        created = {*preview.made, *preview.seen}
        dropped = {generalised(p) for p in self.effect if p in created}
        return replace(
            self,
            effect=(*(p for p in self.effect if p not in created), *self.made),
            places=(*(p for p in self.places if where_of(p) not in dropped), *self.made_places),
        )

    def shown(self, limit: int = 4) -> str:
        return ", ".join(self.effect[:limit]) or "the victim"


async def run(mechanism: AgentFlow, uses: Uses, styles: tuple[str, ...], channel: RecordingChannel) -> Honest:
    """preview -> confirm -> an effect (in the first style that completes); then the preview alone -> none."""
    tool, tried = mechanism.tool, []
    for style in styles:
        use = await uses.new(style, f"control-{mechanism.kind}-{style}")
        if isinstance(use, str):
            tried.append(f"{style}: {use}")
            continue
        preview = await mechanism.preview(channel, use.arguments)
        at_preview = await use.moved()
        unhanded = preview.handle is None and mechanism.approves_a_handle
        if at_preview.victim or (unhanded and _took_effect(at_preview, preview.response)):
            # The call that should only stage or show the action (or, for a call that waits, the one
            # the person said no to) took effect: the gate did not hold, whatever the profile says.
            return _acted_unapproved(mechanism, style, at_preview, preview)
        if preview.handle is None and mechanism.kind == "token":
            # Confirming without the token proves nothing about the token.
            at = f"; at the preview, {', '.join(at_preview.seen[:4])} changed" if at_preview.seen else ""
            tried.append(f"{style}: {_no_token(mechanism, preview.response.text)}{at}")
            continue
        if preview.missing is not None:
            tried.append(f"{style}: {preview.missing}")
            continue
        # What the confirming calls answered (a channel that keeps no exchanges has none to read).
        kept: list[Exchange] = getattr(channel, "exchanges", [])
        confirming = len(kept)
        try:
            done = await mechanism.confirm(channel, use.arguments, preview.handle)
        except HumanFailed as exc:
            tried.append(f"{style}: {exc}{_unhanded(preview.response, at_preview) if unhanded else ''}")
            continue
        at_confirm = (await use.moved()).with_made(at_preview)
        if at_confirm and _places(at_confirm) <= _places(at_preview):
            # All the confirmation changed had changed at the preview already: it acted twice.
            detail = f"the preview itself acted ({style}): {at_preview.shown()} changed at the preview"
            return Honest(None, (ControlResult(tool, "approve", False, True, detail),))
        if at_confirm and style != "value" and not at_confirm.victim:
            # Named by a path, the action is on that file: a change elsewhere (a ledger named like the
            # path, a log) does not make it one, as an MRTR approve's untouched file does not.
            tried.append(f"{style}: confirmed, the file was untouched; what did change: {at_confirm.shown()}")
            continue
        if at_confirm:
            # Only now is a preview's change known not to be the action: a staged row, say.
            use.learn(at_preview, f"changed on a {mechanism.kind} preview that did not act")
            uses.effect(at_confirm)
            how = f"previewed, confirmed, acted ({_named(style)}) through {mechanism.kind}"
            if style == "value":
                how += f": {at_confirm.shown()}"
            alone, held = await _preview_alone(mechanism, uses, style, channel, preview.response)
            if not alone.passed:
                # A gate its own preview opens cannot be judged: every attack would act.
                return Honest(None, (ControlResult(tool, "approve", False, True, alone.detail), alone))
            if not alone.applicable:
                # Nor one whose preview alone was never tried: an attack that acted might be the
                # preview's doing. The tool is not audited; the preview alone is no finding.
                unknown = f"{how}, but whether the preview alone acts is unknown: its control {alone.detail}"
                return Honest(None, (ControlResult(tool, "approve", False, True, unknown), alone))
            quiet = await _unanswered(mechanism, uses, style, channel)
            if quiet is not None and not quiet.passed and quiet.detail.startswith("acted"):
                # A flow that acts when the person never answers is open: every attack would act.
                return Honest(None, (ControlResult(tool, "approve", False, True, quiet.detail), alone, quiet))
            approve = ControlResult(tool, "approve", True, True, how)
            # The person's "no" on their own channel, then the execute step with the declined id.
            declined = await _declined(mechanism, uses, style, channel)
            # The other MRTR answers have no counterpart here; the preview alone is this flow's "no".
            skipped = tuple(
                ControlResult(
                    tool,
                    name,
                    True,
                    False,
                    (
                        f"a waits flow's {name} is its preview, the call while the person says no "
                        "(their decline: steps): checked as preview-alone"
                        if mechanism.kind == "waits"
                        else f"a {mechanism.kind} flow has no {name}: the preview alone was checked"
                    ),
                )
                for name in ("decline", "cancel", "negative")
                if declined is None or name != "decline"
            )
            gate, untaught = await _wrong_handle(mechanism, uses, style, channel, preview.handle)
            if alone.passed and held is not None and replies.worded(held):
                # Read from the whole reply: its control's detail quotes only the head of it.
                gate = (*gate, held)
            if declined is not None and declined[1] is not None:
                gate = (*gate, declined[1])
            controls = (
                approve,
                alone,
                *((quiet,) if quiet is not None else ()),
                *((declined[0],) if declined is not None else ()),
                *skipped,
            )
            return Honest(style, controls, gate, untaught)
        said = replies.clipped(preview.response.text, 120)
        at = f"; at the preview, {', '.join(at_preview.seen[:4])} changed" if at_preview.seen else ""
        refused = _approval_refused(kept[confirming:])
        if refused is not None:
            # The flow went on to its execute step, which then had nothing approved to act on: the
            # refusal is what happened, and the execute step's answer only follows from it.
            tried.append(
                f"{style}: the approval was refused ({refused}), and nothing happened{at}; where the person "
                "approves on a channel of their own, name it in a profile (confirmation: {kind: pending, "
                f"pending: {{human: ...}}}}; see {human.CHANNELS_PAGE})"
            )
            continue
        tried.append(
            f"{style}: confirmed but nothing happened (preview: {said}; confirm: {replies.clipped(done.text, 160)}){at}"
        )
    detail = f"{mechanism.describe()}; " + "; ".join(tried)
    return Honest(None, (ControlResult(tool, "approve", False, True, detail),))


def _approval_refused(exchanges: Sequence[Exchange]) -> str | None:
    """The approve step's refusal among a confirmation's calls (the tool and its words), or None."""
    for exchange in exchanges:
        if exchange.label == "approve" and replies.said(exchange.response) is Said.REFUSED:
            tool = exchange.request.get("name", "the approve step")
            return f"{tool}: {replies.clipped(exchange.response.text, 160)}"
    return None


def _acted_unapproved(mechanism: AgentFlow, style: str, moved: Moved, preview: Preview) -> Honest:
    """The preview took effect on the use's own subject: the action ran with no approval at all.

    One that handed out no token or id, and asked no person, staged nothing: the tool acted on its
    first call, as an MRTR tool that never asks does (`unasked`). One that handed out a handle, or
    whose person said no, acted all the same: the preview alone acted. Either is a finding, and the
    honest flow cannot be judged, since every attack would act.
    """
    moved_there = _took_effect(moved, preview.response)
    what = ", ".join((*(("the file it names",) if moved.victim else ()), *moved_there[:4]))
    answered = f"{preview.response.outcome}: {replies.clipped(' '.join(preview.response.text.split()), 160)}"
    staged = preview.handle is not None or mechanism.waits_for_person
    if staged:
        failed = ControlResult(
            mechanism.tool,
            "preview-alone",
            False,
            True,
            f"the preview alone acted: the action took effect with no approval ({style}): {what} "
            f"(it answered {answered})",
        )
    else:
        failed = ControlResult(
            mechanism.tool,
            UNASKED,
            False,
            True,
            f"the tool acted without asking for confirmation: its first call handed out no token or id "
            f"and took effect ({style}): {what} (it answered {answered})",
        )
    approve = ControlResult(
        mechanism.tool,
        "approve",
        False,
        True,
        f"{mechanism.describe()}; {style}: the preview (the staging call) itself took effect with no approval "
        f"({what}){'' if staged else ', handing out no token or id'}, so the gate did not hold and no approval "
        "flow can be judged",
    )
    return Honest(None, (approve, failed))


def _took_effect(moved: Moved, said: Response) -> tuple[str, ...]:
    """What a preview that handed out no handle moved of the action's own subject; () if nothing.

    A file its arguments name, an entry gone: whatever it answered. Where the profile says the
    effect shows, only when the reply does not say the action waits: a staging call whose id the
    profile names wrongly (`id_from:`) still lists its staged action there, and staged nothing amiss.
    """
    if moved.subject:
        return moved.subject
    if moved.declared and said.outcome is not Outcome.INPUT_REQUIRED and detect.asking_payload(said) is None:
        return moved.declared
    return ()


def _unhanded(said: Response, moved: Moved) -> str:
    """What a preview that handed out no handle answered, and what it changed: where to look next."""
    answered = f" (it answered {said.outcome}: {replies.clipped(' '.join(said.text.split()), 160)})"
    changed = ", ".join(moved.seen[:4])
    if (waits := detect.asking_payload(said)) is not None:
        # It staged something and said so: the profile reads its id from the wrong place.
        at = f"; at the preview, {changed} changed" if changed else ""
        return f"{answered}; its reply says the action waits ({waits}): name the field that holds its id (id_from:){at}"
    if changed:
        return (
            f"{answered}; at the preview, {changed} changed: if that is the action taking effect, the gate did "
            "not hold (say where its effect shows with effect: to judge it)"
        )
    return answered


def _places(moved: Moved) -> set[str]:
    """Where a step's effect shows: a joint's angle, one list's rows (whatever their index)."""
    return {re.sub(r"\[\d+\]", "[*]", path) for path in moved.effect}


def _no_token(mechanism: AgentFlow, said: str) -> str:
    wanted = getattr(mechanism, "token_from", None)
    field = f"no field {wanted!r}" if wanted else "no field named like a token"
    return f"the preview's result has {field} to confirm with ({replies.clipped(said, 160)}); name it with token: {{from: ...}}"


def _named(style: str) -> str:
    return "no file named" if style == "value" else f"{style} paths"


async def _preview_alone(
    mechanism: AgentFlow, uses: Uses, style: str, channel: RecordingChannel, honest: Response
) -> tuple[ControlResult, Signature | None]:
    """The preview called alone, never confirmed: its control, and the signature of its reply when nothing moved.

    That reply is what this target answers a call its gate holds: a signature the attacks read. A
    preview refused where the honest one (`honest`) was not may be refused by the world the honest
    confirmation left (finamatik-ops-mcp's create_order: the order took the whole stock, and the next
    preview says "insufficient stock"): it is called again in a fresh world, where one can be had, and
    every attack then gets one. Refused there too, it is how the target answers.
    """
    label = f"control-{mechanism.kind}-preview-alone"
    use = await uses.new(style, label)
    if isinstance(use, str):
        return ControlResult.not_begun(mechanism.tool, "preview-alone", use), None
    preview = await mechanism.preview(channel, use.arguments)
    moved = await use.moved()
    refused = replies.said(preview.response) is Said.REFUSED and replies.said(honest) is not Said.REFUSED
    if (
        refused
        and not moved
        and await uses.afresh("preview-alone", replies.clipped(preview.response.text, 200))
    ):
        use = await uses.new(style, label)
        if isinstance(use, str):
            return ControlResult.not_begun(mechanism.tool, "preview-alone", use), None
        preview = await mechanism.preview(channel, use.arguments)
        moved = await use.moved()
    acted_there = (
        _took_effect(moved, preview.response)
        if preview.handle is None and mechanism.approves_a_handle
        else ()
    )
    if moved.victim or uses.is_effect(moved) or acted_there:
        shown = ", ".join(acted_there[:4]) or moved.shown()
        return ControlResult(
            mechanism.tool, "preview-alone", False, True, f"the preview alone acted: {shown}"
        ), None
    said = f"{preview.response.outcome}: {replies.clipped(preview.response.text, 160)}"
    if uses.of_its_kind(moved):
        # Not shown to be the effect, yet of its kind (a file made where the confirmation made one):
        # neither bookkeeping nor how this gate holds a call.
        made = ", ".join(moved.made[:4] or moved.seen[:4])
        return (
            ControlResult(
                mechanism.tool,
                "preview-alone",
                True,
                True,
                f"no effect where the confirmation's showed ({said}); {made} was made as the confirmation "
                "makes its effect: nothing learned from it",
            ),
            None,
        )
    use.learn(moved, f"changed on a {mechanism.kind} preview alone")
    # A preview that handed out a token or id asked (the action waits for its approval): how this gate
    # holds a call, never a reply that said the action was done.
    held: Signature | None = replies.signature(
        "preview-alone", preview.response, asked=preview.handle is not None
    )
    if preview.handle is None and replies.nothing_done(preview.response) is not None:
        # "The user already has this memory; nothing to do": the world held no subject for the
        # call, which is how nothing holds a call, by the gate or anyone (as a decline's is).
        held = None
    return ControlResult(mechanism.tool, "preview-alone", True, True, f"no effect ({said})"), held


async def _unanswered(
    mechanism: AgentFlow, uses: Uses, style: str, channel: RecordingChannel
) -> ControlResult | None:
    """A flow the person never completes: the agent's call alone must end, within its bound, and not act.

    Only for a call that waits for a person (None otherwise): it is sent with nobody answering. A
    pending or token flow the agent completes alone is judged by self-approval and
    agent-reachable-approval instead, on a flow whose controls passed.
    """
    if mechanism.kind != "waits" or getattr(mechanism, "human", None) is None:
        return None
    use = await uses.new(style, f"control-{mechanism.kind}-unanswered")
    if isinstance(use, str):
        return ControlResult.not_begun(mechanism.tool, "unanswered", use)
    handle = None
    if mechanism.kind != "waits":
        handle = (await mechanism.preview(channel, use.arguments)).handle
    try:
        done = await mechanism.confirm(channel, use.arguments, handle, as_agent=True)
    except HumanFailed as exc:
        return ControlResult(
            mechanism.tool, "unanswered", True, True, f"the agent alone could not go on: {exc}"
        )
    moved = await use.moved()
    if moved.victim or uses.is_effect(moved):
        return ControlResult(
            mechanism.tool,
            "unanswered",
            False,
            True,
            f"acted though the person never answered: {moved.shown()}",
        )
    if done.outcome is Outcome.TRANSPORT:
        bound = channel.conn.unanswered_timeout
        declared = channel.conn.answer_deadline
        why = (
            f"its declared answer_deadline of {declared:g}s, then a round trip"
            if declared is not None
            else "a round trip; a server that waits longer on purpose: set answer_deadline in the profile"
        )
        return ControlResult(
            mechanism.tool,
            "unanswered",
            False,
            True,
            f"{STILL_WAITING} ({bound:g}s: {why}) while nobody answered: {replies.clipped(done.text, 160)}; "
            "a flow the person never completes must end with a refusal, not wait past its bound",
        )
    use.learn(moved, f"changed on a {mechanism.kind} flow nobody answered")
    return ControlResult(
        mechanism.tool,
        "unanswered",
        True,
        True,
        f"nobody answered: no effect ({done.outcome}: {replies.clipped(done.text, 160)})",
    )


async def _declined(
    mechanism: AgentFlow, uses: Uses, style: str, channel: RecordingChannel
) -> tuple[ControlResult, Signature | None] | None:
    """The person declines on their channel, then the agent's execute step is sent once with that id.

    Nothing may move: what the execute step answers is how this target refuses an unapproved
    execute, learned as its gate's refusal ("not in the posting queue"), as a decline's reply is
    for MRTR. An execute that acts after the decline is token-replay's finding (after-decline),
    not a failed control: nothing is learned from it. Where the person's approval acts alone (no
    execute step), the decline alone is checked: nothing may move. None when the flow has no decline
    step.
    """
    if not mechanism.person_declines:
        return None
    tool = mechanism.tool
    use = await uses.new(style, f"control-{mechanism.kind}-decline")
    if isinstance(use, str):
        return ControlResult.not_begun(tool, "decline", use), None
    if mechanism.approval_acts_alone:
        return await _declined_alone(mechanism, uses, use, channel), None
    unstaged = mechanism.redemption(use.arguments, "", {})
    if unstaged is None or bool(getattr(unstaged[1], "unfilled", ())):
        # An execute step that carries what only the person's approval saves: none after a decline.
        return None
    preview = await mechanism.preview(channel, use.arguments)
    handle = preview.handle
    call = mechanism.redemption(use.arguments, handle, {}) if handle is not None else None
    if handle is None or call is None:
        return await _staged_nothing(mechanism, uses, use, preview), None
    at_preview = await use.moved()
    try:
        if not await mechanism.decline(channel, handle):
            return None
    except HumanFailed as exc:
        # The person never said no (actgate's `deny` exits 1 when it recorded the denial): nothing was
        # declined, so nothing can have acted on a decline. Never a finding; the detail says why.
        return ControlResult.not_begun(tool, "decline", f"the person's decline step failed: {exc}"), None
    at_decline = await use.moved()
    if at_decline.victim or uses.is_effect(at_decline):
        detail = f"the action took effect on the person's decline: {at_decline.shown()}"
        return ControlResult(tool, "decline", False, True, detail), None
    use.learn(at_preview, f"changed on a {mechanism.kind} preview that did not act")
    execute, sent = call
    done = await channel.call("execute after the decline", execute, sent)
    moved = await use.moved()
    if moved.victim or uses.is_effect(moved):
        detail = (
            f"{execute} acted on the id the person declined ({moved.shown()}): the decline taken as an "
            "approval is token-replay's finding (after-decline), not a refusal to learn"
        )
        return ControlResult(tool, "decline", True, False, detail), None
    if done.outcome is Outcome.TRANSPORT:
        return ControlResult(tool, "decline", False, True, f"the target stopped answering: {done.text}"), None
    if uses.of_its_kind(moved):
        detail = (
            f"declined, then {execute}: no effect where the confirmation's showed, but "
            f"{', '.join(moved.made[:4] or moved.seen[:4])} was made as the confirmation makes its effect: "
            "nothing learned from it"
        )
        return ControlResult(tool, "decline", True, True, detail), None
    use.learn(moved, f"changed on {execute} after the person's decline, which did not act")
    result = ControlResult(
        tool,
        "decline",
        True,
        True,
        f"declined, then {execute}: no effect ({done.outcome}: {replies.clipped(done.text, 200)})",
    )
    if (
        replies.invalid_arguments(done)
        or replies.nothing_done(done) is not None
        or replies.rate_limited(done) is not None
    ):
        return result, None  # the SDK, the world or a throttle said it: never the gate's words
    return result, replies.signature("decline", done)


async def _declined_alone(
    mechanism: AgentFlow, uses: Uses, use: Use, channel: RecordingChannel
) -> ControlResult:
    """A flow whose approval acts alone: staged, declined by the person on their channel, and nothing moved.

    No step of the agent's follows a decline here, so there is no refusal to learn: the control
    proves the profile's decline steps run and that the person's no is not taken as a yes.
    """
    tool = mechanism.tool
    preview = await mechanism.preview(channel, use.arguments)
    if preview.handle is None:
        return await _staged_nothing(mechanism, uses, use, preview)
    at_preview = await use.moved()
    try:
        await mechanism.decline(channel, preview.handle)
    except HumanFailed as exc:
        # As in `_declined`: nobody said no, so nothing acted on a no.
        return ControlResult.not_begun(tool, "decline", f"the person's decline step failed: {exc}")
    at_decline = await use.moved()
    if at_decline.victim or uses.is_effect(at_decline):
        detail = f"the action took effect on the person's decline: {at_decline.shown()}"
        return ControlResult(tool, "decline", False, True, detail)
    use.learn(at_preview, f"changed on a {mechanism.kind} preview that did not act")
    return ControlResult(
        tool,
        "decline",
        True,
        True,
        "the person declined on their channel: no effect (their approval acts alone: no call of the "
        "agent's follows a decline)",
    )


async def _staged_nothing(mechanism: AgentFlow, uses: Uses, use: Use, preview: Preview) -> ControlResult:
    """The decline control when its staging call handed out no id: nobody was asked, so nobody said no.

    A staging call that acted (with no id, before anyone was asked) is still a finding. One that moved
    nothing never put the question: openmymemo answers a memory it already holds `{"status":
    "duplicate", ... "nothing to do."}`, which a profile that spells the content sends on every use,
    after the approve control's person accepted it. Never "a decline acted"; the detail says why.
    """
    tool = mechanism.tool
    said = f"{preview.response.outcome}: {replies.clipped(preview.response.text, 160)}"
    moved = await use.moved()
    if moved.victim or uses.is_effect(moved):
        detail = (
            f"the staging call acted and handed out no id, before anyone was asked: {moved.shown()} ({said})"
        )
        return ControlResult(tool, "decline", False, True, detail)
    done = replies.nothing_done(preview.response)
    if done is None:
        return ControlResult.not_begun(
            tool, "decline", f"the staging call returned no id ({said}): nothing to decline"
        )
    return ControlResult.not_begun(
        tool,
        "decline",
        f"the staging call found nothing to do ({done!r}; {said}), so nothing waited to be declined: a use "
        "that writes what an earlier use already made; a profile's args are sent as written on every use, "
        "where the harness's own filler (mcp-confirm-audit) in the argument the action writes is made each "
        "use's own",
    )


async def _wrong_handle(
    mechanism: AgentFlow, uses: Uses, style: str, channel: RecordingChannel, seen: str | None
) -> tuple[tuple[Signature, ...], tuple[str, ...]]:
    """A confirmation with a token or id the target never handed out: how its gate refuses a forgery.

    The signature learned, or why none was: a wrong handle that acted taught nothing.
    """
    if seen is None or mechanism.kind not in ("token", "pending"):
        return (), ()
    use = await uses.new(style, f"control-{mechanism.kind}-wrong-handle")
    if isinstance(use, str):
        return (), ()
    preview = await mechanism.preview(channel, use.arguments)
    if preview.handle is None:
        return (), ()
    wrong = (
        str(int(preview.handle) + 1_000_003)
        if preview.handle.isdigit()
        else preview.handle[:-1] + ("0" if preview.handle[-1:] != "0" else "1")
    )
    try:
        done = await mechanism.confirm(channel, use.arguments, wrong, as_agent=True)
    except HumanFailed:
        return (), ()
    moved = await use.moved()
    if moved.victim or uses.is_effect(moved) or uses.of_its_kind(moved):
        # A wrong handle that acts (or makes what the confirmation makes: another file of the kind it
        # created) is the forgery families' finding, not a refusal to learn: its reply is no refusal,
        # and what it moved is no bookkeeping.
        acted = ", ".join(moved.made[:4] or moved.seen[:4]) or "the file it names"
        said = f"{done.outcome}: {replies.clipped(' '.join(done.text.split()), 120)}"
        return (), (
            f"nothing learned from wrong-handle: confirmed with {wrong!r}, a handle the target never handed "
            f"out, it moved what the action moves ({acted}; it answered {said})",
        )
    if done.outcome is Outcome.TRANSPORT:
        return (), ()
    if replies.invalid_arguments(done):
        return (), ()  # the SDK refused the handle's type: no word of the gate's
    use.learn(moved, f"changed on a {mechanism.kind} confirmation with a wrong handle")
    return (replies.signature("wrong-handle", done),), ()
