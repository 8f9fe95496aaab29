"""MRTR approved somewhere else: `input_required`, a link posted to a webhook, the retry with the state.

The reference server with `--approve-link {sink}/hook` (targets/reference/approve_link.py)
answers `input_required` as always, posts the person an approve link, and acts on the
client's retry only once that link was followed. `targets/elsewhere-mrtr-link.yaml` says
so with `confirmation.mrtr.human` (read the link at the sink, follow it): the person's steps
are taken before every honest retry, so the MRTR families (replay, forged state, the
answers) run over it as over any MRTR server, and url-consent has the client accept with
nobody following the link.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import forked

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Verdict
from mcp_confirm_audit.profile.loader import load_profile, resolve_profile

TARGETS = Path(__file__).resolve().parents[2] / "targets"
SERVER = TARGETS / "reference" / "server.py"
FAMILIES = frozenset({"url-consent", "replay", "forged-state", "consent"})
# Each flaw, and the family (of FAMILIES) that must catch it: this shape's own and an MRTR state flaw.
CAUGHT_BY = {"link-unchecked": "url-consent", "no-ledger": "replay"}


def _audit(catalogue: Catalogue, *flaws: str, style: tuple[str, ...] = ()) -> AuditRun:
    profile = load_profile(TARGETS / "elsewhere-mrtr-link.yaml")
    words = [sys.executable, str(SERVER), "--root", "{root}", "--approve-link", "{sink}/hook", *style]
    for flaw in flaws:
        words += ["--flaw", flaw]
    profile = forked(resolve_profile(replace(profile), shlex.join(words), None))

    def select(spec: AttackSpec) -> bool:
        return spec.family in FAMILIES

    return run_audit(profile, catalogue=catalogue, select=select)


def _judged(run: AuditRun) -> dict[str, set[Verdict]]:
    found: dict[str, set[Verdict]] = {}
    for result in run.results:
        if result.verdict is not Verdict.NOT_APPLICABLE:
            found.setdefault(result.family, set()).add(result.verdict)
    return found


# The careful styles: the in-band answer read as well as the link, or the link alone deciding (the
# in-band answer's form never read, as mcp-airlock's oob mode does).
STYLES = {"reads-the-answer": (), "link-decides": ("--link-decides",)}
# The consent answers that accept in a form of their own: the person approves on the link before the
# retry, so their form is not the gate (not applicable, whatever the style).
ACCEPTING_FORMS = ("MCA-CONSENT-008",)


@pytest.mark.parametrize("style", sorted(STYLES))
def test_the_careful_proxy_refuses_every_mrtr_family_and_the_person_followed_each_link(
    catalogue: Catalogue, style: str
) -> None:
    run = _audit(catalogue, style=STYLES[style])
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail
    assert _judged(run) == {family: {Verdict.REFUSED} for family in FAMILIES}, [
        (r.id, r.verdict, r.reason) for r in run.results if r.verdict is not Verdict.REFUSED
    ]
    said = " ".join(line for r in run.results for line in r.evidence)
    # The person read the link at the sink and followed it before the honest retry; nobody did in url-consent.
    assert "the person, on their own channel: read sink (approve_url): http://127.0.0.1:" in said
    assert "the person, on their own channel: POST http://127.0.0.1:" in said
    consent = " ".join(run.by_id()["MCA-URLCONSENT-001"].evidence)
    assert "nobody followed the link" in consent
    assert "the person, on their own channel" not in consent
    # The answer under a key never asked: acted on by the link-decides style, as the person approved
    # it on the link; its form is not their consent (mcp-airlock's false CONSENT-008).
    for attack_id in ACCEPTING_FORMS:
        result = run.by_id()[attack_id]
        assert result.verdict is Verdict.NOT_APPLICABLE, (result.verdict, result.reason)
        assert "on their own channel (confirmation.mrtr.human)" in result.reason
    # A decline in the in-band answer still closes the question, in either style.
    assert run.by_id()["MCA-CONSENT-001"].verdict is Verdict.REFUSED


@pytest.mark.parametrize("flaw", sorted(CAUGHT_BY))
def test_each_flaw_is_caught_by_its_family_and_fools_no_other(catalogue: Catalogue, flaw: str) -> None:
    judged = _judged(_audit(catalogue, flaw))
    assert Verdict.VULNERABLE in judged.pop(CAUGHT_BY[flaw]), judged
    assert all(verdicts == {Verdict.REFUSED} for verdicts in judged.values()), judged
