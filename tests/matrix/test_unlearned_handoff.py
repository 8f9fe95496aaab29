"""The "nothing waited" verdict rule on a real reference server (engine/verdict, `Signatures.unlearned`).

The notes reference server in the magnemo-mcp shape with no profile: `handoff` asks about whatever
waits and acts on it. With `vault`, the notes live outside the root, shared by every process of the
server (as magnemo-mcp's vault in the user's home): the approve control's yes keeps the one note that
waited, and from then on no process finds anything to ask about, nothing stages it again. Decline,
cancel and the accepted "no" neither ask nor act, in the old world and in a fresh one: no refusal
control could run, so nothing shows how this target refuses. An attack's ordinary reply with nothing
moved ("nothing waiting: nothing to ask") is then `inconclusive`, not "refused by the tool"; judged
without the controls' mark, the same recorded transcript reads `refused` by the tool, the verdict the
rule corrects (magnemo-mcp's SELFAPPROVE-001 and DOWNGRADE-001 on `handoff`).

The converse is the same server without the vault: each refusal control runs in a fresh target process
(isolation chosen), where the note waits again, so they ask and are answered. Nothing is marked
unlearned there (the old world's "could not be run" is not carried into the fresh one), and an ordinary
reply with nothing moved counts as `refused` by the tool, as does every attack its gate holds.

In process, one attack family or two: a handful of round trips each.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from conftest import MATRIX_GENERATION

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.confirmations import replies
from mcp_confirm_audit.engine.session import AuditSession
from mcp_confirm_audit.engine.verdict import judge
from mcp_confirm_audit.models import ControlResult, Layer, Phase, Result, Said, Transcript, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

NOTES = Path(__file__).resolve().parents[2] / "targets" / "notes" / "server.py"
ATTACKS = ("MCA-SELFAPPROVE-001", "MCA-DOWNGRADE-001", "MCA-CONSENT-001")
REFUSALS = ("decline", "cancel", "negative")
NOTHING_WAITS = "nothing waiting: nothing to ask"


def handoff(vault: Path | None) -> dict[str, Any]:
    """The magnemo-mcp shape, no answer_after: one note waits when the first process starts."""
    factory: dict[str, Any] = {"already_staged": ["Deploy checklist"], "answer_timeout": 10.0}
    if vault is not None:
        factory["vault"] = str(vault)
    return {
        "command": f"py:{NOTES}:build_server",
        "factory_args": factory,
        "protocol": "2025-11-25",
        "tool": "handoff",
        "args": {"cut": "the rest of the refactor"},
        "effect": [{"tool": "list_kept"}],
        "call_timeout": 10.0,
    }


def audit(
    catalogue: Catalogue, raw: dict[str, Any]
) -> tuple[dict[str, ControlResult], dict[str, tuple[Result, Transcript]]]:
    """The controls of `handoff`, then each of ATTACKS, with the transcript its verdict was judged on."""
    selected = [spec for spec in catalogue.active if spec.id in ATTACKS]
    session = AuditSession(profile_from_mapping(raw, source="test"), catalogue, MATRIX_GENERATION)
    session.start(selected)
    try:
        controls = {c.name: c for c in session.controls("handoff").results}
        runs = {spec.id: session.run(spec, "handoff") for spec in selected}
    finally:
        session.close()
    return controls, runs


def last_reply(transcript: Transcript) -> str:
    return [e for e in transcript.exchanges if e.phase is Phase.ATTACK][-1].response.text


def test_where_nothing_waited_to_be_asked_about_an_ordinary_reply_is_no_refusal(
    catalogue: Catalogue, tmp_path: Path
) -> None:
    controls, runs = audit(catalogue, handoff(tmp_path / "vault.json"))
    assert controls["approve"].passed, controls["approve"]
    for name in REFUSALS:
        assert (controls[name].passed, controls[name].applicable) == (True, False), controls[name]
        assert NOTHING_WAITS in controls[name].detail, controls[name]
    verdicts = {i: (r.verdict, r.layer) for i, (r, _) in runs.items()}
    assert verdicts == {
        # The agent's own calls and a client that declared no elicitation: the tool answered as it
        # does when nothing waits, nothing was kept, and nothing shows its gate held.
        "MCA-SELFAPPROVE-001": (Verdict.INCONCLUSIVE, None),
        "MCA-DOWNGRADE-001": (Verdict.INCONCLUSIVE, None),
        # Controls first: round one did not ask, so there was no answer to tamper with.
        "MCA-CONSENT-001": (Verdict.INCONCLUSIVE, None),
    }, {i: r.reason for i, (r, _) in runs.items()}
    for attack in ("MCA-SELFAPPROVE-001", "MCA-DOWNGRADE-001"):
        result, transcript = runs[attack]
        assert last_reply(transcript) == NOTHING_WAITS, transcript
        assert "nothing shows its gate refused" in result.reason, result.reason
        assert "the decline control could not be run" in result.reason, result.reason
        # Observed, not read from the reply: the kept list is what it was before the attack.
        assert transcript.observed_before == transcript.observed_after, transcript
        # The rule is what makes it so: the same recorded transcript, without the controls' mark that
        # nothing waited, is "refused by the tool" on the reply alone.
        assert transcript.signatures is not None
        assert transcript.signatures.unlearned
        unmarked = replace(transcript, signatures=replace(transcript.signatures, unlearned=""))
        spec = next(s for s in catalogue.active if s.id == attack)
        without = judge(spec, unmarked)
        assert (without.verdict, without.layer, without.reason) == (
            Verdict.REFUSED,
            Layer.TOOL,
            NOTHING_WAITS,
        )


def test_where_the_refusal_controls_ran_an_ordinary_reply_with_nothing_moved_is_the_tools_refusal(
    catalogue: Catalogue,
) -> None:
    controls, runs = audit(catalogue, handoff(None))
    assert all(c.passed for c in controls.values() if c.applicable), controls
    # The old world had nothing waiting; each refusal control ran again in a fresh process, where it asked.
    assert "isolation" in controls, controls
    for name in REFUSALS:
        assert controls[name].applicable, controls[name]
    for _, transcript in runs.values():
        assert transcript.signatures is not None
        assert transcript.signatures.learned(), transcript.signatures
        assert transcript.signatures.unlearned == "", transcript.signatures
    verdicts = {i: (r.verdict, r.layer) for i, (r, _) in runs.items()}
    assert verdicts == {
        "MCA-SELFAPPROVE-001": (Verdict.REFUSED, Layer.TOOL),  # asked again instead of acting
        "MCA-DOWNGRADE-001": (Verdict.REFUSED, Layer.PROTOCOL),  # no form to a client that cannot answer it
        "MCA-CONSENT-001": (Verdict.REFUSED, Layer.TOOL),
    }, {i: r.reason for i, (r, _) in runs.items()}
    # An ordinary reply (a success, not an error) with nothing kept: the gate's, as its decline showed.
    result, transcript = runs["MCA-CONSENT-001"]
    decisive = [e for e in transcript.exchanges if e.phase is Phase.ATTACK][-1].response
    assert replies.said(decisive) is Said.ACTED, decisive
    assert transcript.observed_before == transcript.observed_after, transcript
    assert result.reason == "the person said no: every note left for later"
