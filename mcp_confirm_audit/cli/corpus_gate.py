"""The corpus under the CI gate: each flawed case green under a baseline of its own findings.

A flawed case's audit is written out as `mcp-confirm-audit baseline` writes it (the CLI's own
writer, `report/baseline_file.py`), read back by the plugin's loader, and its results are put to
`engine/gate.failing`, the pure function every item of a real `--mcp-baseline` run asks: the
lines it gives are why that run would exit 1, none that it exits 0. For a sample of the cases
the CLI is run again for real, `run --baseline`, on the same case, and its exit status is kept.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

if TYPE_CHECKING:
    from ..models import ControlResult, Result

# The console script's entry point, run by this interpreter (the venv's `mcp-confirm-audit`).
_MAIN = "import sys; from mcp_confirm_audit.cli.main import main; sys.exit(main())"
REASON = "accepted in the corpus, on purpose: the flaw of this case"


def baseline_text(results: Sequence[Result], controls: Sequence[ControlResult]) -> str:
    """The baseline `mcp-confirm-audit baseline` writes from this run, its TODO reasons filled in."""
    from ..report.baseline_file import baseline_from_audit

    document = {"results": [r.as_dict() for r in results], "controls": [c.as_dict() for c in controls]}
    return baseline_from_audit(document, "the corpus's audit").replace(
        "TODO say why this is accepted", REASON
    )


def gated(results: Sequence[Result], controls: Sequence[ControlResult], text: str) -> list[str]:
    """Why a run of these results gated by the baseline `text` exits 1, one line each; [] exits 0.

    A run with no finding proves nothing about a baseline: that is a line too.
    """
    from ..catalogue.loader import load_catalogue
    from ..engine.baseline import baseline_from_mapping
    from ..engine.gate import failing
    from ..models import Verdict

    # A refusal control that failed is a finding too (a decline that acted), and a baseline holds it.
    if not any(r.verdict in (Verdict.VULNERABLE, Verdict.WEAK) for r in results) and not any(
        c.finding for c in controls
    ):
        return ["no finding to baseline"]
    baseline = baseline_from_mapping(yaml.safe_load(text), load_catalogue(), source="the corpus's baseline")
    # The tools this run audited: those of its results, and of its controls (a run of controls alone).
    tools = sorted({r.tool for r in results} | {c.tool for c in controls})
    return failing(results, controls, baseline, tools=tools)


def rerun(
    profile_file: Path | None,
    raw: Mapping[str, Any] | None,
    command: str | None,
    *,
    text: str,
    families: Sequence[str] | None,
    timeouts: tuple[float, float],
    env: Mapping[str, str],
    seed: int,
    examples: int,
) -> tuple[int, str]:
    """`mcp-confirm-audit run --baseline` of one case for real: its exit status, and what it said.

    The case is given as its profile file (and command), or as the mapping of its keys, written
    out for the run; only `families` run (the controls always do). An exit 0 that excused no
    finding proves nothing about the baseline: it is returned as -1.
    """
    with tempfile.TemporaryDirectory(prefix="mca-corpus-") as folder:
        here = Path(folder)
        baseline = here / "baseline.yaml"
        baseline.write_text(text, encoding="utf-8")
        if profile_file is None:
            profile_file = here / "profile.yaml"
            profile_file.write_text(yaml.safe_dump(dict(raw or {})), encoding="utf-8")
        words = [sys.executable, "-c", _MAIN, "run"]
        words += [*([command] if command else []), "--profile", str(profile_file)]
        words += ["--baseline", str(baseline), "--report-dir", str(here / "report"), "--"]
        words += [f"--mcp-call-timeout={timeouts[0]}", f"--mcp-start-timeout={timeouts[1]}"]
        words += [f"--mcp-seed={seed}", f"--mcp-examples={examples}", "-q", "-p", "no:cacheprovider"]
        if families is not None:
            markers = ["mcp_control", *("mcp_" + f.replace("-", "_") for f in families)]
            words += ["-m", " or ".join(markers)]
        done = subprocess.run(
            words,
            capture_output=True,
            text=True,
            check=False,
            cwd=folder,
            env={**os.environ, **env},
            timeout=1800,
        )
        accepted = _accepted(here / "report" / "audit.json")
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    said = lines[-1] if lines else done.stderr.strip()[-200:]
    if done.returncode == 0 and not accepted:
        return -1, f"exited 0 but excused no finding: {said}"
    return done.returncode, f"{accepted} finding(s) excused by the baseline; {said}"


def _accepted(audit: Path) -> int:
    try:
        document = json.loads(audit.read_text(encoding="utf-8"))
        return int((document.get("baseline") or {}).get("accepted") or 0)
    except (OSError, ValueError, AttributeError):
        return 0
