"""`mcp-confirm-audit bench` runs and prints what it measured; the figures themselves live in the README."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import sys
from pathlib import Path

import pytest

from mcp_confirm_audit.cli import main as cli
from mcp_confirm_audit.cli.bench import AuditCost, BenchResult

TARGETS = Path(__file__).resolve().parents[2] / "targets"
# What a bench result needs of its audit where only its timings are read.
_NO_COST = AuditCost(
    seconds=0.0,
    attacks=0,
    processes_started=1,
    second_process_attacks=0,
    tool_listings=0,
    tool_calls=0,
    plan=None,
)  # type: ignore[arg-type]
CAREFUL = shlex.join([sys.executable, str(TARGETS / "reference" / "server.py"), "--root", "{root}"])


def bench(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(["bench", "--repeat", "1", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_bench_prints_audit_floor_ratio_processes_and_round_trips(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = bench(capsys, "--mcp-target", CAREFUL, "--family", "replay", "--family", "forged-state")
    assert code == 0
    fields = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    assert re.fullmatch(r"\d+\.\d{3} s", fields["audit"])
    assert re.fullmatch(
        r"\d+\.\d{3} s \(a bare SDK client, one server process, the audit's own requests again\)",
        fields["floor"],
    )
    # The floor sends the audit's own requests, not round one on a plain name.
    sent = re.fullmatch(
        r"the (\d+) tools/call the audit sent, in its order, .*", fields["the floor's requests"]
    )
    assert sent is not None
    assert re.fullmatch(r"\d+\.\d\dx", fields["ratio"])
    # One run: its one pair, no spread to give; set against the floor with as many servers as the audit.
    paired = fields["ratio of each audit to the floor with 2 servers run right after it"]
    assert re.fullmatch(r"median \d+\.\d\dx", paired)
    assert re.fullmatch(r"\d+\.\d\dx", fields["ratio to it"])
    # The audit's own round trips (what its requests cost, whatever they carry) in place of the floor's.
    assert re.fullmatch(
        r"\d+\.\d{3} s \(the audit's requests, timed as it sent them; the floor's: \d+\.\d{3} s\)",
        fields["in its own round trips"],
    )
    assert re.fullmatch(
        r"\d+\.\d{3} s \(the floor's start and stop with 2 servers, the audit's round trips\)",
        fields["floor with the audit's own round trips"],
    )
    assert re.fullmatch(r"\d+\.\d\dx", fields["ratio to the floor with its own round trips"])
    assert re.fullmatch(
        r"-?\d+\.\d{3} s in controls and attacks, -?\d+\.\d\d ms per attack",
        fields["the harness's own work between its round trips"],
    )
    # forged-state holds the one attack that needs a state from another process.
    assert fields["server processes started"] == "2"
    assert fields["attacks"] == "23 (1 need a second server process)"
    trips = re.fullmatch(r"(\d+) \(1 tools/list, (\d+) tools/call\)", fields["round trips"])
    assert trips is not None
    assert int(trips[1]) == int(trips[2]) + 1 > 23
    assert int(sent[1]) == int(trips[2])
    # Over stdio most of the work is in the server's processes: this process's CPU time is the harness's
    # own, set against the bare client's with as many servers, never called the audit's.
    assert "cpu (" not in out
    assert re.fullmatch(
        r"audit \d+\.\d{3} s, bare client with 2 servers \d+\.\d{3} s, -?\d+\.\d{3} s more "
        r"\(-?\d+\.\d\d ms per attack\)",
        fields["cpu of the harness's own process (user and system)"],
    )


def test_bench_runs_an_in_process_target_the_same_way(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(TARGETS / "reference"))
    code, out, _ = bench(capsys, "--mcp-target", "py:server:build_server", "--family", "replay")
    assert code == 0
    assert "server instances built in-process: 1" in out
    assert "ablation: on" in out


def test_bench_times_an_in_process_target_without_ablation_for_a_like_for_like_figure(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(TARGETS / "reference"))
    args = ("--mcp-target", "py:server:build_server", "--family", "cross-target", "--mcp-no-ablation")
    code, out, _ = bench(capsys, *args)
    assert code == 0
    # cross-target is refused by the SDK boundary: ablation would have built a second server.
    assert "server instances built in-process: 1" in out
    assert "ablation: off" in out
    # Target and harness in this one process: its CPU time is each one's whole, the figure load moves least.
    cpu = r"cpu \(this process, user and system\): audit \d+\.\d{3} s, floor \d+\.\d{3} s, ratio \d+\.\d\dx"
    assert re.search(f"^{cpu}$", out, re.MULTILINE)


def test_what_an_in_process_target_writes_to_stderr_is_not_among_the_figures(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    noisy = tmp_path / "noisy.py"
    noisy.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(TARGETS / 'reference')!r})\n"
        "from server import build_server\n"
        "def build(root):\n"
        "    print('target log line', file=sys.stderr)\n"
        "    return build_server(root)\n"
    )
    code, out, err = bench(capsys, "--mcp-target", f"py:{noisy}:build", "--family", "replay")
    assert code == 0
    assert "audit: " in out
    assert "target log line" not in out + err


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (["--mcp-target", "http://127.0.0.1:9/mcp"], 4, "not a URL"),
        (["--mcp-target", CAREFUL, "--family", "no-such-family"], 4, "no attack family 'no-such-family'"),
        (["--mcp-target", "no-such-mcp-server-xyz --root {root}"], 2, "was not found on PATH"),
        (["--mcp-target", CAREFUL, "--repeat", "0"], 4, "--repeat must be at least 1"),
        (["--mcp-target", "py:server:build_server", "--compare-confinement"], 4, "confined and not"),
    ],
    ids=["url", "unknown-family", "not-installed", "no-runs", "compare-in-process"],
)
def test_bench_says_what_is_wrong_in_one_line_with_pytests_exit_codes(
    capsys: pytest.CaptureFixture[str], args: list[str], code: int, says: str
) -> None:
    got, _, err = bench(capsys, *args)
    assert got == code
    assert says in err
    assert len(err.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def replay_bench() -> str:
    """What one bench of the replay family prints with --compare-confinement and --growth: the two tests
    below read their figures from this one run, not a run each."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        args = ["--mcp-target", CAREFUL, "--family", "replay", "--compare-confinement", "--growth"]
        code = cli.main(["bench", "--repeat", "1", *args])
    assert code == 0, printed.getvalue()
    return printed.getvalue()


