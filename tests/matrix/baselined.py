"""A flawed server's audit, gated by a baseline of its own findings, exits 0.

The baseline is written from the run's audit.json results by the CLI's own writer
(`report/baseline_file.py`), read back by the plugin's loader, and the run's exit status is
asked of `engine/gate.failing`, the function every attack and control item of a real
`--mcp-baseline` run asks (tests/plugin/test_baseline_matrix.py runs a few for real). So every
audit a matrix already runs proves its baselined twin green at the cost of a pure function.
"""

from __future__ import annotations

import yaml

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.cli.corpus_gate import baseline_text
from mcp_confirm_audit.engine.baseline import ACCEPTED, baseline_from_mapping
from mcp_confirm_audit.engine.gate import failing
from mcp_confirm_audit.engine.session import AuditRun
from mcp_confirm_audit.models import Verdict


def baseline_of(run: AuditRun) -> str:
    """The baseline `mcp-confirm-audit baseline` writes from this run, its TODO reasons filled in."""
    return baseline_text(run.results, run.controls)


def assert_green_with_its_findings_baselined(run: AuditRun, catalogue: Catalogue) -> None:
    """What `--mcp-baseline` of this run's own findings makes of the same results: exit 0.

    A baseline excuses findings, and a control that fails (a decline acted on) by its id
    `control-NAME`; an inconclusive result or a failed approve control still fails the run, so a
    server the CI gate can hold green has neither. The run must have found something,
    or the check proves nothing about the baseline.
    """
    findings = [r for r in run.results if r.verdict in (Verdict.VULNERABLE, Verdict.WEAK)]
    assert findings, "no finding to baseline"
    baseline = baseline_from_mapping(yaml.safe_load(baseline_of(run)), catalogue, source="this run")
    tools = sorted({r.tool for r in run.results})
    lines = failing(run.results, run.controls, baseline, tools=tools)
    assert lines == [], lines
    marks = {r.id: baseline.mark(r) for r in findings}
    assert {m.status if m else None for m in marks.values()} == {ACCEPTED}, marks


def assert_green_as_it_is(run: AuditRun) -> None:
    """A careful server's audit exits 0 with no baseline: no finding, no inconclusive, every control held."""
    lines = failing(run.results, run.controls, None)
    assert lines == [], lines
    weak = [(r.id, r.reason) for r in run.results if r.verdict is Verdict.WEAK]
    assert weak == []  # a warning, not a failure, without --mcp-strict: held to zero all the same
