"""Effects seen elsewhere than a read-only tool: an outbound request, a conftest's hook; worlds kept apart.

The payments server posts a webhook after every payment. Pointed at the
harness's loopback sink (by `{sink}` in its command, or by a config file the
profile writes into its root), the sink is the only place a payment shows,
and a replayed approval is seen as a second request, not inferred from a message.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import forked
from deadline import deadline
from test_payments import PAYMENTS

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Layer, Verdict
from mcp_confirm_audit.oracle.effects import ProbeSpec
from mcp_confirm_audit.profile.loader import Profile, profile_from_mapping


def _command(*options: str) -> str:
    return shlex.join([sys.executable, str(PAYMENTS), "--root", "{root}", *options])


def _audit(
    profile: Profile, catalogue: Catalogue, generation: Any, family: str, only: str | None = None
) -> AuditRun:
    """The family's attacks, or the attack `only` (of it) where a test judges that one alone."""

    def select(spec: AttackSpec) -> bool:
        return spec.family == family and only in (None, spec.id)

    # Each process forked from the SDK's zygote: how it starts, not what is seen of it.
    return run_audit(forked(profile), catalogue=catalogue, generation=generation, select=select)


# Only the sink shows a payment here: list_payments is not named, and a declared effect stops learning.
SINK_ONLY = {"effect": [{"sink": True}], "tool": "send_payment"}


@pytest.mark.parametrize(
    "how",
    [
        {"command": _command("--webhook", "{sink}/payments")},
        {"command": _command(), "files": {"config.yaml": "webhook_url: {sink}/payments\n"}},
    ],
    ids=["placeholder-in-command", "config-file-in-root"],
)
def test_a_replayed_approval_is_seen_as_a_second_request_at_the_sink(
    catalogue: Catalogue, generation: Any, how: dict[str, Any]
) -> None:
    flawed = {**how, "command": how["command"] + " --flaw no-ledger"}
    profile = profile_from_mapping({**SINK_ONLY, **flawed}, source="test")
    run = _audit(profile, catalogue, generation, "replay", only="MCA-REPLAY-001")
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail
    assert "sink[0]" in approve.detail, approve.detail
    replay = run.by_id()["MCA-REPLAY-001"]
    assert replay.verdict is Verdict.VULNERABLE, replay.evidence
    assert all(path.startswith("sink[") for path in replay.effect.observed), replay.effect


def test_the_careful_server_sends_nothing_to_the_sink_for_a_refused_replay(
    catalogue: Catalogue, generation: Any
) -> None:
    profile = profile_from_mapping({**SINK_ONLY, "command": _command("--webhook", "{sink}/p")}, source="t")
    run = _audit(profile, catalogue, generation, "replay")
    assert {(r.verdict, r.layer) for r in run.results} == {(Verdict.REFUSED, Layer.TOOL)}


def test_process_isolation_gives_every_attack_a_fresh_target_and_root(
    catalogue: Catalogue, generation: Any
) -> None:
    from mcp_confirm_audit.engine.session import AuditSession

    profile = forked(Profile(command=_command("--log-into-root"), isolation="process", call_timeout=10.0))
    specs = [spec for spec in catalogue.active if spec.family == "replay"]
    session = AuditSession(profile, catalogue, generation)
    session.start(specs)
    try:
        session.controls("send_payment")
        runs = [session.run(spec, "send_payment") for spec in specs]
    finally:
        session.close()
    assert {(r.verdict, r.layer) for r, _ in runs} == {(Verdict.REFUSED, Layer.TOOL)}
    # Nothing carries over: no process an attack talked to is one another attack (or a control) used.
    used = [{e.connection for e in transcript.exchanges} for _, transcript in runs]
    assert all(used), used
    assert all(a.isdisjoint(b) for i, a in enumerate(used) for b in used[i + 1 :]), used


