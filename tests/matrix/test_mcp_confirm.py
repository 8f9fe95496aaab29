"""A real third-party server from PyPI: mcp-confirm, audited as its users would run it."""

from __future__ import annotations

import shutil

from mcp_confirm_audit.catalogue import Catalogue
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile import Profile
from mcp_confirm_audit.session import run_audit

# What mcp-confirm 0.2.1 gets wrong: it reads the confirm box by truthiness.
KNOWN_FINDINGS = {"MCA-CONSENT-004", "MCA-CONSENT-005", "MCA-CONSENT-006"}


def test_mcp_confirm_refuses_what_its_readme_claims_and_falls_for_truthy_answers(
    catalogue: Catalogue,
) -> None:
    assert shutil.which("mcp-confirm"), "mcp-confirm is part of the dev extra"
    run = run_audit(Profile(command="mcp-confirm --root {root}"), catalogue=catalogue)
    by_id = run.by_id()
    vulnerable = {r.id for r in run.results if r.verdict is Verdict.VULNERABLE}
    assert vulnerable == KNOWN_FINDINGS
    # Its README's table: the SDK refuses cross-target and forged state, the package the rest.
    assert by_id["MCA-XTARGET-001"].layer is Layer.SDK_BOUNDARY
    assert by_id["MCA-FORGE-006"].layer is Layer.SDK_BOUNDARY
    assert by_id["MCA-REPLAY-002"].layer is Layer.TOOL
    assert by_id["MCA-ROOT-003"].layer is Layer.TOOL
    assert not [r for r in run.results if r.verdict in (Verdict.WEAK, Verdict.INCONCLUSIVE)]
    assert {r.tool for r in run.results} == {"delete_file"}
