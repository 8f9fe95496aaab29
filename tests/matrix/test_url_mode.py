"""URL-mode elicitation, proven both ways on the URL-mode reference server.

The person opens the page the server sends and completes it (the harness plays
them, on loopback only); an accept is their consent. Each flaw removes one
defence and is caught by its family; the careful server is refused by every
attack in the catalogue, at the tool, and its honest flow works.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import Shared, forked
from deadline import deadline

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.environment import TargetEnv
from mcp_confirm_audit.profile.headers import Header
from mcp_confirm_audit.profile.loader import Profile
from mcp_confirm_audit.profile.url_mode import UrlPeople

SERVER = Path(__file__).resolve().parents[2] / "targets" / "url_mode" / "server.py"
ALICE, BOB = "alice-session-0123456789", "bob-session-9876543210"
PEOPLE = UrlPeople(
    person=(Header("Cookie", f"session={ALICE}"),), other_person=(Header("Cookie", f"session={BOB}"),)
)
URL_FAMILIES = ("url-user-data", "url-preauthenticated", "url-consent", "url-identity", "url-abandoned")
V, W = Verdict.VULNERABLE, Verdict.WEAK

AuditFn = Callable[..., AuditRun]


@pytest.fixture(scope="module")
def audit_url(catalogue: Catalogue, generation: Any) -> AuditFn:
    def audit(
        *flaws: str,
        families: tuple[str, ...] | None = URL_FAMILIES,
        attacks: frozenset[str] | None = None,
        **settings: Any,
    ) -> AuditRun:
        """The server with `flaws`, over `families` (None: all), or only the `attacks` named of them."""
        words = [sys.executable, str(SERVER), "--root", "{root}", "--people-env", "URL_MODE_PEOPLE"]
        for flaw in flaws:
            words += ["--flaw", flaw]
        settings.setdefault("url_elicitation", PEOPLE)
        profile = Profile(
            command=shlex.join(words),
            tool="send_payment",
            args={"recipient": "acme", "amount_cents": 500, "memo": "rent"},
            # The sessions are credentials: marked secret, so they are scrubbed from every text kept.
            env=TargetEnv({"URL_MODE_PEOPLE": f"alice={ALICE},bob={BOB}"}, frozenset({"URL_MODE_PEOPLE"})),
            call_timeout=settings.pop("call_timeout", 10.0),
            **settings,
        )
        return run_audit(
            forked(profile),
            catalogue=catalogue,
            select=lambda spec: (
                (families is None or spec.family in families) and (attacks is None or spec.id in attacks)
            ),
            generation=generation,
        )

    return audit


@pytest.fixture(scope="module")
def careful_whole(audit_url: AuditFn, across_workers: Shared[AuditRun]) -> AuditRun:
    """The careful server over the whole catalogue, audited once in the run for the tests that read it."""
    return across_workers("url-mode-careful-whole", lambda: audit_url(families=None))


def verdicts(run: AuditRun) -> dict[str, Verdict]:
    return {r.id: r.verdict for r in run.results}


def test_the_careful_server_completes_the_honest_flow_and_refuses_the_whole_catalogue(
    careful_whole: AuditRun,
) -> None:
    run = careful_whole
    assert all(c.passed for c in run.controls), run.controls
    approve = next(c for c in run.controls if c.name == "approve")
    # The person opened the page and completed it before the accept: the payment shows.
    assert "tool:list_payments" in approve.detail
    # A replay's honest redemption went the same way: the person completed the page, then the client accepted.
    replay = run.by_id()["MCA-REPLAY-001"]
    assert any("the person: POST" in line and "HTTP 200" in line for line in replay.evidence), replay.evidence
    found = [r for r in run.results if r.verdict in (V, W, Verdict.INCONCLUSIVE)]
    assert found == [], [(r.id, r.verdict, r.reason) for r in found]
    for result in run.results:
        if result.family in URL_FAMILIES:
            assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), result
    # No credential of either person's browser reaches any evidence.
    text = repr([r.as_dict() for r in run.results]) + repr([c.as_dict() for c in run.controls])
    assert ALICE not in text
    assert BOB not in text


@pytest.mark.parametrize(
    ("flaw", "caught"),
    [
        ("user-data-in-url", {"MCA-URLDATA-001": V}),
        # A page that asks nobody who they are lets the agent and another person alike complete it.
        ("preauthenticated-url", {"MCA-URLPREAUTH-001": V, "MCA-URLWHO-001": V}),
        # An accept that pays at once pays whoever did or did not open the page.
        (
            "acts-on-accept",
            {"MCA-URLCONSENT-001": V, "MCA-URLPREAUTH-001": V, "MCA-URLWHO-001": V, "MCA-URLBOUND-001": V},
        ),
        ("any-person-completes", {"MCA-URLWHO-001": V}),
    ],
)
def test_each_url_mode_flaw_is_caught_by_its_family(
    audit_url: AuditFn, flaw: str, caught: dict[str, Verdict]
) -> None:
    run = audit_url(flaw)
    assert all(c.passed for c in run.controls), run.controls
    found = {i: v for i, v in verdicts(run).items() if v in (V, W)}
    assert found == caught, [(r.id, r.verdict, r.reason) for r in run.results]
    for result in run.results:
        if result.id not in caught:
            assert result.verdict is Verdict.REFUSED, result


def test_every_url_mode_attack_is_caught_by_some_flaw_here(catalogue: Catalogue) -> None:
    caught = {
        "MCA-URLDATA-001",
        "MCA-URLPREAUTH-001",
        "MCA-URLCONSENT-001",
        "MCA-URLWHO-001",
        "MCA-URLBOUND-001",
    }
    assert {a.id for a in catalogue.active if a.family in URL_FAMILIES} == caught


def test_a_server_that_waits_for_the_page_with_no_bound_is_weak(audit_url: AuditFn) -> None:
    # Short: every accept to a page nobody completed hangs until the bound.
    run = audit_url("waits-forever", call_timeout=2.0)
    assert all(c.passed for c in run.controls), run.controls
    bound = next(r for r in run.results if r.id == "MCA-URLBOUND-001")
    assert bound.verdict is W, bound
    assert f"did not answer within {deadline(2):g}s" in bound.reason  # forked() scales call_timeout
    assert {r.id for r in run.results if r.verdict in (V, W)} == {"MCA-URLBOUND-001"}


def test_the_page_the_person_reads_goes_through_the_question_checks(
    audit_url: AuditFn, careful_whole: AuditRun
) -> None:
    # The careful page: prompt-forging's attacks in the whole catalogue's audit, each asked and refused.
    careful = [r for r in careful_whole.results if r.family == "prompt-forging"]
    assert careful
    assert {r.verdict for r in careful} <= {Verdict.REFUSED, Verdict.NOT_APPLICABLE}, careful
    # The flawed page: the two attacks read below (its whole prompt-forging is the corpus's url-mode case).
    raw = audit_url(
        "raw-page", families=("prompt-forging",), attacks=frozenset({"MCA-PROMPT-006", "MCA-PROMPT-007"})
    )
    markup = next(r for r in raw.results if r.id == "MCA-PROMPT-007")
    assert markup.verdict in (V, W), markup
    assert "clickable" in markup.reason
    lines = next(r for r in raw.results if r.id == "MCA-PROMPT-006")
    assert lines.verdict is V, lines


def test_without_another_person_the_identity_family_says_how_to_name_one(audit_url: AuditFn) -> None:
    run = audit_url(families=("url-identity",), url_elicitation=UrlPeople(person=PEOPLE.person))
    (result,) = run.results
    assert result.verdict is Verdict.NOT_APPLICABLE
    assert "url_elicitation.other_person" in result.reason


def test_url_families_do_not_apply_to_a_form(audit_reference: AuditFn) -> None:
    run = audit_reference(families=URL_FAMILIES)
    for result in run.results:
        assert result.verdict is Verdict.NOT_APPLICABLE, result
        assert "not URL-mode elicitation" in result.reason
