"""A family's own evidence is a part read through the reading registered with it: one per kind, none missing."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from test_verdict import DONE, OK, SPEC, TREE, exchange

from mcp_confirm_audit.engine.reading import Judged, Reading, Seen, reading_of, reads
from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.models import Layer, Part, Transcript, Verdict


@dataclass(frozen=True, slots=True)
class Counted(Part):
    taken: int


@reads(Counted)
class ReadCounted(Reading[Counted]):
    def still(self, part: Counted, seen: Seen) -> Judged | None:
        if part.taken > 1:
            return Verdict.VULNERABLE, Layer.NONE, f"taken {part.taken} times"
        return None

    def evidence(self, part: Counted) -> tuple[str, ...]:
        return (f"counted: {part.taken}",)


@dataclass(frozen=True, slots=True)
class Unread(Part):
    pass


def test_a_new_part_is_judged_by_its_own_reading_and_the_common_rules_otherwise() -> None:
    twice = judge(
        SPEC,
        Transcript("MCA-TEST-001", "delete_file", OK, (exchange(DONE),), TREE, TREE, parts=(Counted(2),)),
    )
    assert (twice.verdict, twice.reason) == (Verdict.VULNERABLE, "taken 2 times")
    assert "counted: 2" in twice.evidence
    # The reading says nothing: the common rule reads the reply, as for any attack.
    once = judge(
        SPEC,
        Transcript("MCA-TEST-001", "delete_file", OK, (exchange(DONE),), TREE, TREE, parts=(Counted(1),)),
    )
    assert (once.verdict, once.layer) == (Verdict.REFUSED, Layer.TOOL)


def test_a_part_no_reading_registers_is_one_line_naming_it() -> None:
    with pytest.raises(
        LookupError, match=r"^no reading registers Unread: decorate one with @reads\(Unread\)$"
    ):
        reading_of(Unread())


def test_a_second_reading_of_one_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="part Counted is read twice"):

        @reads(Counted)
        class Another(Reading[Counted]):
            pass
