"""The plugin's options for request state in depth, black-box through pytester.

Replicas, redemptions and a served root from the command line or the ini file;
families that need configuration skip with the way to configure them, never
pass silently; an in-process target reports what refuses each attack once the
SDK's boundary is gone.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"
IN_PROCESS = f"py:{SERVER}:build_server"


def http_target() -> str:
    return shlex.join(
        [sys.executable, str(SERVER), "--root", "{root}", "--transport", "http", "--port", "{port}"]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--mcp-replicas", "0"], "'replicas' must be a whole number from 1 to 64"),
        (["--mcp-redemptions", "many"], "--mcp-redemptions must be a whole number"),
        (["--mcp-root", "/nonexistent/dir"], "'root' is only for a URL target"),
    ],
)
def test_bad_topology_options_are_usage_errors_that_say_what_to_fix(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    result = pytester.runpytest("--mcp-target", IN_PROCESS, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


def test_a_url_target_needs_the_root_it_serves(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--mcp-target", "http://127.0.0.1:9/mcp")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*pass --mcp-root DIR*"])


def test_families_that_need_configuration_are_skipped_with_how_to_configure_them(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest("--mcp-target", IN_PROCESS, "-k", "MCA-REPLICA or MCA-EXPIRY", "-rs")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(skipped=6)
    result.stdout.fnmatch_lines(
        ["*SKIPPED [[]5[]]*pass --mcp-replicas 2 (or replicas: 2 in the profile)*", "*SKIPPED*set ttl_flag*"]
    )


def test_an_in_process_target_reports_which_layers_refuse_each_attack_on_their_own(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest(
        "--mcp-target",
        IN_PROCESS,
        "-k",
        "XTARGET-001 or XTARGET-002 or MCA-REPLAY-001",
        "--mcp-report-dir",
        "out",
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "ablation: each attack again, with the SDK's request-state boundary removed",
            "MCA-XTARGET-001 other-file *refused (tool)*sdk-boundary, tool*redundant",
            "MCA-XTARGET-002 added-argument *vulnerable*sdk-boundary *load-bearing",
        ]
    )
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    assert report["target"]["transport"] == "in-process"
    by_id = {r["id"]: r for r in report["results"]}
    assert by_id["MCA-XTARGET-002"]["ablation"]["removed_guard"] == "load-bearing"
    assert by_id["MCA-XTARGET-001"]["ablation"]["refused_alone_by"] == ["sdk-boundary", "tool"]
    assert by_id["MCA-REPLAY-001"]["ablation"] is None  # the tool refused it: nothing to take away


def test_replicas_of_an_http_target_from_the_ini_file(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nmcp_replicas = 2\nmcp_redemptions = 4\n")
    result = pytester.runpytest(
        "--mcp-target", http_target(), "-k", "REPLICA-001 or DSPEND-001", "--mcp-report-dir", "out", "-rs"
    )
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=2)
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    assert (report["target"]["transport"], report["target"]["replicas"]) == ("http", 2)
    assert report["target"]["processes_started"] == 2
    honest = next(r for r in report["results"] if r["id"] == "MCA-REPLICA-001")
    assert honest["reason"].startswith("fail-closed")
    spend = next(r for r in report["results"] if r["id"] == "MCA-DSPEND-001")
    assert sum("redemption" in line and "of 4" in line for line in spend["evidence"]) == 4


def test_the_shipped_replicas_profile_shares_one_key_and_one_ledger(pytester: pytest.Pytester) -> None:
    profile = SERVER.parents[1] / "reference-replicas.yaml"
    chosen = "REPLICA-001 or REPLICA-002 or FORGE-006"
    result = pytester.runpytest("--mcp-profile", str(profile), "-k", chosen, "-rs")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=2, skipped=1)
    result.stdout.fnmatch_lines(["*MCA-REPLICA-001*refused*tool*", "*SKIPPED*shared_key_env*"])
