"""Servers that misbehave on purpose: the run ends, says what it could not test and why, and leaves nothing.

Each test runs the plugin against one mode of targets/hostile/server.py, started as written (never forked
from a zygote): a pytest run inside this process (`runpytest_inprocess`, which spares a Python start and
the harness's imports), or in a process of its own where that is the point (a run stopped by SIGTERM; the
sandbox's place taken from the child's TMPDIR) or where a run stops at its start (which leaves pytester's
in-process run no result to read). A run that does not end within BOUND seconds fails the test (a
liveness bound, not a speed measurement): in process, `bounded()` ends the process that hangs (exit
status 1), so a hang is a failure (a crashed worker under xdist), never a stalled suite. Afterwards no
process whose command line carries the run's marker may be alive: the marker is in the target's command
line and in its children's, so /proc tells the truth whatever the harness believes.
"""

from __future__ import annotations

import faulthandler
import json
import os
import shlex
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from deadline import deadline
from leftovers import survivors

HOSTILE_SERVER = Path(__file__).resolve().parents[2] / "targets" / "hostile" / "server.py"

# Generous: every round trip times out after 1 s, a start after 3 s, and the
# selections below hold a handful of attacks (each bounded at 8 round trips).
BOUND = deadline(90)


@pytest.fixture
def marker() -> str:
    return f"hostile-{uuid.uuid4().hex}"


@contextmanager
def bounded() -> Iterator[None]:
    """The liveness bound of an inner run in this process: past BOUND, the process ends with status 1."""
    faulthandler.dump_traceback_later(BOUND, exit=True, file=sys.__stderr__)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


def audit(
    pytester: pytest.Pytester, mode: str, marker: str, *args: str, own_process: bool = False
) -> pytest.RunResult:
    command = shlex.join(
        [sys.executable, str(HOSTILE_SERVER), "--root", "{root}", "--mode", mode, "--marker", marker]
    )
    options = (
        *("--mcp-target", command, "--mcp-call-timeout", f"{deadline(1):g}"),
        # Long enough for a loaded machine to start Python and the SDK; only "silent" waits it out.
        *("--mcp-start-timeout", f"{deadline(10):g}", "-W", "default", *args),
    )
    if own_process:
        return pytester.runpytest_subprocess(*options, timeout=BOUND)
    with bounded():
        # Without pytest's faulthandler plugin, whose hooks cancel any timer set (an inner failure would).
        return pytester.runpytest_inprocess(*options, "-p", "no:faulthandler")


def output_of(result: pytest.RunResult) -> str:
    return result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize(
    ("mode", "says"),
    [
        (
            "exit-at-start",
            "did not start: it exited with status 3 before answering initialize (stderr ends: hostile-server: refusing to start)",
        ),
        (
            "hang-on-list",
            f"did not answer tools/list within {deadline(1):g}s; target stderr: hostile-server: tools/list",
        ),
    ],
    # "silent" (a target that never answers at all) is test_the_start_timeout_has_an_ini_twin's: it waits
    # out the start timeout, a short one from the ini file rather than the long one here.
    ids=["exit-at-start", "hang-on-list"],
)
def test_a_target_that_never_gets_going_is_one_clear_line_and_leaves_no_process(
    pytester: pytest.Pytester, marker: str, mode: str, says: str
) -> None:
    # In a process of its own: a run that stops at its start leaves pytester's in-process run no result.
    result = audit(pytester, mode, marker, own_process=True)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    output = output_of(result)
    assert says in output
    assert "Traceback" not in output
    assert survivors(marker) == []


@pytest.mark.parametrize(
    ("mode", "why", "cause"),
    [
        (
            "crash-on-call",
            "*honest flow failed*Connection closed; target stderr: *hostile-server: tools/call: crashing*",
            "hostile-server: tools/call: crashing",
        ),
        (
            "hang-on-answer",
            f"*honest flow failed*no answer within {deadline(1):g}s; target stderr: *blocking forever*",
            "hostile-server: tools/call with answers: blocking forever",
        ),
        (
            # Answered, not lost: the reply says only `Error executing tool`, the target's stderr says why.
            "raise-on-answer",
            "*honest flow failed*Error executing tool delete_file*",
            "target stderr: hostile-server: tools/call with answers: the disk is on fire",
        ),
    ],
    ids=["crash-on-call", "hang-on-answer", "raise-on-answer"],
)
def test_a_target_that_dies_hangs_or_fails_in_the_honest_flow_makes_every_attack_an_error_saying_why(
    pytester: pytest.Pytester, marker: str, mode: str, why: str, cause: str
) -> None:
    result = audit(pytester, mode, marker, "-k", "MCA-REPLAY or control-approve", "--mcp-report-dir", "out")
    outcomes = result.parseoutcomes()
    # The approve control is the error; the attacks it leaves unjudged fail the run as inconclusive.
    assert (outcomes.get("errors"), outcomes.get("inconclusive")) == (1, 3), outcomes
    assert "passed" not in outcomes
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([why])
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    assert {r["verdict"] for r in report["results"]} == {"inconclusive"}
    # Every unjudged attack says why, in the target's own words: its stderr goes with the sandbox.
    assert all(cause in r["reason"] for r in report["results"]), [r["reason"] for r in report["results"]]
    assert survivors(marker) == []


