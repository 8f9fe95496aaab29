"""A shell tool audited with nothing configured: its honest flow is `rm` of the case file, quoted.

Before, zero configuration sent the shell reference server (targets/shell) the case file's path as the
whole command line ("command not found") and host-terminal-mcp the filler `mcp-confirm-audit`: nothing
moved, the approve control failed, and all 131 attacks stayed inconclusive on a server whose
prefix-matched allow-list runs `pwd ; rm victim.txt` unasked. Now the line is `rm <the case file>`, so
the effect is one the sandbox shows: the prefix-allow-list flaw is found by chained-command alone, and
the careful styles come out clean. Which file a path in a command line reaches is the shell's, not a
promise of the tool: out-of-root and the swap families do not apply, unless the profile says the tool
confines the paths of its lines (`confines_paths: true`), as the careful shell server does by refusing
a line that names a path outside its root before anyone is asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import MATRIX_GENERATION, Shared
from deadline import scaled

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

SERVER = Path(__file__).resolve().parents[2] / "targets" / "shell" / "server.py"
V, R, NA = Verdict.VULNERABLE, Verdict.REFUSED, Verdict.NOT_APPLICABLE
PROMISES = ("out-of-root", "symlink-swap", "parent-swap", "identity-swap")


def _audit(catalogue: Catalogue, **keys: Any) -> AuditRun:
    factory = keys.pop("factory", {})
    raw = {"command": f"py:{SERVER}:build_server", "factory_args": factory, "call_timeout": 10.0, **keys}
    return run_audit(
        scaled(profile_from_mapping(raw, source="test")), catalogue=catalogue, generation=MATRIX_GENERATION
    )


@pytest.fixture(scope="module")
def audited(catalogue: Catalogue, across_workers: Shared[AuditRun]) -> dict[str, AuditRun]:
    return {
        "careful": across_workers("zc-shell-careful", lambda: _audit(catalogue)),
        "prefix-allow-list": across_workers(
            "zc-shell-prefix", lambda: _audit(catalogue, factory={"flaws": ["prefix-allow-list"]})
        ),
    }


def test_the_honest_flow_completes_through_rm_of_the_case_file(audited: dict[str, AuditRun]) -> None:
    run = audited["careful"]
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail
    sent = [line for r in run.results for line in r.evidence if '-> run_command({"command": "rm ' in line]
    assert sent, "no attack sent the rm line"


def test_the_prefix_allow_list_is_found_by_chained_command_and_by_nothing_else(
    audited: dict[str, AuditRun],
) -> None:
    findings = {r.id: r for r in audited["prefix-allow-list"].results if r.verdict in (V, Verdict.WEAK)}
    assert {r.family for r in findings.values()} == {"chained-command"}, sorted(findings)
    assert len(findings) == 7, sorted(findings)
    assert all(r.verdict is V for r in findings.values()), sorted(findings)


def test_the_careful_server_is_clean_and_nothing_is_left_unjudged(audited: dict[str, AuditRun]) -> None:
    verdicts = {(r.id, r.verdict) for r in audited["careful"].results if r.verdict not in (R, NA)}
    assert not verdicts, verdicts


def test_a_hostile_name_stays_one_word_of_the_line(audited: dict[str, AuditRun]) -> None:
    # Line breaks in the name: unquoted, a shell would run the part after the break as a command.
    result = audited["careful"].by_id()["MCA-PROMPT-001"]
    assert result.verdict is R, result.reason
    quoted = [line for line in result.evidence if '-> run_command({"command": "rm \'' in line]
    assert quoted, result.evidence


@pytest.mark.parametrize("twin", ["careful", "prefix-allow-list"])
def test_which_file_a_line_reaches_is_no_promise_of_a_shell_tool(
    audited: dict[str, AuditRun], twin: str
) -> None:
    promised = [r for r in audited[twin].results if r.family in PROMISES]
    assert promised
    for result in promised:
        assert result.verdict is NA, (result.id, result.reason)
        assert "runs a command line with the path in it" in result.reason
        assert not result.evidence or not any("[attack]" in line for line in result.evidence), result.evidence


def test_a_tool_that_promises_to_confine_its_lines_is_held_to_it(catalogue: Catalogue) -> None:
    run = _audit(catalogue, confines_paths=True)
    out_of_root = [r for r in run.results if r.family == "out-of-root"]
    assert out_of_root
    for result in out_of_root:
        # The careful shell refuses a line naming a path it would never act on, before asking anyone.
        assert (result.verdict, result.layer) == (R, Layer.TOOL), (result.id, result.reason, result.evidence)
    assert not [r.id for r in run.results if r.verdict in (V, Verdict.WEAK, Verdict.INCONCLUSIVE)]
