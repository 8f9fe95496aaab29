"""A server nobody reviewed, audited with zero configuration, is confined: nothing leaves, nothing outlives the run.

targets/hostile/server.py --mode escape, at every tools/call: writes in /tmp and in the home, reads
a canary file the test planted in the home (and says what it read in its result), notes the network
interfaces it sees in ROOT/hostile-saw.json, and starts a daemon that detaches (double fork, setsid,
its environment scrubbed, working in /: nothing the reaper looks for). A conftest's
`pytest_mcp_snapshot` (run by the harness, outside the confinement) copies what the server saw out of
its root. Each check is also shown to fail with --mcp-no-confinement, so none of them is vacuous.

No packet leaves loopback: the server only lists the interfaces it sees.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from deadline import deadline
from leftovers import survivors

from mcp_confirm_audit.catalogue.loader import load_catalogue
from mcp_confirm_audit.engine.session import AuditSession
from mcp_confirm_audit.profile.loader import Profile
from mcp_confirm_audit.target.zygote import keep_zygotes

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux namespaces")

HOSTILE_SERVER = Path(__file__).resolve().parents[2] / "targets" / "hostile" / "server.py"
# A liveness bound for a loaded machine, not a timing.
BOUND = deadline(120)


def output_of(result: pytest.RunResult) -> str:
    return result.stdout.str() + result.stderr.str()


CONFTEST = """
import shutil
from pathlib import Path

def pytest_mcp_snapshot(root, config):
    saw = Path(root) / "hostile-saw.json"
    if saw.exists():
        shutil.copyfile(saw, Path(__file__).parent / "saw.json")
    return None
