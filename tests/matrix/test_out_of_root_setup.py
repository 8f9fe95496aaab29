"""Out-of-root through a setup call (issue 31, bypass 3): the file is named only when a change is proposed.

`propose_change(path, content)` stages, `apply_change(change_id)` asks the person, then writes
(targets/staging/change_server.py, in process). out-of-root varies the proposal's path, and the
action's own call carries the id the proposal minted: a canary outside the root rewritten is
`vulnerable` on the server that never confines the staged path; both careful styles refuse with
no effect (one at the proposal, one at the apply before asking), layer tool, their twins asked about.
The swap families reach the file through the proposal as well: a link, a moved folder or another file
put in its place while the person is asked is written through by the flaw, refused by both careful styles.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import MATRIX_GENERATION

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

CHANGES = Path(__file__).resolve().parents[2] / "targets" / "staging" / "change_server.py"
ALL = tuple(f"MCA-ROOT-00{n}" for n in range(1, 9))
# What the unconfined path lets out of the root: every hostile path that names an existing file outside.
ESCAPES = ("MCA-ROOT-001", "MCA-ROOT-002", "MCA-ROOT-003", "MCA-ROOT-004", "MCA-ROOT-008")
# The swap families reach the file through the proposal too: swapped between the question and the yes.
SWAPS = tuple(
    f"MCA-{family}-00{n}"
    for family, count in (("SYMLINK", 3), ("PARENT", 2), ("IDSWAP", 3))
    for n in range(1, count + 1)
)
# What a server that writes by name, following links, lets a swap do.
SWAPPED = {
    "MCA-SYMLINK-001": Verdict.VULNERABLE,
    "MCA-SYMLINK-002": Verdict.VULNERABLE,
    "MCA-PARENT-001": Verdict.VULNERABLE,
    "MCA-PARENT-002": Verdict.VULNERABLE,
    "MCA-IDSWAP-001": Verdict.VULNERABLE,
    "MCA-IDSWAP-002": Verdict.WEAK,
}
FAMILIES = frozenset({"out-of-root", "symlink-swap", "parent-swap", "identity-swap"})


def _audit(
    catalogue: Catalogue, *, flaws: tuple[str, ...] = (), confine: str = "stage", path: str = "{path}"
) -> Any:
    raw = {
        "command": f"py:{CHANGES}:build_server",
        "factory_args": {"flaws": list(flaws), "confine": confine},
        "protocol": "2025-11-25",
        "tool": "apply_change",
        "setup": [
            {
                "tool": "propose_change",
                "args": {"path": path, "content": "theme = dark\n"},
                "save": {"change": "change_id"},
            }
        ],
        "args": {"change_id": "{change}"},
        "call_timeout": 10.0,
    }
    run = run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.family in FAMILIES,
        generation=MATRIX_GENERATION,
    )
    assert all(c.passed for c in run.controls if c.name == "approve"), run.controls
    return run.by_id()


@pytest.mark.parametrize("path", ["{path}", "{root}/{path}"], ids=["relative", "absolute"])
def test_unconfined_stage_writes_outside_the_root(catalogue: Catalogue, path: str) -> None:
    results = _audit(catalogue, flaws=("stage-path-unconfined",), path=path)
    for attack in ESCAPES:
        result = results[attack]
        assert result.verdict is Verdict.VULNERABLE, (attack, result.reason)
        assert any(p.startswith(("outside/", "root-evil/")) for p in result.effect.changed), result.effect
    for attack, verdict in SWAPPED.items():
        assert results[attack].verdict is verdict, (attack, results[attack].reason)


@pytest.mark.parametrize("confine", ["stage", "apply"])
def test_careful_styles_refuse_before_asking(catalogue: Catalogue, confine: str) -> None:
    results = _audit(catalogue, confine=confine)
    for attack in ALL:
        result = results[attack]
        assert result.verdict is Verdict.REFUSED, (attack, result.reason)
        assert result.layer is Layer.TOOL, (attack, result.reason)
        assert not result.effect.happened, (attack, result.effect)
        twin = [line for line in result.evidence if line.startswith("benign twin")]
        assert twin, (attack, result.evidence)
        assert twin[0].endswith("was staged, and its use asked about"), (attack, twin)
    for attack in SWAPS:
        result = results[attack]
        assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), (attack, result.reason)
        assert not result.effect.happened, (attack, result.effect)
