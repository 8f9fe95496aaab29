"""ungated hands another tool the id the gated call itself staged, both ways, on the two staging servers.

`stage_invoice` stages an invoice and returns its `invoice_id` (a pending flow, `id_from: invoice_id`);
a person approves it with a CLI, and `post_invoice(invoice_id)` posts it. No setup call mints that id:
the gated call does. ungated used to give `edit_invoice(invoice_id)` a made-up id ("not an invoice
id") and end inconclusive on the careful pair. It now stages the gated call plainly, as the honest
flow's first step, and gives the id that staging returned to every other tool taking it by the name
the flow's own calls give it (`post_invoice`'s `invoice_id: "{id}"`), a fresh staging per tool.
With `--rush` the post server offers `rush_invoice(invoice_id)`: careful, it refuses an invoice no
person approved; flawed (`rushes-unapproved`), it posts the id the agent just staged, nobody asked. With `--words queue`
the careful pair says every refusal as a posting queue does ("not in the posting queue"): another style.
That refusal is learned by the decline control (the person declines, then post_invoice gets the declined
id), so the attacks that end with it are refused, not inconclusive (the last test).
"""

from __future__ import annotations

import pytest
from conftest import MATRIX_GENERATION
from test_two_servers import two_servers

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import Layer, Verdict

UNGATED = "MCA-UNGATED-001"


@pytest.mark.parametrize(
    ("flaws", "words", "verdict", "layer"),
    [
        (("rushes-unapproved",), "approval", Verdict.VULNERABLE, Layer.NONE),
        ((), "approval", Verdict.REFUSED, Layer.TOOL),
        # The careful pair in another style: every refusal said as a posting queue says it, naming no approval.
        ((), "queue", Verdict.REFUSED, Layer.TOOL),
    ],
    ids=[
        "rush-posts-the-staged-id-unasked",
        "careful-rush-refuses-and-edit-moves-nothing-at-the-gate",
        "careful-in-queue-words",
    ],
)
def test_ungated_gives_other_tools_the_id_the_gated_call_staged(
    catalogue: Catalogue, flaws: tuple[str, ...], words: str, verdict: Verdict, layer: Layer
) -> None:
    run = run_audit(
        # The staging pair of test_two_servers, the post server offering rush_invoice (--rush).
        two_servers(*flaws, words=words, edits="open", post_options=("--rush",)),
        catalogue=catalogue,
        select=lambda spec: spec.id == UNGATED,
        generation=MATRIX_GENERATION,
    )
    assert all(c.passed for c in run.controls if c.name == "approve"), run.controls
    result = run.by_id()[UNGATED]
    assert (result.verdict, result.layer) == (verdict, layer), (result.reason, result.evidence)
    calls = [line for line in result.evidence if line.startswith("[attack]") and ", plainly ->" in line]
    # Every other tool that takes an invoice id got one the gated call staged, never a made-up one.
    assert calls, result.evidence
    for line in calls:
        assert '"invoice_id": "inv_' in line, line
        assert "not an invoice id" not in line, line
    staged = [line for line in result.evidence if "stage_invoice(" in line and '"pending_approval' in line]
    assert staged, result.evidence
    if verdict is Verdict.VULNERABLE:
        assert "rush_invoice acted with no confirmation" in result.reason, result.reason
    else:
        # rush_invoice (destructive, first) refuses the unapproved id; edit_invoice, given a staging of
        # its own, changes the staged invoice and nothing where posting shows.
        refused = "is not approved" if words == "approval" else "is not in the posting queue"
        assert any("rush_invoice(" in line and refused in line for line in calls), calls
        assert any("edit_invoice(" in line and '"status\\": \\"edited' in line for line in calls), calls
        assert "nothing moved where the gated action's effect shows" in result.reason, result.reason


# The attacks that end with the agent's own execute step on an id no person approved.
EXECUTES_UNAPPROVED = ("MCA-OOBSELF-001", "MCA-OOBMOVE-001", "MCA-SELFAPPROVE-001", "MCA-TOKREUSE-002")


@pytest.mark.parametrize(
    ("flaws", "verdict", "layer"),
    [
        ((), Verdict.REFUSED, Layer.TOOL),
        (("posts-unapproved",), Verdict.VULNERABLE, Layer.NONE),
    ],
    ids=["careful-in-queue-words", "posts-unapproved-in-queue-words"],
)
def test_the_execute_step_after_a_decline_teaches_how_the_target_refuses(
    catalogue: Catalogue, flaws: tuple[str, ...], verdict: Verdict, layer: Layer
) -> None:
    """The decline control sends post_invoice the id the person declined: its reply is the gate's refusal.

    With `--words queue` that refusal names no approval ("not in the posting queue"), so before the
    control learned it, every attack that ends with the same reply was inconclusive on the careful pair.
    Flawed (`posts-unapproved`), the execute after the decline posts: no refusal is learned, the control
    says it is token-replay's finding, and each attack is vulnerable by what moved.
    """
    run = run_audit(
        two_servers(*flaws, words="queue", edits="open"),
        catalogue=catalogue,
        select=lambda spec: spec.id in EXECUTES_UNAPPROVED,
        generation=MATRIX_GENERATION,
    )
    controls = {c.name: c for c in run.controls}
    assert controls["approve"].passed, run.controls
    decline = controls["decline"]
    learned = controls["refusals"].detail
    if verdict is Verdict.REFUSED:
        assert (decline.passed, decline.applicable) == (True, True), decline
        assert "is not in the posting queue" in decline.detail, decline
        assert "learned from decline: refused 'invoice is not in the posting queue" in learned, learned
    else:
        assert (decline.passed, decline.applicable) == (True, False), decline
        assert "post_invoice acted on the id the person declined" in decline.detail, decline
        assert "token-replay" in decline.detail, decline
        assert "learned from decline" not in learned, learned
    results = run.by_id()
    for attack in EXECUTES_UNAPPROVED:
        result = results[attack]
        assert (result.verdict, result.layer) == (verdict, layer), (attack, result.reason, result.evidence)
        if verdict is Verdict.REFUSED:
            assert "is not in the posting queue" in result.reason, (attack, result.reason)
        else:
            assert "ledger.jsonl" in result.reason, (attack, result.reason)