def test_bench_says_where_the_audit_s_time_went_by_phase(replay_bench: str) -> None:
    # With the confined audit timed against the unconfined one in the same run (issue 36's 5%).
    out = replay_bench
    assert re.search(
        r"^unconfined \(--mcp-no-confinement\), in turn with the others: audit \d+\.\d{3} s, ratio to the "
        r"same floor \d+\.\d\dx \(confined: \d+\.\d\dx\)$",
        out,
        re.MULTILINE,
    )
    assert re.search(r"^confined against unconfined: \d+\.\d{3}x wall clock$", out, re.MULTILINE)
    assert re.search(
        r"^  cpu of the harness's own process: confined \d+\.\d{3} s, unconfined \d+\.\d{3} s, \d+\.\d{3}x$",
        out,
        re.MULTILINE,
    )
    lines = out.splitlines()
    start = lines.index("where the audit's time went (median run, each second counted once):")
    phases = [line.split()[0] for line in lines[start + 1 : start + 8]]
    assert phases == ["starts", "controls", "probes", "attacks", "waits", "stops", "reports"]
    for line in lines[start + 1 : start + 8]:
        assert re.fullmatch(r"  \w+ +\d+\.\d{3} s +\d+\.\d%", line), line


def test_bench_growth_times_the_catalogue_once_twice_and_three_times_over(replay_bench: str) -> None:
    out = replay_bench
    attacks = [int(m[1]) for m in re.finditer(r"^ +(\d+) attacks +\d+\.\d{3} s$", out, re.MULTILINE)]
    assert attacks[1:] == [2 * attacks[0], 3 * attacks[0]]
    assert re.search(
        r"^  slope: -?\d+\.\d\d ms per attack, then -?\d+\.\d\d ms per attack$", out, re.MULTILINE
    )


def test_bench_of_an_isolated_target_counts_a_process_per_attack_and_times_no_floor_of_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    profile = tmp_path / "isolated.yaml"
    profile.write_text(
        f"command: {shlex.join([sys.executable, str(TARGETS / 'reference' / 'server.py')])}"
        " --root {root} --start-delay 0.2\ntool: delete_file\nisolation: process\n"
        # Each of its processes forked from one that imported the SDK (a real process all the same).
        "zygote: [mcp.server.mcpserver]\n"
    )
    code, out, _ = bench(capsys, "--mcp-profile", str(profile), "--family", "replay")
    assert code == 0
    fields = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    attacks = int(fields["attacks"].split()[0])
    # Each control and each attack on a process of its own; a few more started ahead and not needed.
    assert int(fields["server processes started"]) >= attacks + 4
    assert "not timed (isolation: process starts one per attack" in out
    # No floor starts a process per attack: the audit's own round trips are told, set against nothing.
    assert "in its own round trips: " in out
    assert "floor with the audit's own round trips" not in out


def test_each_audit_is_set_against_the_floor_run_right_after_it_so_a_drifting_machine_moves_it_less() -> None:
    # A machine that slowed down between the first runs and the last: the medians of each column come
    # from different moments, the pairs do not.
    result = BenchResult(
        audit=(0.40, 0.42, 0.39), floor=(0.26, 0.30, 0.25), floor_same_processes=(), cost=_NO_COST
    )
    assert result._paired_line() == (
        "ratio of each audit to the floor run right after it: median 1.54x (1.40x to 1.56x over 3 pairs)"
    )
