"""Every placeholder where it may stand, in one profile that is loaded and run.

`targets/elsewhere-placeholders.yaml` serves the webhook server over HTTP ({port} in its command and
in env:; {sink} in env: too), opens a change ticket in setup: that both calls name ({ticket} in execute.args), and has the
person follow the link with a command that trusts only {url}; {profile_dir}, {root} and {sink} stand
wherever they may. If any of them were passed on unfilled, the honest flow would not complete.
A value written through `{profile_dir}` is the operator's environment, not the action: another use
of the action (the lifetime families' controls, approval-transplant) varies every plain value but it,
so the server that takes only its own folder still opens the second ticket.
`targets/elsewhere-placeholders-form.yaml` puts {name}, {path} and {profile_dir} in answer: and
negative_answer: of a form that refuses an answer naming another file or folder.
`targets/collections-drift-placeholders.yaml` puts {sink}, {root}, {path}, {profile_dir} and a name
setup saved in drift.args, of an action that names no file (subject-drift skips file actions).
"""

from __future__ import annotations

import asyncio
import dataclasses
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from conftest import MATRIX_GENERATION

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.channels.command import Command
from mcp_confirm_audit.confirmations.pending import Pending
from mcp_confirm_audit.engine.action import prepare, varied_args
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import Layer, Outcome, Response, Verdict
from mcp_confirm_audit.profile.loader import load_profile, resolve_profile

TARGETS = Path(__file__).resolve().parents[2] / "targets"


def test_a_profile_with_every_placeholder_in_every_place_loads_and_runs(catalogue: Catalogue) -> None:
    profile = resolve_profile(load_profile(TARGETS / "elsewhere-placeholders.yaml"), None, None)
    here = str(TARGETS.resolve())
    # {profile_dir}: one quoted word in a command line, the folder itself elsewhere.
    assert f"python {shlex.quote(here)}/elsewhere/server.py" in profile.command
    assert profile.env["ELSEWHERE_PROFILE_DIR"] == here
    assert profile.files["notes.txt"].endswith(f"profile {here}\n")
    assert profile.approver is not None
    assert isinstance(profile.approver.steps[0], Command)
    assert here in profile.approver.steps[0].line
    assert profile.env.at("/r", 8123)["ELSEWHERE_PUBLIC_URL"] == "http://127.0.0.1:8123"
    assert profile.env.at("/r")["ELSEWHERE_HOME"] == "/r"
    assert profile.env["ELSEWHERE_WEBHOOK"] == "{sink}/hook"  # filled when the target starts
    assert profile.uses_sink  # {sink} in env: alone starts the sink
    assert profile.url == "http://127.0.0.1:{port}/mcp"
    assert profile.ttl_flag == "--ttl {ttl}"
    assert isinstance(profile.confirmation, Pending)
    assert profile.protocol == "2025-11-25"

    # The families that make another use of the action (or stage one plainly) ran inconclusive here
    # while `profile:` was varied like any plain value: open_ticket refused every folder but its own.
    others = {"MCA-LAPSE-001", "MCA-LAPSE-002", "MCA-OOBLATE-001", "MCA-OOBMOVE-001", "MCA-UNGATED-001"}
    run = run_audit(
        profile,
        catalogue=catalogue,
        select=lambda spec: spec.family == "approval-replay" or spec.id in others,
        generation=MATRIX_GENERATION,
    )
    by_id = run.by_id()
    assert {i: by_id[i].verdict for i in others} == {
        **dict.fromkeys(others - {"MCA-LAPSE-002"}, Verdict.REFUSED),
        # The webhook channel's person can only approve: no decline to leave the request declined.
        "MCA-LAPSE-002": Verdict.NOT_APPLICABLE,
    }, [(i, by_id[i].verdict, by_id[i].reason) for i in others]
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail
    said = " ".join(e for r in run.results for e in r.evidence)
    # The link is served beside /mcp (ELSEWHERE_PUBLIC_URL, its {port} filled), and the person's command
    # followed it: approve.py refuses any link not on --origin {url}, not for --request {id}, {challenge} and
    # {token}, or run elsewhere than --home {root}, so each of those was filled too; the webhook went to
    # ELSEWHERE_WEBHOOK, so {sink} in env: was.
    assert "read sink (approve_url): http://127.0.0.1:" in said, said
    assert "--home {root}': {\"approve" in said, said
    judged = {r.id: (r.verdict, r.layer) for r in run.results if r.verdict is not Verdict.NOT_APPLICABLE}
    assert judged
    assert set(judged.values()) == {(Verdict.REFUSED, Layer.TOOL)}, [
        (r.id, r.verdict, r.reason) for r in run.results
    ]


