"""prompt-forging over a pending flow whose id is the subject itself, proven both ways.

host-terminal-mcp stages a command under the command line itself (`id_from: command`): the
pending id the agent sends back IS the command, file name and all. The preview's reader leaves a
handle out of what the person read, since a handle differs from call to call; left out whole,
this one took the name with it, and a reply that shows the name plainly was reported as a
question that masks it, shortens it or names no file (MCA-PROMPT-007, -008, -012, -013).

The confirm-kinds server with `--pending-key path` stages a deletion under the path it names,
in both places a person reads it: the reply to the agent (the server's own approve tool, as
host-terminal-mcp has) and the person's own card on their channel (`approve_cli.py show`). The
careful server, every name JSON-escaped, has no prompt-forging finding; the one that puts the
name raw into a sentence is caught by each family member whose characters it lets through.
"""

from __future__ import annotations

import pytest
from conftest import MATRIX_GENERATION, PERSON_STEPS_GENERATION
from test_confirmation_kinds import HUMAN_CHANNEL_SHOWN, KINDS_SERVER

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

V, W, R, NA = Verdict.VULNERABLE, Verdict.WEAK, Verdict.REFUSED, Verdict.NOT_APPLICABLE
# What the person reads: the reply to the agent, which approves it with the server's own tool (the
# host-terminal-mcp shape), or the card their own channel shows them.
AGENT_APPROVES = {
    "confirmation": {
        "kind": "pending",
        "pending": {
            "id_from": "path",
            "approve": {"tool": "approve", "args": {"pending_id": "{id}"}},
            "execute": {"tool": "execute_pending", "args": {"pending_id": "{id}"}},
        },
    }
}
PERSON_SHOWN = {
    "confirmation": {
        "kind": "pending",
        "pending": {**HUMAN_CHANNEL_SHOWN["confirmation"]["pending"], "id_from": "path"},  # type: ignore[index]
    }
}
READERS = {"reply": AGENT_APPROVES, "card": PERSON_SHOWN}
# The raw server says the path in prose, on a line of its own: what the agent sends back is that line,
# every character of it (a field of a JSON reply is `id_from:`, a line of prose `id_pattern:`).
SAID_IN_PROSE = {"id_from": None, "id_pattern": "(?s)\npath: (.*)\nmessage: "}
# A flow shows text, not a form: the form checks have nothing to look at.
NO_FORM = {"MCA-PROMPT-010", "MCA-PROMPT-011"}
# The raw sentence lets every character through: each of these finds its own. A terminal renders
# no markup, so a link shown raw on the card is no finding there (MCA-PROMPT-007).
RAW_CAUGHT = {
    "reply": {**{f"MCA-PROMPT-00{n}": V for n in range(1, 7)}, "MCA-PROMPT-007": W},
    "card": {f"MCA-PROMPT-00{n}": V for n in range(1, 7)},
}


def audit(catalogue: Catalogue, reader: str, *flaws: str) -> AuditRun:
    """prompt-forging on delete_file, staged under its path and approved as `reader` says."""
    factory = {
        "mechanism": "pending",
        "pending_key": "path",
        "flaws": [*flaws, *(["agent-approval"] if reader == "reply" else [])],
    }
    confirmation = READERS[reader]["confirmation"]
    if "raw-name-in-preview" in flaws:
        pending = {**confirmation["pending"], **SAID_IN_PROSE}  # type: ignore[dict-item]
        confirmation = {**confirmation, "pending": {k: v for k, v in pending.items() if v is not None}}
    raw = {
        "command": f"py:{KINDS_SERVER}:build_server",
        "factory_args": factory,
        "tool": "delete_file",
        "call_timeout": 10.0,
        "confirmation": confirmation,
    }

    def select(spec: AttackSpec) -> bool:
        return spec.family == "prompt-forging"

    profile = profile_from_mapping(raw, source="test")
    # The card is the person's `show` command, a process for every name; the reply costs a round trip.
    generation = PERSON_STEPS_GENERATION if reader == "card" else MATRIX_GENERATION
    return run_audit(profile, catalogue=catalogue, select=select, generation=generation)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_careful_reply_that_is_its_own_pending_id_shows_the_name_whole(
    catalogue: Catalogue, reader: str
) -> None:
    run = audit(catalogue, reader)
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    for result in run.results:
        if result.id in NO_FORM:
            assert result.verdict is NA, result
            continue
        # Judged, every one: the hostile names reached what the person read, and none was shown unsafely.
        assert (result.verdict, result.layer) == (R, Layer.TOOL), (result.id, result.reason, result.evidence)
        assert "reached what the person read" in result.reason, (result.id, result.reason)


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_raw_name_in_a_reply_that_is_its_own_pending_id_is_still_caught(
    catalogue: Catalogue, reader: str
) -> None:
    run = audit(catalogue, reader, "raw-name-in-preview")
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    by_id = run.by_id()
    for attack_id, verdict in RAW_CAUGHT[reader].items():
        assert by_id[attack_id].verdict is verdict, (attack_id, by_id[attack_id].reason)
    # Each finding is about what the name brought in: none says the name was lost, as none was.
    lost = ("is not in the question", "is not shown", "does not name the file")
    assert not [r.id for r in run.results if any(words in r.reason for words in lost)], run.results
    # The rest of the family is refused: the name is whole, its end kept, and it names the file.
    others = [r for r in run.results if r.id not in RAW_CAUGHT[reader] and r.id not in NO_FORM]
    assert {(r.verdict, r.layer) for r in others} == {(R, Layer.TOOL)}, [(r.id, r.reason) for r in others]


def test_the_careful_server_that_stages_under_the_path_fools_no_family(catalogue: Catalogue) -> None:
    # A careful server in a new shape is audited whole: the request staged under its path, the person
    # approving it on their own channel, each staging a request of its own.
    raw = {
        "command": f"py:{KINDS_SERVER}:build_server",
        "factory_args": {"mechanism": "pending", "pending_key": "path"},
        "tool": "delete_file",
        "call_timeout": 10.0,
        **PERSON_SHOWN,
    }
    run = run_audit(
        profile_from_mapping(raw, source="test"), catalogue=catalogue, generation=MATRIX_GENERATION
    )
    assert all(c.passed for c in run.controls), run.controls
    judged = {r.verdict for r in run.results} - {NA}
    assert judged == {R}, [(r.id, r.verdict, r.reason) for r in run.results if r.verdict not in (R, NA)]
