"""A refusal control whose setup fails in a fresh world never said no: it is no finding.

The greenhouse's `subject` shape with a seed supplier (`targets/zc_shapes/server.py`, `supplier=`):
`plant_bed(crop)`, the setup that makes the bed `clear_bed` asks about, buys the crop's one packet from
a supplier whose register lives outside the greenhouse, as a remote service's records do. The approve
control buys it and clears its bed; the decline control's own `plant_bed` is refused ("no seed left"),
and again in a fresh target process and root. That control never put its question, so nothing showed the
target acting on a no: it was counted as a failed refusal control, a finding in every report, a SARIF
error and a failing exit all the same (note 13, "Not done"). It is now not applicable, saying why; the
same control on the same shape without the supplier, where the flawed greenhouse acts on a decline, is
still the finding it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from deadline import scaled

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.gate import failing
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping
from mcp_confirm_audit.report import AuditReport, build_report
from mcp_confirm_audit.report.audit_json import AuditJson
from mcp_confirm_audit.report.review_md import ReviewMarkdown
from mcp_confirm_audit.report.sarif import Sarif
from mcp_confirm_audit.report.terminal import summary

SHAPES = Path(__file__).resolve().parents[2] / "targets" / "zc_shapes" / "server.py"
REFUSALS = ("decline", "cancel", "negative")


def _audit(
    catalogue: Catalogue,
    generation: object,
    factory_args: dict[str, Any],
    tool: str = "clear_bed",
    args: dict[str, Any] | None = None,
    attack: str = "MCA-CONSENT-001",
) -> AuditRun:
    profile = profile_from_mapping(
        {
            "command": f"py:{SHAPES}:build_server",
            "factory_args": {"shape": "subject", **factory_args},
            "tool": tool,
            "setup": [{"tool": "plant_bed", "args": {"crop": "tomato"}, "save": {"bed": "bed_id"}}],
            "args": args if args is not None else {"bed_id": "{bed}"},
            "call_timeout": 10,
        },
        source="test",
    )
    return run_audit(
        scaled(profile),
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.id == attack,
    )


def _report(run: AuditRun) -> AuditReport:
    return build_report(run.results, run.controls, {"tools": ["clear_bed"]})


def test_a_refusal_control_whose_setup_fails_in_a_fresh_world_too_is_not_applicable_and_no_finding(
    catalogue: Catalogue, generation: object, tmp_path: Path
) -> None:
    run = _audit(catalogue, generation, {"supplier": str(tmp_path / "supplier.json")})
    controls = {c.name: c for c in run.controls if c.tool == "clear_bed"}
    assert controls["approve"].passed, controls["approve"].detail
    for name in REFUSALS:
        control = controls[name]
        assert (control.applicable, control.finding) == (False, False), control
        # The reason shown: it could not begin, because the supplier would not sell the crop again.
        assert control.detail.startswith("could not begin, so it proved nothing: setup call 1 (plant_bed)")
        assert "no seed left for 'tomato'" in control.detail, control.detail
        # The same setup had worked for approve: the profile's args are not what to fix.
        assert "fix its args" not in control.detail, control.detail
        assert (
            "the same setup worked for the approve control, but not again in a fresh target process and "
            "root, so its args are not what failed"
        ) in control.detail, control.detail
        assert "give the profile a setup that can run again" in control.detail, control.detail
    # The attack's setup is refused the same way: not judged, saying why, never a finding.
    attack = run.by_id()["MCA-CONSENT-001"]
    assert attack.verdict is Verdict.INCONCLUSIVE, attack.reason
    # Its setup had worked for approve too: the advice is the same, never "fix its args".
    assert "the same setup worked for the approve control, but not again for this attack" in attack.reason
    assert "fix its args" not in attack.reason, attack.reason
    report = _report(run)
    assert report.failed_controls == ()
    review = ReviewMarkdown().render(report)
    assert "**0 finding(s)**" in review
    assert "0 failed refusal control(s)" in review
    assert "### Control decline failed" not in review
    # "Not testable here, and why": the control, not applicable, with its reason.
    assert (
        "| control decline | `clear_bed` | not applicable | `could not begin, so it proved nothing" in review
    )
    assert json.loads(AuditJson().render(report))["summary"]["failed_refusal_controls"] == 0
    sarif = json.loads(Sarif().render(report))["runs"][0]
    rules = {rule["id"] for rule in sarif["tool"]["driver"]["rules"]}
    assert not any(
        rule.startswith(("control-decline", "control-cancel", "control-negative")) for rule in rules
    )
    assert not [r for r in sarif["results"] if r["kind"] == "fail"], sarif["results"]
    notes = [n["message"]["text"] for n in sarif["invocations"][0]["toolExecutionNotifications"]]
    for name in REFUSALS:
        assert any(n.startswith(f"control {name} on clear_bed could not begin") for n in notes), notes
    said = [line.split() for line in summary(report, ()) if line.startswith("control decline")]
    assert [words[2:5] for words in said] == [["[clear_bed]", "n/a:", "could"]], said
    # The run still fails, for what was not judged, never for the controls that could not begin.
    why = failing(run.results, run.controls, None)
    assert why, why
    assert all(line.startswith("MCA-CONSENT-001 on clear_bed: error") for line in why), why


def test_a_decline_the_flawed_greenhouse_acts_on_is_still_a_failed_refusal_control(
    catalogue: Catalogue, generation: object
) -> None:
    """The same profile, no supplier: every use plants its bed, the decline is put, and the bed goes."""
    run = _audit(catalogue, generation, {"flaws": ["decline-acts"]})
    controls = {c.name: c for c in run.controls if c.tool == "clear_bed"}
    assert controls["approve"].passed, controls["approve"].detail
    for name in REFUSALS:
        control = controls[name]
        assert control.finding, control
        assert "the action took effect after a" in control.detail, control.detail
    report = _report(run)
    assert {c.name for c in report.failed_controls} == set(REFUSALS)
    assert json.loads(AuditJson().render(report))["summary"]["failed_refusal_controls"] == 3
    sarif = json.loads(Sarif().render(report))["runs"][0]
    failed = sorted(
        r["ruleId"] for r in sarif["results"] if r["kind"] == "fail" and r["ruleId"].startswith("control")
    )
    assert [rule.split("/")[0] for rule in failed] == [
        "control-cancel",
        "control-decline",
        "control-negative",
    ], failed
    assert any(
        line.startswith("control decline on clear_bed: failed")
        for line in failing(run.results, run.controls, None)
    )
    assert run.by_id()["MCA-CONSENT-001"].verdict is Verdict.VULNERABLE


def test_a_preview_alone_whose_setup_will_not_run_again_says_so_and_not_to_fix_the_args(
    catalogue: Catalogue, generation: object, tmp_path: Path
) -> None:
    """A token flow (the bench's `open_roof`) whose setup buys the seed: its preview alone cannot begin.

    The approval's own use bought the packet, so the preview alone's use is refused it, in a fresh
    target process too: the tool is unaudited, and what it says to do is about a setup that runs once.
    """
    run = _audit(
        catalogue,
        generation,
        {"shape": "bench", "supplier": str(tmp_path / "supplier.json")},
        tool="open_roof",
        args={"percent": 40},
        attack="MCA-TOKREUSE-001",
    )
    controls = {c.name: c for c in run.controls if c.tool == "open_roof"}
    alone, approve = controls["preview-alone"], controls["approve"]
    assert (alone.applicable, alone.finding) == (False, False), alone
    assert not approve.passed, approve.detail
    assert "through token" in approve.detail, approve.detail
    for said in (alone.detail, approve.detail):
        assert "no seed left for 'tomato'" in said, said
        assert "fix its args" not in said, said
        assert "the same setup worked for the approve control, but not again" in said, said
        assert "give the profile a setup that can run again" in said, said


def test_a_setup_that_fails_the_first_time_still_says_to_fix_its_args(
    catalogue: Catalogue, generation: object, tmp_path: Path
) -> None:
    """The supplier sold the packet before the audit began: approve's own setup fails, and the args are the suspect."""
    supplier = tmp_path / "supplier.json"
    supplier.write_text(json.dumps(["tomato"]))
    run = _audit(catalogue, generation, {"supplier": str(supplier)})
    approve = next(c for c in run.controls if c.tool == "clear_bed" and c.name == "approve")
    assert not approve.passed, approve.detail
    assert "no seed left for 'tomato'" in approve.detail, approve.detail
    assert "fix its args: under setup: in the profile" in approve.detail, approve.detail
    assert "worked for the approve control" not in approve.detail, approve.detail
