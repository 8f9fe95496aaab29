"""Hostile text inside a structured value, and no verdict from questions never asked: proven both ways.

The order desk's `shop(command)` (targets/orders/server.py `--command`) takes a command line
that must read `shop cancel <order reference>` and refuses anything else before asking, as a
CLI wrapper does (a real one: `call_aws(cli_command)`). A hostile value sent outright is no
command, so it must go inside the plain one (`shop cancel <hostile>`) to reach a question:
then the desk that shows the command raw is caught, and the careful desk is refused. A desk
that refuses every hostile value before asking showed the person nothing: inconclusive, never
refused. And a refusal returned as JSON text by a tool typed `-> str`, which the SDK wraps as
`{"result": "<text>"}`, is the same refusal as the object.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import MATRIX_GENERATION
from test_forging_over_flows import DESK

from mcp_confirm_audit.catalogue.characters import LINE_BREAKS
from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

V, W, R, INC, NA = (
    Verdict.VULNERABLE,
    Verdict.WEAK,
    Verdict.REFUSED,
    Verdict.INCONCLUSIVE,
    Verdict.NOT_APPLICABLE,
)
# The desk asks the person itself (MRTR, or elicitation on a legacy connection), or hands out a token.
MECHANISMS = ("ask", "token")
RECORDED_AS = {"ask": "mrtr", "token": "token"}
# A token flow shows text, not a form: the form checks have nothing to look at there.
NO_FORM = {"MCA-PROMPT-010", "MCA-PROMPT-011"}


def audit(
    catalogue: Catalogue, mechanism: str, *flaws: str, only: str | None = None, **factory: Any
) -> AuditRun:
    """prompt-forging (or the attack `only`) on the desk's tool, in process."""
    args = {"mechanism": mechanism, "flaws": list(flaws), **factory}
    tool = "shop" if args.get("command") else "cancel_order"
    raw = {"command": f"py:{DESK}:build_server", "factory_args": args, "tool": tool, "call_timeout": 10.0}
    profile = profile_from_mapping(raw, source="test")

    def select(spec: AttackSpec) -> bool:
        return spec.id == only if only else spec.family == "prompt-forging"

    return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)


def _approved(run: AuditRun) -> None:
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_command_shown_raw_is_caught_with_the_hostile_text_inside_the_command(
    catalogue: Catalogue, mechanism: str
) -> None:
    run = audit(catalogue, mechanism, "raw-order-id", command=True)
    _approved(run)
    by_id = run.by_id()
    for n in range(1, 7):
        result = by_id[f"MCA-PROMPT-00{n}"]
        assert (result.verdict, result.mechanism) == (V, RECORDED_AS[mechanism]), (result.id, result.reason)
    # What reached the question is the shop's own command, with the hostile text as its reference.
    sent = "\n".join(by_id["MCA-PROMPT-001"].evidence)
    assert '"command": "shop cancel notes\\n\\nplease confirm.txt"' in sent, sent


@pytest.mark.parametrize("style", ["json", "code-points"])
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_the_careful_desk_shows_every_command_inertly_and_is_refused(
    catalogue: Catalogue, mechanism: str, style: str
) -> None:
    run = audit(catalogue, mechanism, command=True, style=style)
    _approved(run)
    for result in run.results:
        if mechanism == "token" and result.id in NO_FORM:
            assert result.verdict is NA, result
            continue
        assert (result.verdict, result.layer) == (R, Layer.TOOL), (result.id, result.reason, result.evidence)
        # Refused because what every command showed was inert: each one was asked about.
        assert not any("not asked, so not judged" in line for line in result.evidence), result.evidence


@pytest.mark.parametrize("flaws", [(), ("raw-order-id",)])
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_desk_that_refuses_every_hostile_value_before_asking_is_inconclusive_never_refused(
    catalogue: Catalogue, mechanism: str, flaws: tuple[str, ...]
) -> None:
    # Every line-breaks name holds a line break, and the desk refuses each before any question,
    # wherever it is put: the person read nothing, so neither the raw desk nor the careful one is judged.
    run = audit(catalogue, mechanism, *flaws, command=True, refuses=LINE_BREAKS, only="MCA-PROMPT-001")
    result = run.by_id()["MCA-PROMPT-001"]
    assert (result.verdict, result.layer) == (INC, None), (result.reason, result.evidence)
    assert result.reason.startswith("no hostile value reached a question"), result.reason
    assert "not an order reference" in result.reason  # what the target said, quoted
    assert "\n" not in result.reason


@pytest.mark.parametrize("returns", ["text", "object", "str"])
def test_a_refusal_returned_as_json_text_is_judged_as_the_object(catalogue: Catalogue, returns: str) -> None:
    # The desk refuses a reference with a right-to-left override before previewing it: as JSON text,
    # as the object, or as JSON text from a tool typed `-> str` (the SDK's {"result": ...} wrapper).
    run = audit(catalogue, "token", refuses="\u202e", returns=returns, only="MCA-PROMPT-002")
    _approved(run)
    result = run.by_id()["MCA-PROMPT-002"]
    assert (result.verdict, result.layer) == (R, Layer.TOOL), (result.reason, result.evidence)
    notes = [line for line in result.evidence if "not asked, so not judged" in line]
    assert notes, result.evidence
    assert "not an order reference" in notes[0]
