"""An argument that takes a closed set of values carries no hostile text to the person: proven both ways.

prompt-forging gives each argument the question shows a benign twin first (techniques/_twins_closed.py).
The greenhouse's `set_vent(vent, angle)` (targets/zc_shapes `--shape rules`) asks about a vent that must
be one of north, south, roof, refused before asking otherwise: the twin is refused naming the vents,
another vent is asked about, and with no other text in the question the attack is not applicable,
never refused (nothing was defended) and never inconclusive (nothing is left to learn). Beside a closed
argument, a free-text one still carries the attack: the payments server paying only the recipients on
its allow-list, whose memo goes into the question raw (`unescaped-memo`), is caught through the memo.
An id that names a record that must exist is no place for text either: the job tracker refuses the
twin and `J7`, a value of the honest `J1`'s shape, and the attack is not applicable; with its id only
format-checked (`format-only-id`) `J7` is asked about, and hostile text after it reaches the question.
Both ways in two styles (ids `J1` refused as tool errors, `inv-0041` refused in ordinary results).
One attack, in process, per server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import MATRIX_GENERATION

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

TARGETS = Path(__file__).resolve().parents[2] / "targets"
LINE_BREAKS = "MCA-PROMPT-001"
# The corpus's payments/allow-list cases: alice is the one recipient on the list.
PAYMENT = {"recipient": "alice", "amount_cents": 500, "memo": "rent"}


def judged(
    catalogue: Catalogue, server: str, tool: str, args: dict[str, Any] | None = None, **factory: Any
) -> tuple[Verdict, str, str]:
    """MCA-PROMPT-001 alone on `server`'s tool, in process: its verdict, reason and evidence."""
    raw: dict[str, Any] = {
        "command": f"py:{TARGETS / server / 'server.py'}:build_server",
        "factory_args": factory,
        "tool": tool,
        "call_timeout": 10.0,
    }
    if args is not None:
        raw["args"] = args
    run = run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.id == LINE_BREAKS,
        generation=MATRIX_GENERATION,
    )
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail
    result = run.by_id()[LINE_BREAKS]
    return result.verdict, result.reason, "\n".join(result.evidence)


def test_a_vent_from_a_closed_set_is_not_applicable_quoting_the_refusal(catalogue: Catalogue) -> None:
    verdict, reason, evidence = judged(catalogue, "zc_shapes", "set_vent", shape="rules")
    assert verdict is Verdict.NOT_APPLICABLE, reason
    assert "vent takes one of a closed set" in reason
    assert "vent must be one of north, south, roof" in reason
    assert "a value that refusal names, was asked about" in reason
    # The twin and the third call are on the transcript; no hostile value was ever sent.
    assert "benign twin of 'vent'" in evidence
    assert "[attack]" not in evidence, evidence


@pytest.mark.parametrize("flaws", [["unescaped-memo"], []], ids=["memo-raw", "careful"])
def test_a_free_text_memo_beside_a_closed_recipient_still_carries_the_attack(
    catalogue: Catalogue, flaws: list[str]
) -> None:
    verdict, reason, evidence = judged(
        catalogue, "payments", "send_payment", PAYMENT, allow=["alice"], flaws=flaws
    )
    # The recipient's twin is refused ("not on the allow-list"): the hostile text goes into the memo.
    assert "benign twin of 'recipient'" in evidence
    assert "benign twin of 'memo'" in evidence
    assert '"memo": "notes\\n\\nplease confirm.txt"' in evidence, evidence
    assert verdict is (Verdict.VULNERABLE if flaws else Verdict.REFUSED), reason


# The job tracker's two styles: ids J1, J2 refused as a tool error; ids inv-0041, inv-0042 refused
# inside an ordinary result ({"ok": false, "error": ...}).
STYLES = {"J": {}, "inv": {"ids": "inv", "id_refusals": "result"}}
HONEST = {"J": ("J1", "J7"), "inv": ("inv-0041", "inv-0047")}


@pytest.mark.parametrize("style", sorted(STYLES))
def test_a_job_id_that_must_exist_is_a_lookup_and_not_applicable(catalogue: Catalogue, style: str) -> None:
    honest, shape = HONEST[style]
    verdict, reason, evidence = judged(catalogue, "jobs", "set_status", **STYLES[style])
    assert verdict is Verdict.NOT_APPLICABLE, reason
    assert "job_id names a record that must exist" in reason
    # The shape twin's own refusal is quoted, and the honest value that was asked is named.
    assert f'"{shape}" ("' in reason
    assert f"no job '{shape}' in jobs.csv\")" in reason
    assert f'the honest "{honest}", which was asked about' in reason
    assert (
        f'"{shape}", a value of the shape of the honest "{honest}", was refused before any question too'
        in evidence
    )
    assert "[attack]" not in evidence, evidence


@pytest.mark.parametrize("style", sorted(STYLES))
def test_a_job_id_only_format_checked_carries_the_attack_after_a_value_of_its_shape(
    catalogue: Catalogue, style: str
) -> None:
    honest, shape = HONEST[style]
    verdict, reason, evidence = judged(
        catalogue, "jobs", "set_status", flaws=["format-only-id"], **STYLES[style]
    )
    # The twin is refused by the format check, the shape twin is asked about: the hostile text goes in after it.
    assert f'"{shape}", a value of the shape of the honest "{honest}", was asked about' in evidence
    assert f'"job_id": "{shape}notes\\n\\nplease confirm.txt"' in evidence, evidence
    assert verdict is Verdict.VULNERABLE, reason
