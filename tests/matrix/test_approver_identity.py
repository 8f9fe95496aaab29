"""Who approves: an approval given by another identity must not count for the person asked.

`targets/elsewhere-approver.yaml` plays alice, the approver the webhook goes to, following its link
with her own token; mallory, another user of the same approval system (`principals:`), follows the
same link with hers. The careful server refuses her; `--flaw any-approver` takes any user's approval.
Each run is one stdio process (forked from the SDK's zygote) and the one family selected.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import MATRIX_GENERATION, forked

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.channels.http import HttpCall
from mcp_confirm_audit.channels.human import Person
from mcp_confirm_audit.confirmations.pending import Pending
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.headers import Header
from mcp_confirm_audit.profile.loader import Profile, load_profile, profile_from_mapping, resolve_profile
from mcp_confirm_audit.techniques.approver_identity import _as_another

TARGETS = Path(__file__).resolve().parents[2] / "targets"
SERVER = TARGETS / "elsewhere" / "server.py"
ID = "MCA-OOBWHO-001"


@pytest.fixture(autouse=True)
def tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALICE_TOKEN", "alice-5c1e-token")
    monkeypatch.setenv("MALLORY_TOKEN", "mallory-77d2-token")


def _audit(catalogue: Catalogue, *flaws: str, profile: Profile | None = None) -> AuditRun:
    profile = profile or load_profile(TARGETS / "elsewhere-approver.yaml")
    words = [sys.executable, str(SERVER), "--root", "{root}", "--channel", "webhook"]
    words += ["--webhook", "{sink}/hook", "--approver", "alice"]
    for flaw in flaws:
        words += ["--flaw", flaw]
    # Forked from the SDK's zygote (tests/matrix/conftest.py): a process of its own, without importing the SDK again.
    resolved = forked(resolve_profile(profile, shlex.join(words), None))
    return run_audit(
        resolved,
        catalogue=catalogue,
        select=lambda spec: spec.family == "approver-identity",
        generation=MATRIX_GENERATION,
    )


def test_the_careful_server_refuses_an_approval_by_another_user(catalogue: Catalogue) -> None:
    run = _audit(catalogue)
    # Alice's own approval acts: the honest flow is proven with her token on the link.
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail
    result = run.by_id()[ID]
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), (result.reason, result.evidence)
    said = " ".join(result.evidence)
    # Mallory really followed the link and was turned away by the approval system, not by a typo.
    assert "turned principal mallory away" in said
    assert "mallory is not the approver of this request" in said
    assert "mallory-77d2-token" not in said
    assert "alice-5c1e-token" not in said


def test_an_approve_link_that_takes_any_user_is_caught(catalogue: Catalogue) -> None:
    run = _audit(catalogue, "any-approver")
    result = run.by_id()[ID]
    assert result.verdict is Verdict.VULNERABLE, (result.reason, result.evidence)
    assert "principal mallory approves in the person's place" in " ".join(result.evidence)


def test_without_principals_or_a_person_it_says_why_it_cannot_run(catalogue: Catalogue) -> None:
    profile = load_profile(TARGETS / "elsewhere-approver.yaml")
    run = _audit(catalogue, profile=replace(profile, principals={}))
    result = run.by_id()[ID]
    assert result.verdict is Verdict.NOT_APPLICABLE
    assert "principals:" in result.reason


def _person(*steps: dict[str, object]) -> Person:
    """The person's steps as a profile's `pending.human:` list says them, read by the profile's models."""
    pending = {"kind": "pending", "pending": {"human": list(steps)}}
    stated = profile_from_mapping({"command": "srv {root}", "confirmation": pending}, source="p.yaml")
    assert isinstance(stated.confirmation, Pending)
    assert stated.confirmation.human is not None
    return stated.confirmation.human


MALLORY = (Header("Authorization", "Bearer m"),)
FOLLOW = {"follow": {"link": "link", "method": "POST"}}
READ = {"read": {"from": "sink", "json": "approve_url"}, "save": "link"}


@pytest.mark.parametrize(
    ("steps", "says"),
    [
        ((READ, {"command": "approve-cli {id}"}), "send no request a principal's headers could go on"),
        ((READ, FOLLOW), "the person's own requests carry no credentials"),
        (
            (READ, {"follow": {"link": "link", "method": "POST", "headers": {"Authorization": "Bearer m"}}}),
            "its headers are exactly the person's",
        ),
    ],
)
def test_a_principal_that_cannot_stand_in_for_the_person_says_why(
    steps: tuple[dict[str, object], ...], says: str
) -> None:
    kept, why = _as_another(_person(*steps), MALLORY)
    assert kept == ()
    assert why is not None
    assert says in why


def test_every_request_of_the_person_carries_the_principals_headers_and_nothing_else_changes() -> None:
    alice = {"follow": {"link": "link", "headers": {"Authorization": "Bearer a", "X-Device": "d"}}}
    person = _person(READ, alice)
    kept, why = _as_another(person, MALLORY)
    assert why is None
    assert kept[0] == person.approve[0]
    assert isinstance(kept[1], HttpCall)
    assert kept[1].headers == MALLORY
    assert kept[1].link == "link"