def test_a_reply_no_client_of_the_era_can_read_is_a_line_saying_what_to_pin_never_a_crash(
    pytester: pytest.Pytester, marker: str
) -> None:
    # actgate 0.3.0's shape: a proxy writes its own results without resultType over 2026-07-28. The SDK
    # rejects each one; that was an INTERNALERROR of the whole run (exit 3) with pydantic's traceback.
    selection = ("-k", "MCA-REPLAY or control-approve", "--mcp-report-dir", "out")
    result = audit(pytester, "old-shaped-results", marker, *selection)
    output = output_of(result)
    assert "INTERNALERROR" not in output
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # The delete took effect (its reply is what no client reads): approve holds, and each attack, whose
    # honest redemption gets such a reply, is an error that says why and what to pin.
    result.assert_outcomes(passed=1, errors=3)
    result.stdout.fnmatch_lines(["*a reply no client of 2026-07-28 can read (*resultType: Field required)*"])
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    assert {r["verdict"] for r in report["results"]} == {"inconclusive"}
    pin = "pin that era in a profile (protocol: '2025-11-25')"
    assert all(pin in r["reason"] for r in report["results"]), [r["reason"] for r in report["results"]]
    assert survivors(marker) == []


def still_judged(result: pytest.RunResult, out: Path) -> None:
    """The controls and the three replays judged as on the careful server: refused by the tool."""
    assert result.ret == pytest.ExitCode.OK, output_of(result)
    result.assert_outcomes(passed=7, skipped=1)  # an MRTR tool skips control-preview-alone
    report = json.loads((out / "audit.json").read_text())
    assert {(r["verdict"], r["layer"]) for r in report["results"]} == {("refused", "tool")}
    # An enormous answer is evidence in a few hundred characters, not 20 MB.
    assert (out / "audit.json").stat().st_size < 100_000


# spawn-children is judged the same way by test_the_harness_writes_nothing_outside_its_sandbox_and_removes_it.
@pytest.mark.parametrize("mode", ["non-json-stdout", "enormous-response", "slow", "ignore-sigterm"])
def test_a_target_that_misbehaves_around_a_working_flow_is_still_judged_and_leaves_no_process(
    pytester: pytest.Pytester, marker: str, mode: str
) -> None:
    result = audit(pytester, mode, marker, "-k", "MCA-REPLAY or control", "--mcp-report-dir", "out")
    still_judged(result, pytester.path / "out")
    assert survivors(marker) == []


def test_a_second_process_that_will_not_start_leaves_its_attacks_inconclusive_and_nothing_interrupted(
    pytester: pytest.Pytester, marker: str
) -> None:
    # FORGE-006 needs a state minted by another process on the same root; this target refuses one.
    result = audit(
        pytester,
        "once-per-root",
        marker,
        *(
            "-k",
            "MCA-FORGE-006 or MCA-REPLAY-001",
            "--mcp-report-dir",
            "out",
            "--mcp-start-timeout",
            f"{deadline(60):g}",
        ),
    )
    assert "harness error" not in output_of(result)
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    verdicts = {r["id"]: (r["verdict"], r["reason"]) for r in report["results"]}
    verdict, reason = verdicts["MCA-FORGE-006"]
    assert verdict == "inconclusive"
    assert "could not be opened" in reason
    assert "another process already serves this root" in reason
    assert verdicts["MCA-REPLAY-001"][0] == "refused"
    assert report["scope"]["stopped_early"] is None
    assert survivors(marker) == []


def test_an_input_that_hangs_the_target_twice_is_a_weak_robustness_finding_with_its_stderr(
    pytester: pytest.Pytester, marker: str
) -> None:
    result = audit(pytester, "hang-on-long-input", marker, "-k", "ROBUST-001", "--mcp-strict")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*verdict: weak*refused by: transport*",
            f"*the same input stopped two processes of the target*no answer within {deadline(1):g}s*"
            "hostile-server: tools/call with a 655??-character argument: blocking forever*",
        ]
    )
    assert survivors(marker) == []


