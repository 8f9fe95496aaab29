"""self-approval on a staged flow whose staging call makes a file the approval uses up (issue 31: magnemo-mcp).

The shelf shape (targets/zc_shapes) stages a note as a file and, once kept, moves it to the shelf. Seen from the
attack's start, the staged file made and used up nets to nothing and the filed note is only a new file (no effect on
its own), so the agent keeping its own note was "answered normally, nothing took effect": magnemo-mcp's zero-config
SELFAPPROVE-001 was inconclusive while its note became Memory. Seen from the staging call, as the approve control sees
the honest flow, the staged file is used up. Careful: only the grower's yes (a file their own command writes) files it.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from conftest import MATRIX_GENERATION

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import Layer, Result, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

SHAPES = Path(__file__).resolve().parents[2] / "targets" / "zc_shapes" / "server.py"
ATTACK = "MCA-SELFAPPROVE-001"
# The grower's own channel: their yes, a file beside the staged note's id.
GROWER_SAYS_YES = shlex.join(
    [
        sys.executable,
        "-c",
        "import pathlib, sys; p = pathlib.Path(sys.argv[1]); p.parent.mkdir(exist_ok=True); p.touch()",
        "{root}/.yes/{id}",
    ]
)


def _self_approval(catalogue: Catalogue, *flaws: str) -> Result:
    raw = {
        "command": f"py:{SHAPES}:build_server",
        "factory_args": {"shape": "shelf", "flaws": list(flaws)},
        "tool": "shelve_note",
        "args": {"title": "Prune the plums"},
        "ignore": [".yes", ".yes/**"],
        "confirmation": {
            "kind": "pending",
            "pending": {
                "id_from": "staged",
                "human": {"command": GROWER_SAYS_YES},
                "execute": {"tool": "keep", "args": {"note": "{id}"}},
            },
        },
        "call_timeout": 10.0,
    }
    run = run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.id == ATTACK,
        generation=MATRIX_GENERATION,
    )
    approve = [c for c in run.controls if c.name == "approve"]
    assert approve, run.controls
    assert all(c.passed for c in approve), run.controls
    return run.by_id()[ATTACK]


@pytest.mark.parametrize("flawed", [False, True], ids=["careful", "agent-keeps"])
def test_the_agent_keeping_its_own_staged_note_is_seen_from_the_staging_call(
    catalogue: Catalogue, flawed: bool
) -> None:
    result = _self_approval(catalogue, *(["agent-keeps"] if flawed else []))
    if not flawed:
        assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), result.reason
        assert "has not approved" in result.reason
        return
    assert result.verdict is Verdict.VULNERABLE, result.reason
    # The staged file the keep used up, from the staging call on; the filed note alone is no effect.
    assert "since the staging call" in result.reason, result.reason
    assert "root/_staging/" in result.reason, result.reason
