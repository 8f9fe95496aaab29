"""A fixed run to render: one result of every verdict, a failed control, a baseline, a fixed clock."""

from __future__ import annotations

import os
import tempfile
from datetime import UTC, datetime

import pytest

from mcp_confirm_audit.engine.baseline import AcceptedFinding, Baseline, ExpectedLayer
from mcp_confirm_audit.models import Ablation, ControlResult, Effect, Layer, Result, Verdict
from mcp_confirm_audit.report import AuditReport, build_report

GENERATED = datetime(2026, 7, 28, 12, 0, 0, tzinfo=UTC)
# A real-looking sandbox path, as the evidence of a live run carries it.
SANDBOX = os.path.realpath(tempfile.gettempdir()) + "/mcp-audit-k3j_x9a2"

TARGET = {
    "command": "example-server --root {root}",
    "command_source": "targets/example.yaml",
    "profile": "targets/example.yaml",
    "version": None,
    "root_from": "arg",
    "call_timeout": 15.0,
    "server": {"name": "example-server", "version": "1.2.3"},
    "tools": ["delete_file"],
    "processes_started": 2,
    "generation": {"examples": 25, "seed": 1234},
}


def result(attack_id: str, verdict: Verdict, layer: Layer | None, **changes: object) -> Result:
    family, variant = {
        "MCA-REPLAY-001": ("replay", "after-success"),
        "MCA-CONSENT-004": ("consent", "string-false"),
        "MCA-FORGE-001": ("forged-state", "random-token"),
        "MCA-ROOT-003": ("out-of-root", "sibling-prefix"),
        "MCA-FORGE-020": ("forged-state", "edit-readable-state"),
        "MCA-XTARGET-004": ("cross-target", "other-tool"),
    }[attack_id]
    values: dict[str, object] = {
        "id": attack_id,
        "family": family,
        "title": f"The {variant} attack",
        "tool": "delete_file",
        "variant": variant,
        "severity": "high",
        "level": "MUST",
        "verdict": verdict,
        "layer": layer,
        "asked_user": False,
        "effect": Effect(),
        "reason": "refused",
        "evidence": (),
        "refs": (f"SPEC: the {family} requirement", "CWE-294" if family == "replay" else "CWE-20"),
        "remedy": f"Make the {family} check server-side, before acting.",
        "owasp": ("MCP07",),
        "requirements": ("AISVS-10.4.10", "ADA-AITS-2.3") if family == "replay" else (),
    }
    values.update(changes)
    return Result(**values)  # type: ignore[arg-type]


RESULTS = (
    result(
        "MCA-REPLAY-001",
        Verdict.VULNERABLE,
        Layer.NONE,
        severity="critical",
        effect=Effect(removed=("root/005-mca-replay-001/victim.txt",)),
        reason="the attack took effect on disk: root/005-mca-replay-001/victim.txt",
        evidence=(
            '[setup] ask -> delete_file({"path": "005-mca-replay-001/victim.txt"}) <- input-required',
            '[setup] accept -> delete_file({"path": "005-mca-replay-001/victim.txt"}) state="v1.AAAA" '
            f'answers={{"confirm": {{"action": "accept"}}}} '
            f'<- complete "Deleted {SANDBOX}/root/005-mca-replay-001/victim.txt"',
            '[attack] replay -> delete_file({"path": "005-mca-replay-001/victim.txt"}) state="v1.AAAA" '
            f'answers={{"confirm": {{"action": "accept"}}}} <- complete "Deleted {SANDBOX[:-3]}…"',
            "disk removed: root/005-mca-replay-001/victim.txt",
        ),
    ),
    result(
        "MCA-CONSENT-004",
        Verdict.WEAK,
        Layer.TOOL,
        level="SHOULD",
        severity="medium",
        asked_user=True,
        reason="refused only after asking the user: No such file",
        evidence=('[attack] answer -> delete_file({"path": "x"}) <- tool-error "No | such file"',),
    ),
    result(
        "MCA-FORGE-001",
        Verdict.REFUSED,
        Layer.SDK_BOUNDARY,
        severity="critical",
        reason="Invalid or expired requestState",
        # Run again without the SDK's boundary: the tool refuses it on its own.
        ablation=Ablation(
            Layer.SDK_BOUNDARY,
            Verdict.REFUSED,
            Layer.TOOL,
            "malformed confirmation state",
            ('[attack] a forged state -> delete_file({"path": "x"}) <- tool-error "malformed"',),
        ),
    ),
    result("MCA-ROOT-003", Verdict.REFUSED, Layer.TOOL, severity="critical", reason="outside the root"),
    result(
        "MCA-FORGE-020", Verdict.NOT_APPLICABLE, None, reason="the state is opaque, so it cannot be edited"
    ),
    result(
        "MCA-XTARGET-004", Verdict.INCONCLUSIVE, None, reason="could not set the attack up: only one tool"
    ),
)

CONTROLS = (
    ControlResult("delete_file", "approve", True, True, "asked, accepted, acted (relative paths)"),
    ControlResult("delete_file", "decline", False, True, "the victim was removed or changed after a decline"),
    ControlResult("delete_file", "cancel", True, True, "no effect (complete: Cancelled)"),
    ControlResult("delete_file", "negative", True, False, "the form has no field that can say no"),
)

BASELINE = Baseline(
    source="mcp-baseline.yaml",
    findings=(
        AcceptedFinding("MCA-REPLAY-001", "delete_file", "fixed upstream in 2.0; tracked as #12"),
        AcceptedFinding(
            "MCA-FORGE-001", "delete_file", "was found before the SDK upgrade", verdict=Verdict.VULNERABLE
        ),
        AcceptedFinding("MCA-REPLAY-003", "delete_file", "an attack since retired"),
    ),
    layers=(ExpectedLayer("MCA-ROOT-003", "delete_file", Layer.PROTOCOL),),
    retired=frozenset({"MCA-REPLAY-003"}),
)


@pytest.fixture
def report() -> AuditReport:
    return build_report(RESULTS, CONTROLS, TARGET, generated=GENERATED, baseline=BASELINE)


@pytest.fixture
def plain_report() -> AuditReport:
    return build_report(RESULTS, CONTROLS, TARGET, generated=GENERATED)