def test_a_value_written_through_profile_dir_is_never_varied_for_another_use_of_the_action() -> None:
    profile = load_profile(TARGETS / "elsewhere-placeholders.yaml")
    [step] = profile.setup
    here = str(TARGETS.resolve())
    assert (step.args["profile"], step.fixed) == (here, frozenset({"profile"}))
    # As plain text, it would be varied like any other value: the old behaviour, refused by the server.
    assert varied_args(step.args, 1)["profile"] != here
    sent: list[Mapping[str, Any]] = []

    async def call(label: str, tool: str, args: Mapping[str, Any]) -> Response:
        sent.append(args)
        return Response(Outcome.COMPLETE, '{"ticket_id": "T-1"}')

    values = {"path": "case/victim.txt", "root": "/r", "sink": "http://127.0.0.1:1"}
    use = asyncio.run(prepare(call, "delete_file", profile.setup, profile.args or {}, values, variant=1))
    # Another use: the folder as written, the harness's own values filled, the ticket the setup saved.
    assert sent == [
        {"path": "case/victim.txt", "home": "/r", "notify": "http://127.0.0.1:1", "profile": here}
    ]
    assert use.arguments["profile"] == here
    assert use.arguments["ticket"] == "T-1"


def test_the_form_answers_placeholders_are_filled_in_the_yes_and_in_the_keep(catalogue: Catalogue) -> None:
    profile = resolve_profile(load_profile(TARGETS / "elsewhere-placeholders-form.yaml"), None, None)
    here = str(TARGETS.resolve())
    assert profile.answer == {
        "decision": "delete",
        "confirm_name": "{name}",
        "path": "{path}",
        "profile": here,
    }
    run = run_audit(
        profile,
        catalogue=catalogue,
        select=lambda spec: spec.id == "MCA-REPLAY-001",
        generation=MATRIX_GENERATION,
    )
    controls = {c.name: c for c in run.controls}
    # The yes deleted the file: its name, path and folder were filled (the form refuses any other).
    assert controls["approve"].passed, controls["approve"].detail
    # The keep was read as a keep, not refused as naming another file: filled too.
    assert controls["negative"].passed, controls["negative"].detail
    assert "kept " in controls["negative"].detail, controls["negative"].detail


@pytest.mark.parametrize(
    ("factory_args", "verdict", "layer"),
    [
        ({"flaws": ["deletes-current-members"]}, Verdict.VULNERABLE, Layer.NONE),
        ({}, Verdict.REFUSED, Layer.TOOL),
    ],
    ids=["flawed", "careful"],
)
def test_the_drift_calls_placeholders_are_filled_and_reach_the_server(
    catalogue: Catalogue, factory_args: dict[str, object], verdict: Verdict, layer: Layer
) -> None:
    loaded = load_profile(TARGETS / "collections-drift-placeholders.yaml")
    profile = dataclasses.replace(resolve_profile(loaded, None, None), factory_args=factory_args)
    assert profile.drift is not None
    here = str(TARGETS.resolve())
    assert profile.drift.args["url"] == f"{{sink}}/saved?root={{root}}&case={{path}}&profile={here}"
    assert profile.uses_sink  # {sink} in drift.args alone starts the sink
    run = run_audit(
        profile,
        catalogue=catalogue,
        select=lambda spec: spec.family == "subject-drift",
        generation=MATRIX_GENERATION,
    )
    assert all(c.passed for c in run.controls if c.applicable), run.controls
    [result] = run.results
    assert (result.verdict, result.layer) == (verdict, layer), (result.reason, result.evidence)
    # The drift call went out with every name filled: the sink's loopback URL, the sandbox root, the
    # case file beneath it, this folder, and the collection setup saved (add_link refuses another).
    [drifted] = [line for line in result.evidence if line.startswith("note: after the question")]
    assert "add_link(" in drifted, drifted
    for name in ("sink", "root", "path", "profile_dir", "collection"):
        assert "{" + name + "}" not in drifted, drifted
    assert "http://127.0.0.1:" in drifted, drifted
    assert "root=/" in drifted, drifted
    assert f"profile={here}" in drifted, drifted
    assert "/victim" in drifted.split("&case=", 1)[1], drifted
    # What the server was given is what its read-only listing shows: the link saved under that URL
    # went with the collection (flawed) or was left as it was (careful), seen through list_links.
    if verdict is Verdict.VULNERABLE:
        assert "list_links: the entry holding" in result.reason, result.reason
        assert "saved?root=/" in result.reason, result.reason
    else:
        assert result.reason.startswith("acted on what was shown only"), result.reason
