"""What an attack recorded: its exchanges, notes, findings, failures and each family's own parts.

`Attack` (techniques/base.py) drives the target and the world; this is the part of it that only
writes down, and what `Attack.transcript` hands the verdict. A technique records through it
(`attack.note`, `attack.finding`, `attack.setup_failed`, `attack.record(part)` ...) and never
decides a verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..models import Exchange, Layer, Part, PartT, Phase, Response, Verdict
from ._approvals import Approvals
from ._asked import Asked
from ._drift import Drift
from ._single_use import SingleUse
from ._twin import BeforeTheChange, Twin

# Values not asked about whose answers a transcript keeps: enough to quote, never hundreds.
_ASKED_SAID_KEPT = 3


class Recorder:
    def __init__(self, items_per_effect: int = 1) -> None:
        self._exchanges: list[Exchange] = []
        self._notes: list[str] = []
        self._setup_failure: str | None = None
        self._not_applicable: str | None = None
        self._findings: list[tuple[Verdict, str]] = []
        self._finding_layer: Layer | None = None
        # Each family's own evidence, one part of each kind (`record`), in the order first recorded.
        self._parts: dict[type[Part], Part] = {}
        self._effect_verdict: tuple[Verdict, str] | None = None
        self._only_the_case_counts = False
        # How many items one honest effect changed (the approve control's): a race's unit.
        self.items_per_effect = items_per_effect

    def note(self, text: str) -> None:
        self._notes.append(text)

    @property
    def exchanged(self) -> tuple[Exchange, ...]:
        """The exchanges recorded so far, in order: a part names them by index."""
        return tuple(self._exchanges)

    def last_reply(self) -> Response | None:
        """The target's answer to the attack's last request, if the attack proper sent one."""
        attack = [e for e in self._exchanges if e.phase is Phase.ATTACK]
        return attack[-1].response if attack else None

    @property
    def effect_judged(self) -> bool:
        """Whether the technique said itself what an effect means (`effect_means`)."""
        return self._effect_verdict is not None

    def finding(self, verdict: Verdict, message: str, *, layer: Layer | None = None) -> None:
        """Something the target showed the human, judged without looking at the disk.

        `layer`: whose rule the finding breaks, when a layer's (a form sent to a client that
        declared none breaks the protocol's); else the result names no layer.
        """
        self._findings.append((verdict, message))
        if layer is not None:
            self._finding_layer = self._finding_layer or layer

    def single_use(
        self,
        pairs: Sequence[tuple[Exchange, Exchange]],
        taken_racing: int,
        taken: int,
        if_none_taken: str = "inconclusive",
        counted_by: str = "restorer",
    ) -> None:
        """Record redemptions of one approval of which at most one may act; the verdict judges them.

        `pairs`: each racing redemption with the sequential replay on its process.
        """
        if counted_by == "probes" and self.items_per_effect > 1:
            self.note(
                f"one honest effect changed {self.items_per_effect} items (the approve control's): "
                "the effects are counted in that unit"
            )
        index = {id(e): i for i, e in enumerate(self._exchanges)}
        racing = tuple(index[id(redemption)] for redemption, _ in pairs)
        replays = tuple(index[id(replay)] for _, replay in pairs)
        self.record(SingleUse(racing, replays, taken_racing, taken, if_none_taken, counted_by))

    def asked_about(self) -> None:
        """A hostile value reached a question the person read: it was judged."""
        # Once per hostile value asked about (hundreds an attack): built directly, not by `replace`.
        record = self._parts.get(Asked)
        if isinstance(record, Asked):
            self._parts[Asked] = Asked(record.reached + 1, record.withheld, record.said)
        else:
            self._parts[Asked] = Asked(reached=1)

    def not_asked_about(self, value: str, said: str) -> None:
        """A hostile value got no question (refused, or answered without asking): `said` is the answer."""
        record = self.recorded(Asked) or Asked()
        kept = record.said if len(record.said) >= _ASKED_SAID_KEPT else (*record.said, (value, said))
        self.record(replace(record, withheld=record.withheld + 1, said=kept))

    def benign_twin(self, value: str, exchanges: Sequence[Exchange], reached: str) -> None:
        """Record the benign twin of this attack's hostile value: its calls, and how it reached the gate ("" if not)."""
        index = {id(e): i for i, e in enumerate(self._exchanges)}
        self.record(Twin(value, tuple(index[id(e)] for e in exchanges), reached))

    def before_the_change(self, value: str, exchanges: Sequence[Exchange], reached: str) -> None:
        """Record the attack's own call before the harness changed the world (a swap): how it reached the gate."""
        index = {id(e): i for i, e in enumerate(self._exchanges)}
        self.record(BeforeTheChange(value, tuple(index[id(e)] for e in exchanges), reached))

    def approvals(self, calls: int, accepted: int, taken: int) -> None:
        """Record concurrent calls over the back channel: the person's accepts and the effects they had."""
        self.record(Approvals(calls, accepted, taken))

    def drifted(self, values: Sequence[Any]) -> None:
        """Record what a change after the question brought into the subject; the verdict looks for it in the effects."""
        self.record(Drift(tuple(values)))

    def effect_means(self, verdict: Verdict, why: str) -> None:
        """What an effect during the attack means, when not `vulnerable` (a flow no human was asked in: weak)."""
        self._effect_verdict = (verdict, why)

    def only_the_case_counts(self) -> None:
        """With no honest flow, only the case's own files are the action's effect (not a log beside them)."""
        self._only_the_case_counts = True

    def record(self, part: Part) -> None:
        """Put a family's own evidence on the transcript (one part of each kind: a later one replaces it)."""
        self._parts[type(part)] = part

    def recorded(self, kind: type[PartT]) -> PartT | None:
        """The part of `kind` recorded so far, if any."""
        found = self._parts.get(kind)
        return found if isinstance(found, kind) else None

    def setup_failed(self, reason: str) -> None:
        self._setup_failure = self._setup_failure or reason

    def not_applicable(self, reason: str) -> None:
        self._not_applicable = self._not_applicable or reason

    @property
    def failed(self) -> bool:
        return self._setup_failure is not None or self._not_applicable is not None
