"""ungated never tries a pending flow's decline step as a way around the gate (magnemo-mcp's `drop`).

magnemo-mcp, zero configuration: `drop(note)`, "call drop only when the person has
said no", was called plainly as another tool that might act around the gated
`stage`, and its answer was read as the gate refusing. The decline step is how the
person's no is carried out, judged by the decline control: ungated leaves it out,
and with nothing else to try says so (not applicable), where it said `refused`.
On the zero-configuration reference server's `memo` shape (magnemo's: `file_note`
stages, `keep` is the yes step, `drop` the no step), nothing configured. Built in the audit's
process (`py:...:build_server`), as test_zero_config_search.py builds every shape: what ungated
reads is the tools, the flow learned and the files, which no transport changes.
"""

from __future__ import annotations

from pathlib import Path

from deadline import scaled

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import Verdict
from mcp_confirm_audit.profile.loader import Profile

SHAPES = Path(__file__).resolve().parents[2] / "targets" / "zc_shapes" / "server.py"


def test_the_decline_step_of_a_pending_flow_is_no_other_tool_to_try(
    catalogue: Catalogue, generation: object
) -> None:
    profile = Profile(command=f"py:{SHAPES}:build_server", factory_args={"shape": "memo"}, call_timeout=10.0)
    run = run_audit(
        scaled(profile),
        catalogue=catalogue,
        generation=generation,  # type: ignore[arg-type]
        select=lambda spec: spec.id == "MCA-UNGATED-001",
    )
    result = run.by_id()["MCA-UNGATED-001"]
    assert result.tool == "file_note"
    assert result.verdict is Verdict.NOT_APPLICABLE, result.reason
    assert "but the flow's decline step (drop)" in result.reason, result.reason
    assert not any("drop, plainly" in line for line in result.evidence), result.evidence