"""


def _command(marker: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        str(HOSTILE_SERVER),
        "--root",
        "{root}",
        "--mode",
        "escape",
        "--marker",
        marker,
        *extra,
    ]


def _audit(
    pytester: pytest.Pytester, marker: str, *args: str, extra: tuple[str, ...] = ()
) -> tuple[pytest.RunResult, str]:
    canary = f"canary-{uuid.uuid4().hex}"
    # pytester runs the inner pytest with HOME set to its own folder: the home the target must not see.
    (pytester.path / "hostile-canary.txt").write_text(canary)
    pytester.makeconftest(CONFTEST)
    result = pytester.runpytest_subprocess(
        "--mcp-target",
        " ".join(_command(marker, *extra)),
        *("-k", "MCA-REPLAY-001 or control-approve", "--mcp-report-dir", "out", "-p", "no:cacheprovider"),
        *("--mcp-call-timeout", "5", "--mcp-start-timeout", "20"),
        *args,
        timeout=BOUND,
    )
    return result, canary


def _everything_written(pytester: pytest.Pytester) -> str:
    out = pytester.path / "out"
    return "\n".join(p.read_text(errors="replace") for p in sorted(out.iterdir()) if p.is_file())


def test_a_hostile_target_writes_nowhere_reads_no_home_sees_only_loopback_and_leaves_no_process(
    pytester: pytest.Pytester,
) -> None:
    marker = f"hostile-{uuid.uuid4().hex}"
    result, canary = _audit(pytester, marker, "--mcp-require-confinement")
    output = output_of(result)
    assert "mcp-confirm-audit: confinement: unshare (user, pid, mount, net loopback-only)" in output
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    assert report["target"]["confinement"] == "unshare (user, pid, mount, net loopback-only)"
    # The writes outside the root are seen whole (path and content) and reported ...
    home = str(pytester.path.resolve())
    written = {w["path"]: w["text"] for w in report["target"]["outside_root"]}
    tmp_write, home_write = f"/tmp/hostile-escape-{marker}.txt", f"{home}/hostile-escape-{marker}.txt"
    assert written[tmp_write] == f"escaped into /tmp ({marker})\n"
    assert written[home_write].startswith("escaped into ")
    review = (pytester.path / "out" / "review.md").read_text()
    assert "| Written outside the root |" in review
    assert tmp_write in review
    assert "| Confinement | `unshare (user, pid, mount, net loopback-only)` |" in review
    # ... and never landed on the machine.
    assert not Path(tmp_write).exists()
    assert not Path(home_write).exists()
    # The home was empty: its file was never read, so its content is in no report and no output.
    saw = json.loads((pytester.path / "saw.json").read_text())
    assert saw["home_read"].startswith("nothing"), saw
    assert canary not in _everything_written(pytester)
    assert canary not in output
    # Loopback is the only interface it sees.
    assert saw["proc_net_dev"] == ["lo"], saw
    assert saw["sys_class_net"] in (["lo"], []), saw
    # The detached daemon (no marker in its environment, out of the root, a session of its own) is gone.
    assert survivors(marker) == []


def test_an_http_target_posting_to_the_sink_shares_a_loopback_only_namespace_with_the_harness(
    pytester: pytest.Pytester,
) -> None:
    # The harness reaches the target's port, the target reaches the sink, and it sees loopback only.
    marker = f"hostile-{uuid.uuid4().hex}"
    hooks = ("--port", "{port}", "--webhook", "{sink}/escape")
    result, canary = _audit(pytester, marker, "--mcp-require-confinement", extra=hooks)
    line = "unshare (user, pid, mount, net loopback-only shared with the harness: the target serves HTTP"
    assert f"mcp-confirm-audit: confinement: {line}" in output_of(result)
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    assert report["target"]["confinement"].startswith(line)
    approve = [c for c in report["controls"] if c["name"] == "approve"]
    assert approve, report["controls"]
    assert all(c["passed"] for c in approve), approve
    saw = json.loads((pytester.path / "saw.json").read_text())
    assert saw["webhook"] == 200, saw
    assert saw["proc_net_dev"] == ["lo"], saw
    assert saw["sys_class_net"] in (["lo"], []), saw
    assert saw["home_read"].startswith("nothing"), saw
    assert canary not in _everything_written(pytester)
    written = {w["path"] for w in report["target"]["outside_root"]}
    assert f"/tmp/hostile-escape-{marker}.txt" in written
    assert not Path(f"/tmp/hostile-escape-{marker}.txt").exists()
    assert survivors(marker) == []


def test_without_confinement_the_same_target_escapes_which_is_what_the_checks_above_would_see(
    pytester: pytest.Pytester,
) -> None:
    marker = f"hostile-{uuid.uuid4().hex}"
    tmp_write = Path(f"/tmp/hostile-escape-{marker}.txt")
    try:
        result, canary = _audit(pytester, marker, "--mcp-no-confinement")
        report = json.loads((pytester.path / "out" / "audit.json").read_text())
        assert report["target"]["confinement"] == "none: turned off (--mcp-no-confinement)", output_of(result)
        assert "outside_root" not in report["target"]
        assert tmp_write.exists()
        saw = json.loads((pytester.path / "saw.json").read_text())
        assert saw["home_read"] == canary
        if len(saw["proc_net_dev"]) > 1:  # a machine with loopback only shows nothing here
            assert saw["proc_net_dev"] != ["lo"]
        # The reaper cannot find a daemon that scrubbed its environment and left the root.
        assert survivors(marker) != []
    finally:
        tmp_write.unlink(missing_ok=True)
        for line in survivors(marker):
            os.kill(int(line.split(":", 1)[0]), signal.SIGKILL)


def _wait_for(condition: object, what: str, bound: float = BOUND) -> None:
    """Poll until `condition()` holds (a liveness bound for a loaded machine, not a timing)."""
    until = time.monotonic() + bound
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < until, f"{what} did not happen within {bound}s"
        time.sleep(0.1)


def test_a_run_killed_with_sigkill_leaves_no_process_and_the_next_run_removes_its_sandbox(
    tmp_path: Path,
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    marker = f"hostile-{uuid.uuid4().hex}"
    (tmp_path / "conftest.py").write_text(CONFTEST)
    env = {**os.environ, "TMPDIR": str(scratch), "HOME": str(tmp_path)}

    def run(*args: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "--mcp-target",
                " ".join(_command(marker)),
                "--mcp-call-timeout",
                "5",
                "--mcp-start-timeout",
                "20",
                *args,
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    killed = run("-k", "control or MCA-REPLAY")
    try:
        # Mid-audit: the target has answered a tools/call (and started its daemon).
        _wait_for(
            lambda: (tmp_path / "saw.json").exists() or killed.poll() is not None, "the first tools/call"
        )
        assert killed.poll() is None, "the run ended before it could be killed"
        assert survivors(marker) != []
        killed.send_signal(signal.SIGKILL)
        killed.wait()
    finally:
        if killed.poll() is None:
            killed.kill()
    # No reaper ran: the confinement alone ends every process (the target, its daemon).
    _wait_for(lambda: survivors(marker) == [], "the end of the killed run's processes")
    left = [p for p in scratch.iterdir() if p.name.startswith("mcp-audit-")]
    assert left, "the killed run left no sandbox: nothing for the next run to prove"
    assert all((p / "owner").exists() for p in left)
    # The next run (any target, on the same scratch folder) removes the sandboxes whose owner is gone.
    following = run("-k", "control-approve")
    assert following.wait(timeout=BOUND) == 0
    assert [p for p in scratch.iterdir() if p.name.startswith("mcp-audit-")] == []
    assert survivors(marker) == []


def test_a_server_forked_from_a_zygote_writes_nowhere_and_its_writes_are_reported_outside_the_root() -> None:
    # zygote: every server process is forked from one confined parent: its writes land in the
    # zygote's stand-ins, and are reported like those of a server started on its own.
    marker = f"hostile-{uuid.uuid4().hex}"
    profile = Profile(
        command=" ".join(_command(marker)),
        zygote=("mcp.server.mcpserver",),
        call_timeout=deadline(5.0),
        start_timeout=deadline(20.0),
        confinement="required",
    )
    catalogue = load_catalogue()
    # Its own zygote, stopped with the audit (a matrix run earlier in this worker keeps them all).
    with keep_zygotes(False):
        session = AuditSession(profile, catalogue)
        session.start([])
        try:
            assert session.world.zygote is not None
            approve = [
                c
                for plan in session.plans
                for c in session.controls(plan.name).results
                if c.name == "approve"
            ]
        finally:
            session.close()
    assert approve, "no approve control ran"
    written = {w["path"]: w["text"] for w in session.outside_writes}
    tmp_write = f"/tmp/hostile-escape-{marker}.txt"
    home_write = f"{os.path.realpath(os.environ['HOME'])}/hostile-escape-{marker}.txt"
    assert written.get(tmp_write) == f"escaped into /tmp ({marker})\n", written
    assert home_write in written, written
    assert not Path(tmp_write).exists()
    assert not Path(home_write).exists()
    assert survivors(marker) == []
