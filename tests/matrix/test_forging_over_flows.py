"""A question over a flow about an action that names no file: hostile order references, proven both ways.

The order desk (targets/orders/server.py) cancels an order by the shop's reference,
confirmed by a token, by a pending id the person approves on their own channel, or by
the person at the server's terminal. What the person reads names the reference, so a
hostile reference goes into `order_id` and what they read (the preview's text, what their
own `show` command prints about a pending request, the terminal's prompt) is judged
exactly as a question about a hostile file name is. The
desk that shows the reference raw is caught over every flow; the careful desk, in its
JSON style and in a code-point style of its own, has no prompt-forging finding.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from conftest import MATRIX_GENERATION, PERSON_STEPS_GENERATION
from test_confirmation_kinds import HUMAN_CHANNEL_SHOWN

from mcp_confirm_audit.catalogue.generation import CI_SEED, Generation
from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

V, W, R, NA = Verdict.VULNERABLE, Verdict.WEAK, Verdict.REFUSED, Verdict.NOT_APPLICABLE
DESK = Path(__file__).resolve().parents[2] / "targets" / "orders" / "server.py"
FLOWS = ("token", "pending", "terminal")
# The mechanism each flow is recorded as: a call that waits while the person answers is `waits`.
RECORDED_AS = {"token": "token", "pending": "pending", "terminal": "waits"}
STYLES = ("json", "code-points")
# The person at the terminal: asked on the server's own /dev/tty, under the harness's pseudo-terminal.
TERMINAL = {
    "tty": True,
    "confirmation": {
        "kind": "waits",
        "waits": {
            "human": [{"terminal": {"expect": r"allow\? \[y/N\] ", "answer": "y"}}],
            "decline": [{"terminal": {"expect": r"allow\? \[y/N\] ", "answer": "n"}}],
        },
    },
}
# Every reference costs the person's steps at the terminal: a few generated ones beside the named, a
# failing one reported as drawn (PERSON_STEPS_GENERATION, tests/matrix/conftest.py).
FEW_NAMES = Generation(examples=3, seed=CI_SEED, shrink_tries=0)
# A flow shows text, not a form: the form checks have nothing to look at.
NO_FORM = {"MCA-PROMPT-010", "MCA-PROMPT-011"}


def audit(
    catalogue: Catalogue,
    mechanism: str,
    style: str = "json",
    *flaws: str,
    refuses: str = "",
    only: str | None = None,
) -> AuditRun:
    """prompt-forging (or the attack `only`) on cancel_order; the terminal over stdio under a pty."""
    if mechanism == "terminal":
        words = [sys.executable, str(DESK), "--root", "{root}", "--mechanism", mechanism, "--style", style]
        words += ["--ttl", "5", *(w for flaw in flaws for w in ("--flaw", flaw))]
        target: dict[str, object] = {"command": shlex.join(words), **TERMINAL}
    else:
        factory = {"mechanism": mechanism, "style": style, "flaws": list(flaws), "refuses": refuses}
        target = {"command": f"py:{DESK}:build_server", "factory_args": factory}
        target.update(HUMAN_CHANNEL_SHOWN if mechanism == "pending" else {})
    profile = profile_from_mapping({**target, "tool": "cancel_order", "call_timeout": 10.0}, source="test")

    def select(spec: AttackSpec) -> bool:
        return spec.id == only if only else spec.family == "prompt-forging"

    # Over pending, every reference asked about is the person's `show` command: a process of its own.
    generation = {"terminal": FEW_NAMES, "pending": PERSON_STEPS_GENERATION}.get(mechanism, MATRIX_GENERATION)
    return run_audit(profile, catalogue=catalogue, select=select, generation=generation)


def _found(run: AuditRun) -> dict[str, Verdict]:
    return {r.id: r.verdict for r in run.results if r.verdict in (V, W)}


@pytest.mark.parametrize("mechanism", FLOWS)
def test_a_reference_shown_raw_is_caught_over_every_flow(catalogue: Catalogue, mechanism: str) -> None:
    run = audit(catalogue, mechanism, "json", "raw-order-id")
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail
    by_id = run.by_id()
    for n in range(1, 7):
        result = by_id[f"MCA-PROMPT-00{n}"]
        assert (result.verdict, result.mechanism) == (V, RECORDED_AS[mechanism]), (
            result.id,
            result.reason,
            result.evidence,
        )
        assert any("hostile strings go into 'order_id'" in line for line in result.evidence), result.evidence
    found = _found(run)
    # A preview's sentence renders markup; a terminal renders none, so a link in it is no finding there
    # (the person's own view of a pending request is what a command printed, read on their terminal).
    assert found.pop("MCA-PROMPT-007", None) is (None if mechanism in ("terminal", "pending") else W)
    assert set(found) == {f"MCA-PROMPT-00{n}" for n in range(1, 7)}, found


# The terminal's prompt writes the reference with the same Shown.reference() as the code-points style's
# preview sentences (proven inert over token and pending): over the terminal, whose reading is proven
# both ways here (raw above, careful JSON below), one careful style is enough.
CAREFUL = [(m, s) for m in FLOWS for s in STYLES if (m, s) != ("terminal", "code-points")]


@pytest.mark.parametrize(("mechanism", "style"), CAREFUL)
def test_the_careful_desk_in_each_style_shows_every_reference_inertly(
    catalogue: Catalogue, mechanism: str, style: str
) -> None:
    run = audit(catalogue, mechanism, style)
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail
    for result in run.results:
        if result.id in NO_FORM:
            assert result.verdict is NA, result
            continue
        assert (result.verdict, result.layer) == (R, Layer.TOOL), (result.id, result.reason, result.evidence)
        # Every reference was previewed and read: refused because nothing it showed was wrong.
        assert not any("not asked, so not judged" in line for line in result.evidence), result.evidence
        assert any("hostile strings go into 'order_id'" in line for line in result.evidence), result.evidence


@pytest.mark.parametrize(
    ("mechanism", "flaws", "expected"),
    [("token", (), R), ("pending", (), R), ("pending", ("raw-order-id",), V)],
)
def test_a_reference_refused_before_anything_was_previewed_is_not_judged(
    catalogue: Catalogue, mechanism: str, flaws: tuple[str, ...], expected: Verdict
) -> None:
    # The desk refuses a reference with a right-to-left override in an ordinary result that quotes it
    # raw and carries a request_id: nobody read a question about it, so it is noted and never judged.
    run = audit(catalogue, mechanism, "json", *flaws, refuses="\u202e", only="MCA-PROMPT-002")
    result = run.by_id()["MCA-PROMPT-002"]
    assert result.verdict is expected, (result.reason, result.evidence)
    assert "invoice\\u202efdp.exe" not in result.reason
    notes = [line for line in result.evidence if "not asked, so not judged" in line]
    assert notes, result.evidence
    assert "not an order reference" in notes[0]
    if expected is V:
        # The references it did preview still reach the question raw.
        assert "bidi control" in result.reason
