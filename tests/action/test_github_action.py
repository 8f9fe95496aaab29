"""The composite GitHub Action: its definition, and its steps (scripts in action/) run for real.

Each step script is run as the runner runs it, with a fake `$GITHUB_OUTPUT`
and `$GITHUB_STEP_SUMMARY`; the audit step audits the reference server.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from deadline import deadline
from once import once

REPO = Path(__file__).resolve().parents[2]
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
SERVER = REPO / "targets" / "reference" / "server.py"


def script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"action_{name}", REPO / "action" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


audit = script("audit")


def outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines())


def run_step(name: str, tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    output, summary = tmp_path / "github_output", tmp_path / "step_summary"
    environ = {
        "PATH": "/usr/bin:/bin",
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
        **env,
    }
    done = subprocess.run(
        [sys.executable, str(REPO / "action" / f"{name}.py")],
        env=environ,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=deadline(300),
    )
    return done, output, summary


# -- the definition --------------------------------------------------------------


def test_no_input_is_interpolated_into_a_shell_line() -> None:
    # `${{ inputs.x }}` in run: is template injection (what zizmor flags): a branch
    # name or an input becomes shell code. Inputs reach the scripts through env: only.
    for step in ACTION["runs"]["steps"]:
        if "run" in step:
            assert "${{" not in step["run"], step["name"]
            assert re.fullmatch(r'python3 "\$GITHUB_ACTION_PATH/action/\w+\.py"', step["run"]), step["run"]


def test_the_inputs_are_the_ones_asked_for_and_each_reaches_a_step() -> None:
    inputs = set(ACTION["inputs"])
    assert {"target", "profile", "args", "version", "baseline", "fail-on", "sarif", "category"} <= inputs
    assert ACTION["inputs"]["sarif"]["default"] == "true"
    used = json.dumps(ACTION["runs"]["steps"])
    for name in inputs:
        assert f"inputs.{name}" in used, name


def test_every_output_is_one_the_audit_step_writes(flawed_run: FlawedRun) -> None:
    written = set(outputs(flawed_run.output))
    for name, spec in ACTION["outputs"].items():
        assert spec["value"] == f"${{{{ steps.audit.outputs.{name} }}}}"
        assert name in written, name
    assert {"vulnerable", "weak", "refused", "inconclusive", "not-applicable", "gate"} <= set(
        ACTION["outputs"]
    )


def test_the_upload_is_not_tried_from_a_forks_pull_request_and_falls_back() -> None:
    steps = {step["name"]: step for step in ACTION["runs"]["steps"]}
    upload = steps["Upload the findings to code scanning"]
    assert upload["uses"].startswith("github/codeql-action/upload-sarif@")
    assert "github.event.pull_request.head.repo.fork" in upload["if"]
    assert upload["continue-on-error"] is True
    note = steps["Say where the findings are when code scanning did not take them"]
    assert "steps.upload.outcome != 'success'" in note["if"]
    assert steps["Keep the reports as an artifact"]["uses"].startswith("actions/upload-artifact@")
    assert list(steps)[-1] == "Gate"


def test_the_readmes_workflow_is_valid_yaml_and_uses_only_the_actions_inputs() -> None:
    readme = (REPO / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", readme, flags=re.DOTALL)
    workflows = [yaml.safe_load(b) for b in blocks if "jobs:" in b and "uses: " in b]
    assert workflows, "the README shows a workflow that uses the action"
    used = [
        step
        for workflow in workflows
        for job in workflow["jobs"].values()
        for step in job["steps"]
        if str(step.get("uses", "")).split("@")[0].endswith("mcp-confirm-audit")
    ]
    assert used
    for step in used:
        assert set(step.get("with", {})) <= set(ACTION["inputs"]), step["with"]


# -- the audit step, for real ------------------------------------------------------


def _target(*options: str) -> str:
    return shlex.join([sys.executable, str(SERVER), "--root", "{root}", *options])


def _flawed_run(tmp_path: Path) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    done, output, summary = run_step(
        "audit",
        tmp_path,
        MCA_TARGET=_target("--flaw", "no-ledger"),
        MCA_ARGS="-k 'MCA-REPLAY-001 or control' -p no:cacheprovider",
        MCA_FAIL_ON="medium",
    )
    return output, summary, done


@dataclass(frozen=True)
class FlawedRun:
    folder: Path
    output: Path
    summary: Path
    done: subprocess.CompletedProcess[str]


def _audit_step(folder: Path) -> None:
    *_, done = _flawed_run(folder)
    said = {"args": done.args, "returncode": done.returncode, "stdout": done.stdout, "stderr": done.stderr}
    (folder / "done.json").write_text(json.dumps(said))


@pytest.fixture(scope="module")
def flawed_run(tmp_path_factory: pytest.TempPathFactory) -> FlawedRun:
    """The audit step on the no-ledger flaw under the default threshold, run once for the tests that read it.

    Once for the whole run (tests/once.py), whichever xdist workers its tests land on.
    """
    folder = once(tmp_path_factory, "action-audit-step", _audit_step)
    done = subprocess.CompletedProcess(**json.loads((folder / "done.json").read_text()))
    return FlawedRun(folder, folder / "github_output", folder / "step_summary", done)


def test_a_flawed_server_fails_the_gate_with_its_counts_summary_and_reports(flawed_run: FlawedRun) -> None:
    output, summary, done = flawed_run.output, flawed_run.summary, flawed_run.done
    assert done.returncode == 0, done.stderr  # the gate step fails the job, after the uploads
    said = outputs(output)
    assert (said["vulnerable"], said["refused"], said["inconclusive"]) == ("1", "0", "0")
    assert (said["gate"], said["findings"]) == ("fail", "1")
    assert said["gate-reason"] == "1 finding(s) at or above medium"
    assert said["category"] == "mcp-confirm-audit/mcp-confirm-reference"  # the server's name
    assert said["confinement"].startswith(("unshare (", "none: "))  # the regime, as the review's head says
    assert f"| Confinement | `{said['confinement']}` |" in summary.read_text()
    for key in ("audit-json", "review-md", "sarif-file"):
        assert (flawed_run.folder / said[key]).is_file()
    text = summary.read_text()
    assert text.startswith("**Gate: fail** (fail-on: medium): 1 finding(s) at or above medium")
    assert "## Summary" in text
    assert "What to fix" in text
    assert "## Findings" not in text  # the summary only; the rest is in review.md
    # The target's strings cannot be read as workflow commands while the audit runs.
    lines = done.stdout.splitlines()
    assert lines[0].startswith("::stop-commands::")
    assert lines[-1] == f"::{lines[0].split('::')[2]}::"


def test_the_threshold_decides_which_findings_fail_the_gate(flawed_run: FlawedRun) -> None:
    # MCA-REPLAY-001 is filed as high: under fail-on critical it is counted, and passes.
    # The gate is a pure function of the report and the input (main() hands `fail_on` to
    # judge()): the shared run's real audit.json, judged again under critical, proves it
    # without a second audit; the input's own reading is checked on the same words here.
    assert audit.Inputs.from_environ({"MCA_TARGET": "x", "MCA_FAIL_ON": "Critical "}).fail_on == "critical"
    said = outputs(flawed_run.output)
    report = json.loads((flawed_run.folder / said["audit-json"]).read_text())
    gate = audit.judge(report, int(said["exit-code"]), "critical")
    assert (gate.counts["vulnerable"], gate.passed, gate.findings) == (1, True, 0)
    assert gate.reason == "no finding at or above critical"


def test_an_input_is_never_run_as_shell(tmp_path: Path) -> None:
    _, output, _ = run_step(
        "audit", tmp_path, MCA_TARGET="$(touch pwned) --root {root}", MCA_ARGS="; touch pwned2"
    )
    assert not (tmp_path / "pwned").exists()
    assert not (tmp_path / "pwned2").exists()
    said = outputs(output)
    assert said["gate"] == "fail"
    assert said["gate-reason"].startswith("no report:")


def test_a_missing_target_or_a_bad_threshold_fails_the_gate_saying_which_input(tmp_path: Path) -> None:
    _, output, summary = run_step("audit", tmp_path)
    assert (
        outputs(output)["gate-reason"] == "give the action a target (the server command or URL) or a profile"
    )
    assert "**Gate: fail**" in summary.read_text()
    output.unlink()
    _, output, _ = run_step("audit", tmp_path, MCA_TARGET="x", MCA_FAIL_ON="severe")
    assert "fail-on must be one of critical, high, medium, low, info, none" in output.read_text()


# -- the gate, a pure function of the report -----------------------------------------


def _audit(*results: dict[str, Any], **extra: Any) -> dict[str, Any]:
    approve = {"name": "approve", "tool": "t", "passed": True, "applicable": True}
    return {"results": list(results), "controls": [approve], **extra}


def _result(verdict: str, severity: str = "high", **extra: Any) -> dict[str, Any]:
    return {"verdict": verdict, "rated_severity": severity, "baseline": None, **extra}


@pytest.mark.parametrize(
    ("report", "fail_on", "passed", "reason"),
    [
        (_audit(_result("refused")), "medium", True, "no finding at or above medium"),
        (_audit(_result("weak", "low")), "medium", True, "no finding at or above medium"),
        (_audit(_result("weak", "low")), "low", False, "1 finding(s) at or above low"),
        (
            _audit(_result("vulnerable", "high", baseline={"status": "accepted"})),
            "low",
            True,
            "no finding at or above low",
        ),
        # Never a pass, whatever the threshold: not judged is not safe.
        (
            _audit(_result("inconclusive")),
            "none",
            False,
            "1 attack(s) could not be judged (inconclusive is never a pass)",
        ),
        (
            _audit(baseline={"stale": 1}),
            "none",
            False,
            "1 stale baseline entr(y/ies): a fixed finding still listed",
        ),
        (
            {
                "results": [],
                "controls": [{"name": "approve", "tool": "t", "passed": False, "applicable": True}],
            },
            "none",
            False,
            "not audited: the honest flow failed on t",
        ),
        (
            _audit(controls=None)
            | {"controls": [{"name": "decline", "tool": "t", "passed": False, "applicable": True}]},
            "high",
            False,
            "1 finding(s) at or above high",
        ),
    ],
)
def test_the_gate(report: dict[str, Any], fail_on: str, passed: bool, reason: str) -> None:
    gate = audit.judge(report, 0, fail_on)
    assert (gate.passed, gate.reason) == (passed, reason)


def test_a_search_that_gave_up_is_no_finding_and_a_decline_that_acted_is_one() -> None:
    # audit.json counts the failed refusal controls; zero configuration's search giving up is none of them.
    gave_up = {"name": "search", "tool": "t", "passed": False, "applicable": True}
    approve = {"name": "approve", "tool": "t", "passed": False, "applicable": True}
    searched = {"results": [], "controls": [approve, gave_up], "summary": {"failed_refusal_controls": 0}}
    gate = audit.judge(searched, 1, "high")
    assert (gate.passed, gate.reason, gate.findings) == (False, "not audited: the honest flow failed on t", 0)
    declined = _audit(summary={"failed_refusal_controls": 1})
    declined["controls"] += [gave_up | {"name": "decline"}]
    assert audit.judge(declined, 1, "high").findings == 1


def test_no_report_fails_the_gate_naming_the_exit_code() -> None:
    assert audit.judge(None, 2, "medium").reason == "no report: the target would not start or offered no tool"


def test_an_output_value_is_one_line_whatever_the_target_named() -> None:
    assert audit._outputs({"gate-reason": "a\ngate=pass"}) == "gate-reason=a gate=pass\n"


# -- the other steps -----------------------------------------------------------------


def test_the_gate_step_fails_the_job_only_when_the_gate_failed(tmp_path: Path) -> None:
    passed, _, _ = run_step("gate", tmp_path, MCA_GATE="pass", MCA_GATE_REASON="no finding")
    failed, _, _ = run_step(
        "gate", tmp_path, MCA_GATE="fail", MCA_GATE_REASON="1 finding(s) at or above medium"
    )
    assert passed.returncode == 0
    assert failed.returncode == 1
    assert failed.stdout.strip() == "::error title=mcp-confirm-audit gate::1 finding(s) at or above medium"


def test_the_fallback_note_names_the_artifact_in_the_summary(tmp_path: Path) -> None:
    _, _, summary = run_step("fallback_note", tmp_path, MCA_ARTIFACT="mcp-audit-server")
    assert "audit.sarif was not uploaded to code scanning" in summary.read_text()
    assert "`mcp-audit-server` artifact" in summary.read_text()


def test_install_takes_a_release_number_or_the_actions_own_checkout() -> None:
    install = script("install")
    assert install.requirement({"GITHUB_ACTION_PATH": "/a", "MCA_VERSION": ""}) == "/a"
    assert install.requirement({"MCA_VERSION": "0.1.0"}) == "mcp-confirm-audit==0.1.0"
    with pytest.raises(SystemExit, match="must be a release number"):
        install.requirement({"MCA_VERSION": "0.1; curl evil"})


def test_the_confinement_step_runs_before_the_audit_and_lifts_only_a_restriction_in_force(
    tmp_path: Path,
) -> None:
    names = [step["name"] for step in ACTION["runs"]["steps"]]
    lift = names.index("Allow the target's confinement (user namespaces)")
    assert lift < names.index("Audit the server's confirmations")
    userns = script("userns")
    knob = tmp_path / "apparmor_restrict_unprivileged_userns"
    assert userns.command(knob) is None  # no such knob (ubuntu-22.04, other kernels)
    knob.write_text("0\n")
    assert userns.command(knob) is None
    knob.write_text("1\n")
    assert userns.command(knob)[-3:] == ["sysctl", "-w", "kernel.apparmor_restrict_unprivileged_userns=0"]
