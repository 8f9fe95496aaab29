"""Zero configuration: other tool and argument names, root-relative or absolute paths, other forms."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mcp_confirm_audit.engine.session import AuditRun
from mcp_confirm_audit.models import Verdict

AuditFn = Callable[..., AuditRun]

SHAPES = {
    "renamed-relative-name-form": [
        "--tool-name",
        "remove_document",
        "--path-arg",
        "target",
        "--paths",
        "relative",
        "--form",
        "name",
    ],
    "absolute-enum-form": ["--paths", "absolute", "--form", "enum"],
    "relative-boolean-form": ["--paths", "relative"],
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_discovery_finds_the_tool_learns_the_path_style_and_answers_the_form(
    audit_reference: AuditFn, shape: str
) -> None:
    run = audit_reference(*SHAPES[shape], families=["replay", "consent", "out-of-root"], tool=None)
    tools = {r.tool for r in run.results}
    assert len(tools) == 1, "the read-only stat_file must not be picked"
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail
    assert all(c.passed for c in run.controls if c.applicable), run.controls
    assert all(r.verdict in (Verdict.REFUSED, Verdict.NOT_APPLICABLE) for r in run.results), [
        (r.id, r.verdict, r.reason) for r in run.results if r.verdict is not Verdict.REFUSED
    ]


def test_a_flaw_is_still_found_when_nothing_is_configured(audit_reference: AuditFn) -> None:
    run = audit_reference(
        "--tool-name",
        "remove_document",
        "--path-arg",
        "target",
        "--form",
        "enum",
        "--flaw",
        "decline-as-accept",
        families=["consent"],
        tool=None,
    )
    assert run.by_id()["MCA-CONSENT-001"].verdict is Verdict.VULNERABLE
