"""A flawed server in each mechanism: a real `--mcp-baseline` run of its own findings exits 0.

The matrices prove every flawed configuration green under its baseline through
`engine/gate.failing` (tests/matrix/baselined.py), the function each item of a run asks. Here a
few representative flawed servers, one per mechanism (tests/plugin/test_gate.py has MRTR's),
are run for real, twice, inside pytest: once to find the flaw, once gated by the baseline the
CLI's writer made of that run. The second exits 0, and `failing` says the same of its results.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from deadline import deadline

from mcp_confirm_audit.catalogue.loader import load_catalogue
from mcp_confirm_audit.engine.baseline import load_baseline
from mcp_confirm_audit.engine.gate import failing
from mcp_confirm_audit.models import ControlResult, Result
from mcp_confirm_audit.report.baseline_file import baseline_from_audit

# Each Python stdio target of the in-process runs forked from the SDK's zygote (tests/forking.py).
pytestmark = pytest.mark.usefixtures("forked_targets")

TARGETS = Path(__file__).resolve().parents[2] / "targets"


def _command(server: str, *options: str) -> str:
    return shlex.join([sys.executable, str(TARGETS / server / "server.py"), "--root", "{root}", *options])


# mechanism -> (the flawed server's profile, the attacks that find its flaw)
FLAWED: dict[str, tuple[dict[str, Any], str]] = {
    "token": (
        {"command": _command("confirm_kinds", "--mechanism", "token", "--flaw", "reusable-token")},
        "MCA-TOKREUSE-001",
    ),
    "pending": (
        {"command": _command("confirm_kinds", "--mechanism", "pending", "--flaw", "agent-approval")},
        "MCA-SELFAPPROVE-001",
    ),
    "flag": (
        {"command": _command("confirm_kinds", "--mechanism", "flag", "--flaw", "self-attested-flag")},
        "MCA-FLAGBYPASS-001",
    ),
    # 2025-era elicitation over the back channel; the weak CONSENT-006 is accepted as weak.
    "elicitation": (
        {"command": _command("legacy", "--flaw", "truthy-strings"), "protocol": "2025-11-25"},
        "MCA-CONSENT-005 or MCA-CONSENT-006",
    ),
    # The person approves on a link posted to a webhook: the request is redeemed again after it.
    "webhook": (
        {
            "command": _command(
                "elsewhere", "--channel", "webhook", "--webhook", "{sink}/hook", "--flaw", "replay"
            ),
            "env": {"ELSEWHERE_OWNER_KEY": "owner-key-never-the-agents"},
            "confirmation": {
                "kind": "pending",
                "pending": {
                    "id_from": "request_id",
                    "human": [
                        {
                            "read": {"from": "sink", "json": "approve_url", "containing": "{id}"},
                            "save": "link",
                        },
                        {"follow": {"link": "link", "method": "POST"}},
                    ],
                    "execute": {"tool": "execute_request", "args": {"request_id": "{id}"}},
                },
            },
        },
        "MCA-OOBREPLAY-001",
    ),
}


@pytest.mark.parametrize("mechanism", sorted(FLAWED))
def test_a_run_gated_by_a_baseline_of_its_own_findings_exits_0(
    pytester: pytest.Pytester, mechanism: str
) -> None:
    target, attacks = FLAWED[mechanism]
    profile = pytester.path / "profile.yaml"
    deadlines = {"call_timeout": deadline(10), "start_timeout": deadline(20)}
    profile.write_text(yaml.safe_dump({"tool": "delete_file", **deadlines, **target}))
    select = ("-k", f"{attacks} or control")
    first = pytester.runpytest("--mcp-profile", str(profile), "--mcp-report-dir", "first", *select)
    assert first.ret == pytest.ExitCode.TESTS_FAILED, first.stdout.str()
    found = json.loads((pytester.path / "first" / "audit.json").read_text())
    baseline = pytester.path / "baseline.yaml"
    written = baseline_from_audit(found, "first/audit.json")
    baseline.write_text(
        written.replace("TODO say why this is accepted", "accepted while the fix is reviewed")
    )

    second = pytester.runpytest(
        "--mcp-profile", str(profile), "--mcp-baseline", str(baseline), "--mcp-report-dir", "second", *select
    )
    assert second.ret == pytest.ExitCode.OK, second.stdout.str()
    gated = json.loads((pytester.path / "second" / "audit.json").read_text())
    accepted = [r["id"] for r in gated["results"] if (r.get("baseline") or {}).get("status") == "accepted"]
    assert accepted, gated["results"]
    assert gated["baseline"]["accepted"] == len(accepted)
    # The pure function the items ask gives the same answer from the run's results.
    results = [Result.from_dict(r) for r in gated["results"]]
    controls = [
        ControlResult(**{k: c[k] for k in ("tool", "name", "passed", "applicable", "detail")})
        for c in gated["controls"]
    ]
    assert failing(results, controls, load_baseline(baseline, load_catalogue())) == []
