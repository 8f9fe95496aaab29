"""A pending flow whose person's approval is itself the action: their declared "no" is run, and must not act.

With no execute step, nothing of the agent's follows a decline, so the decline control once said "a
pending flow has no decline" and never ran the profile's `decline:` steps (found by a newcomer who had
declared them). It runs them now: the person declines on their channel, and nothing may move. The
booking desk (targets/desk, `--asks pending-approval --approval acts`) books what its person approved
when it next reads its queue; with `--flaw decline-acts` it books what they declined as well.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from conftest import forked

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.channels.human import Command
from mcp_confirm_audit.confirmations.pending import Human, Pending
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import ControlResult
from mcp_confirm_audit.profile.loader import Profile

DESK = Path(__file__).resolve().parents[2] / "targets" / "desk" / "server.py"
INBOX = "{root}/../desk-inbox"


def _audit(catalogue: Catalogue, generation: object, *flaws: str) -> AuditRun:
    words = [
        sys.executable,
        str(DESK),
        "--root",
        "{root}",
        "--asks",
        "pending-approval",
        "--approval",
        "acts",
    ]
    for flaw in flaws:
        words += ["--flaw", flaw]
    person = Human(
        approve=(Command(f"touch {INBOX}/{{id}}.approved"),),
        decline=(Command(f"touch {INBOX}/{{id}}.declined"),),
    )
    profile = forked(
        Profile(
            command=shlex.join(words),
            call_timeout=10.0,
            tool="book",
            isolation="process",
            confirmation=Pending(id_from="ref", human=person),
        )
    )
    # Controls are what this proves: one cheap family keeps the run short.
    return run_audit(
        profile,
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.family == "token-replay",
    )


def _decline(run: AuditRun) -> ControlResult:
    found = [c for c in run.controls if c.tool == "book" and c.name == "decline"]
    assert len(found) == 1, run.controls
    return found[0]


def test_the_persons_declared_no_is_run_and_leaves_the_booking_unmade(
    catalogue: Catalogue, generation: object
) -> None:
    run = _audit(catalogue, generation)
    approve = [c for c in run.controls if c.tool == "book" and c.name == "approve"]
    assert approve, run.controls
    assert approve[0].passed, approve[0].detail
    decline = _decline(run)
    assert decline.applicable, decline.detail
    assert decline.passed, decline.detail
    assert decline.detail.startswith("the person declined on their channel: no effect"), decline.detail


def test_a_desk_that_books_what_its_person_declined_fails_the_decline_control(
    catalogue: Catalogue, generation: object
) -> None:
    run = _audit(catalogue, generation, "decline-acts")
    decline = _decline(run)
    assert decline.applicable, decline.detail
    assert not decline.passed, decline.detail
    assert decline.detail.startswith("the action took effect on the person's decline"), decline.detail
    assert "bookings" in decline.detail, decline.detail
