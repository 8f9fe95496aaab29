"""A proxy's upstream, named by the profile: a finding whose effect shows says that process acted.

Seen on a governance proxy in front of a naive upstream (warden-mcp): the swap the upstream's own
path handling followed was reported against the proxy. With `upstream:` the finding names the
process behind it; a refusal, or a finding with no effect, names none.
"""

from __future__ import annotations

from typing import Any

from conftest import MATRIX_GENERATION, REFERENCE_SERVER

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

UPSTREAM = "naive-files 0.3 (stdio, behind the proxy)"
NAMED = 'the process that acted is the upstream "naive-files 0.3 (stdio, behind the proxy)"'


def swaps(catalogue: Catalogue, *flaws: str, **settings: Any) -> AuditRun:
    raw = {
        "command": f"py:{REFERENCE_SERVER}:build_server",
        "factory_args": {"flaws": list(flaws)},
        "tool": "delete_file",
        **settings,
    }
    return run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.family == "identity-swap",
        generation=MATRIX_GENERATION,
    )


def test_a_swap_finding_on_a_proxy_names_the_upstream_that_acted(catalogue: Catalogue) -> None:
    run = swaps(catalogue, "no-identity-check", upstream=UPSTREAM)
    renamed = run.by_id()["MCA-IDSWAP-001"]
    assert renamed.verdict is Verdict.VULNERABLE, renamed.evidence
    assert NAMED in renamed.reason, renamed.reason
    # Refused, or found with nothing moved: no process acted, and none is named.
    for result in run.results:
        if not result.effect.happened:
            assert "the process that acted" not in result.reason, result.reason


def test_without_an_upstream_named_the_finding_names_no_process(catalogue: Catalogue) -> None:
    renamed = swaps(catalogue, "no-identity-check").by_id()["MCA-IDSWAP-001"]
    assert renamed.verdict is Verdict.VULNERABLE
    assert "the process that acted" not in renamed.reason
