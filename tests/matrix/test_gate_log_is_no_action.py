"""A gate's own log of calls is no action, when no honest flow taught what the action moves.

An approval proxy keeps a log of every call it sees (toolpermit's SQLite write-ahead log, actgate's
ledger), in the target's root, whatever its person says. When the profile's person cannot complete
the honest flow (here: the prompt they wait for never shows), the controls learn neither how the
action's effect shows nor which changes are the target's bookkeeping. The families that still run
then (unanswered: nobody answers, and the call must not act) may call an effect theirs only where
it is the action's own subject, the case's files: the log growing is not "acted though nobody
answered". On the gate that does act on no answer (fails-open), the victim itself goes, and that is
still found.

`targets/elsewhere/server.py --channel terminal --journal` is the gate: every call is written to
`.gate/journal.jsonl` before its person is asked.
"""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import MATRIX_GENERATION, forked
from deadline import deadline

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

SERVER = Path(__file__).resolve().parents[2] / "targets" / "elsewhere" / "server.py"
# What the person waits for is not what the server prints ("allow? [y/N]"): they never answer.
NEVER_SHOWN = r"type YES to delete"


def _audit(catalogue: Catalogue, *flaws: str) -> AuditRun:
    words = [sys.executable, str(SERVER), "--root", "{root}", "--channel", "terminal", "--journal"]
    words += ["--ttl", f"{deadline(2):g}"]
    for flaw in flaws:
        words += ["--flaw", flaw]
    raw = {
        "command": " ".join(words),
        "tool": "delete_file",
        "tty": True,
        "answer_deadline": deadline(2),
        "confirmation": {
            "kind": "waits",
            "waits": {"human": [{"terminal": {"expect": NEVER_SHOWN, "answer": "y"}}]},
        },
    }

    def select(spec: AttackSpec) -> bool:
        return spec.family == "unanswered"

    profile = forked(profile_from_mapping(raw, source="test"))
    return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)


def test_the_gates_log_growing_while_nobody_answers_is_no_finding(catalogue: Catalogue) -> None:
    run = _audit(catalogue)
    approve = next(c for c in run.controls if c.name == "approve")
    assert not approve.passed, approve.detail
    nobody = run.by_id()["MCA-NOANSWER-001"]
    # The log did change under the attack: the evidence says so, and that it was not judged.
    assert any(".gate/journal.jsonl" in line for line in nobody.evidence), nobody.evidence
    assert nobody.verdict is Verdict.INCONCLUSIVE, (nobody.reason, nobody.evidence)
    assert "none of the action's own subject" in nobody.reason
    assert not any(r.verdict in (Verdict.VULNERABLE, Verdict.WEAK) for r in run.results), [
        (r.id, r.verdict, r.reason) for r in run.results
    ]


def test_the_gate_that_deletes_when_nobody_answers_is_still_found_beside_its_log(
    catalogue: Catalogue,
) -> None:
    nobody = _audit(catalogue, "fails-open").by_id()["MCA-NOANSWER-001"]
    assert nobody.verdict is Verdict.VULNERABLE, (nobody.reason, nobody.evidence)
    assert "acted though nobody answered" in nobody.reason
    assert any(path.endswith("/victim.txt") for path in nobody.effect.removed), nobody.effect


def test_the_gates_sqlite_log_moving_at_a_checkpoint_under_an_attack_is_no_finding(
    catalogue: Catalogue,
) -> None:
    # toolpermit's audit log: the controls see its -wal move on every call and learn it as bookkeeping;
    # its database file moves only at a checkpoint (here the eighth call, an attack's), which is the same
    # database, not a file the refused attack deleted or changed.
    words = [sys.executable, str(SERVER), "--root", "{root}", "--channel", "terminal", "--journal", "sqlite"]
    answer = r"allow\? \[y/N\] "
    raw = {
        "command": " ".join([*words, "--ttl", f"{deadline(5):g}"]),
        "tool": "delete_file",
        "tty": True,
        "confirmation": {
            "kind": "waits",
            "waits": {
                "human": [{"terminal": {"expect": answer, "answer": "y"}}],
                "decline": [{"terminal": {"expect": answer, "answer": "n"}}],
            },
        },
    }

    def select(spec: AttackSpec) -> bool:
        return spec.family == "out-of-root"

    profile = forked(profile_from_mapping(raw, source="test"))
    run = run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail
    learned = next(c for c in run.controls if c.name == "bookkeeping")
    assert "root/.gate/journal.db-wal" in learned.detail, learned.detail
    # The checkpoint fell under an attack: its database file moved there, and was not counted.
    moved = [
        r
        for r in run.results
        if any("journal.db," in line or line.endswith("journal.db") for line in r.evidence)
    ]
    assert moved, [(r.id, r.evidence) for r in run.results]
    assert {r.verdict for r in run.results} == {Verdict.REFUSED}, [
        (r.id, r.verdict, r.reason) for r in run.results
    ]