def test_an_effect_probe_from_outside_the_profile_is_compared_like_any_other(
    catalogue: Catalogue, generation: Any
) -> None:
    # What a conftest's pytest_mcp_snapshot gives the session: here, the payments as the sink saw them.
    seen: list[Any] = []

    def snapshot(root: Path) -> Any:
        seen.append(root)
        return sorted(p.name for p in root.iterdir())

    hooked = ProbeSpec("hook", "hook:pytest_mcp_snapshot", {"call": snapshot})
    from mcp_confirm_audit.engine.session import AuditSession

    session = AuditSession(
        forked(Profile(command=_command("--log-into-root"), call_timeout=10.0)),
        catalogue,
        generation,
        probes=[hooked],
    )
    session.start([])
    try:
        outcome = session.controls("send_payment")
    finally:
        session.close()
    assert hooked in outcome.probes
    assert seen, "the hook was never called"


HOOKED_CONFTEST = """
def pytest_mcp_snapshot(root, config):
    # Every call is noted beside the test, so the test can see the plugin made them.
    with open(config.rootpath / "hook-calls.txt", "a") as calls:
        calls.write(str(root) + "\\n")
    # What an inventory system outside the server would report: every file under the root.
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
"""
REFERENCE = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"


def test_a_conftest_hook_is_an_effect_probe_the_plugin_calls_around_every_attack(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(HOOKED_CONFTEST)
    report = pytester.path / "out"
    # In process: the plugin, the conftest's hook and the audit are the same code either way; the target is
    # still a process of its own. A Python start and an import of the SDK less.
    result = pytester.runpytest_inprocess(
        "--mcp-target",
        shlex.join([sys.executable, str(REFERENCE), "--root", "{root}", "--flaw", "no-ledger"]),
        "-k",
        "MCA-REPLAY-001",
        "--mcp-report-dir",
        str(report),
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-3000:]
    calls = (pytester.path / "hook-calls.txt").read_text().splitlines()
    assert len(calls) >= 4, calls  # around the approve control, and around the attack
    (finding,) = json.loads((report / "audit.json").read_text())["results"]
    assert finding["verdict"] == "vulnerable"
    assert any(path.startswith("hook:pytest_mcp_snapshot") for path in finding["effect"]["observed"]), finding


OPAQUE_SERVER = '''
import secrets
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

server = MCPServer("opaque")
ACCOUNTS = {"ACC-7731"}


def ask(what: str) -> InputRequiredResult:
    form = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
    request = ElicitRequest(params=ElicitRequestFormParams(mode="form", message=what, requested_schema=form))
    return InputRequiredResult(input_requests={"q": request}, request_state=secrets.token_hex(8))


@server.tool()
async def close_account(account: str, ctx: Context) -> str | InputRequiredResult:
    """Close an account (only real account numbers)."""
    if account not in ACCOUNTS:
        raise ToolError(f"unknown account {account!r}; accounts look like ACC-0000")
    return "closed" if ctx.input_responses else ask(f"Close {account}?")


@server.tool()
async def archive_everything(ctx: Context) -> str | InputRequiredResult:
    """Archive everything, somewhere the harness cannot see."""
    return "archived" if ctx.input_responses else ask("Archive everything?")


server.run()
'''


def test_a_tool_that_refuses_the_harness_arguments_or_shows_no_effect_says_which_profile_key_fixes_it(
    catalogue: Catalogue, generation: Any, tmp_path: Path
) -> None:
    script = tmp_path / "opaque.py"
    script.write_text(OPAQUE_SERVER)
    profile = Profile(
        command=shlex.join([sys.executable, str(script), "{root}"]), call_timeout=deadline(10.0)
    )
    run = _audit(profile, catalogue, generation, "replay")
    approve = {c.tool: c for c in run.controls if c.name == "approve"}
    refused = approve["close_account"]
    assert not refused.passed
    # The server's own words, and the key that fixes it.
    assert "unknown account 'mcp-confirm-audit'; accounts look like ACC-0000" in refused.detail
    assert "set args: in the profile" in refused.detail
    unseen = approve["archive_everything"]
    assert not unseen.passed
    assert "no effect was seen in the sandbox" in unseen.detail
    assert "effect: in a profile" in unseen.detail
    # Neither can be judged: every attack on them is inconclusive, never refused.
    assert {r.verdict for r in run.results} == {Verdict.INCONCLUSIVE}


PREVIEW_THEN_APPLY = '''
import os, secrets, sys
from pathlib import Path
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult

ROOT = Path(sys.argv[1])
FLAWED = "--no-ledger" in sys.argv
server = MCPServer("changes")
changes: dict[str, str] = {}
spent: set[str] = set()


@server.tool()
def preview_delete(path: str) -> dict:
    """Stage the deletion of a file in the root; returns the change to apply."""
    if not (ROOT / path).is_file():
        raise ToolError(f"{path!r} is not a file")
    change = "ch_" + secrets.token_hex(6)
    changes[change] = path
    return {"change_id": change}


@server.tool()
async def apply_change(change_id: str, ctx: Context) -> str | InputRequiredResult:
    """Apply a staged change, after the user confirms."""
    if change_id not in changes:
        raise ToolError(f"unknown change {change_id!r}")
    answer = (ctx.input_responses or {}).get("ok")
    if answer is None:
        form = {"type": "object", "properties": {"yes": {"type": "boolean"}}, "required": ["yes"]}
        question = f"Delete {changes[change_id]!r}?"
        request = ElicitRequest(params=ElicitRequestFormParams(mode="form", message=question, requested_schema=form))
        return InputRequiredResult(input_requests={"ok": request}, request_state=change_id + "." + secrets.token_hex(8))
    state = ctx.request_state or ""
    if not state.startswith(change_id + ".") or (state in spent and not FLAWED):
        raise ToolError("no such confirmation, or it was used")
    spent.add(state)
    if not isinstance(answer, ElicitResult) or answer.action != "accept" or (answer.content or {}).get("yes") is not True:
        return "kept"
    target = ROOT / changes[change_id]
    if target.exists():
        os.unlink(target)
    return "deleted"


server.run()
'''


@pytest.mark.parametrize(("flaw", "verdict"), [((), Verdict.REFUSED), (("--no-ledger",), Verdict.VULNERABLE)])
def test_a_preview_that_stages_the_case_file_is_judged_by_the_file_going(
    catalogue: Catalogue, generation: Any, tmp_path: Path, flaw: tuple[str, ...], verdict: Verdict
) -> None:
    # The gated call names only a change id; the file it deletes is seen on disk, as in the controls.
    script = tmp_path / "changes.py"
    script.write_text(PREVIEW_THEN_APPLY)
    profile = profile_from_mapping(
        {
            "command": shlex.join([sys.executable, str(script), "{root}", *flaw]),
            "tool": "apply_change",
            "setup": [
                {"tool": "preview_delete", "args": {"path": "{path}"}, "save": {"change": "change_id"}}
            ],
            "args": {"change_id": "{change}"},
            "isolation": "process",
        },
        source="test",
    )
    run = _audit(profile, catalogue, generation, "replay", only="MCA-REPLAY-001")
    assert all(c.passed for c in run.controls), run.controls
    after_success = run.by_id()["MCA-REPLAY-001"]
    assert after_success.verdict is verdict, after_success.evidence


def test_the_bookkeeping_the_controls_learned_is_named_in_audit_json_and_review_md(
    pytester: pytest.Pytester,
) -> None:
    report = pytester.path / "out"
    result = pytester.runpytest_inprocess(
        "--mcp-target",
        _command("--log-into-root"),
        "-k",
        "control or MCA-REPLAY-001",
        "--mcp-report-dir",
        str(report),
        "-p",
        "no:cacheprovider",
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    controls = json.loads((report / "audit.json").read_text())["controls"]
    (learned,) = [c for c in controls if c["name"] == "bookkeeping"]
    assert "root/audit.jsonl" in learned["detail"]
    review = (report / "review.md").read_text()
    assert "ignored as bookkeeping" in review
    assert "audit.jsonl" in review