def test_the_harness_writes_nothing_outside_its_sandbox_and_removes_it(
    pytester: pytest.Pytester, marker: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))  # the sandbox goes here, in the child pytest
    before = sorted(p.name for p in pytester.path.iterdir())
    # A target whose children outlive their calls, judged as any misbehaving target is (the reports
    # go beside the scratch folder, outside the inner run's).
    out = tmp_path / "out"
    args = ("-k", "MCA-REPLAY or control", "--mcp-report-dir", str(out), "-p", "no:cacheprovider")
    result = audit(pytester, "spawn-children", marker, *args, own_process=True)
    still_judged(result, out)
    assert list(scratch.iterdir()) == []
    # What pytester itself keeps of the inner run: its temporary directory and output.
    own = {"runpytest-0", "runpytest-current", "stdout", "stderr"}
    assert sorted(p.name for p in pytester.path.iterdir() if p.name not in own) == before
    assert survivors(marker) == []


def test_the_start_timeout_has_an_ini_twin(pytester: pytest.Pytester, marker: str) -> None:
    command = shlex.join(
        [sys.executable, str(HOSTILE_SERVER), "--root", "{root}", "--mode", "silent", "--marker", marker]
    )
    # A target that never answers at all: one clear line once the start timeout (set in the ini file) is out.
    start = deadline(2)
    pytester.makeini(f"[pytest]\nmcp_start_timeout = {start:g}\n")
    result = pytester.runpytest_subprocess("--mcp-target", command, timeout=BOUND)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    output = output_of(result)
    assert (
        f"did not answer server/discover within {start:g}s (stderr: hostile-server: reading stdin" in output
    )
    assert "Traceback" not in output
    assert survivors(marker) == []


@pytest.mark.parametrize("option", ["--mcp-call-timeout", "--mcp-start-timeout"])
def test_a_timeout_that_is_not_a_positive_number_is_a_usage_error(
    pytester: pytest.Pytester, option: str
) -> None:
    command = shlex.join([sys.executable, str(HOSTILE_SERVER), "--root", "{root}", "--mode", "silent"])
    result = pytester.runpytest("--mcp-target", command, option, "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{option} must be a positive number of seconds, got 0.0*"])


def test_a_run_stopped_by_sigterm_writes_its_report_and_leaves_no_process_or_sandbox(
    tmp_path: Path, marker: str
) -> None:
    # `timeout 600 mcp-confirm-audit run ...`, or a CI runner cancelling the job: SIGTERM mid-audit.
    import signal
    import subprocess

    scratch = tmp_path / "scratch"
    scratch.mkdir()
    command = shlex.join(
        [
            *(sys.executable, str(HOSTILE_SERVER), "--root", "{root}"),
            *("--mode", "slow", "--delay", "0.5", "--marker", marker),
        ]
    )
    run = subprocess.Popen(
        [
            *(sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--mcp-target", command),
            *("--mcp-report-dir", str(tmp_path / "out"), "-k", "MCA-REPLAY or control"),
        ],
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(scratch)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert run.stdout is not None
    seen = []
    for line in run.stdout:  # until the controls are judged and the attacks begin
        seen.append(line)
        if b"controls on delete_file" in line:
            break
    assert survivors(marker), b"".join(seen).decode(errors="replace")
    run.send_signal(signal.SIGTERM)
    out, _ = run.communicate(timeout=BOUND)
    assert run.returncode == pytest.ExitCode.INTERRUPTED, out.decode(errors="replace")[-2000:]
    assert (tmp_path / "out" / "audit.json").is_file()
    assert survivors(marker) == []
    assert list(scratch.iterdir()) == []


def test_a_name_that_takes_the_target_down_for_good_is_named_by_every_attack_it_left_unjudged(
    pytester: pytest.Pytester, marker: str
) -> None:
    # actgate 0.3.0 (trial 15): one file name holding U+0085 split a line of its ledger, and every later
    # call and start on that root died reading it. Every later attack was a harness error, or inconclusive
    # with only "Connection closed": nothing said which request took it down, or that it stayed down.
    args = ("-k", "MCA-PROMPT-001 or MCA-SYMLINK-001", "--mcp-report-dir", "out", "--mcp-seed", "1")
    result = audit(pytester, "poisoned-by-a-line-break", marker, *args)
    assert "harness error" not in output_of(result)
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    after = next(r for r in report["results"] if r["id"] == "MCA-SYMLINK-001")
    assert after["verdict"] == "inconclusive"
    assert "the target no longer starts on this root" in after["reason"], after["reason"]
    assert "malformed ledger line" in after["reason"], after["reason"]
    assert (
        "the target stopped answering during MCA-PROMPT-001, the last request it answered" in after["reason"]
    )
    review = (pytester.path / "out" / "review.md").read_text()
    assert "because the target stopped answering during MCA-PROMPT-001 and did not answer again" in review
    assert survivors(marker) == []
