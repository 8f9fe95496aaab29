"""A gate across two servers on one root, proven both ways: one stages, a person approves, the other posts.

The profile names both servers (`servers:`) and which one each step goes to
(`server:`); every call reaches the server of its tool, and the person's CLI
approval reaches the post server only through the shared root.
"""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from conftest import Shared, forked

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.confirmations.pending import Pending
from mcp_confirm_audit.engine.session import AuditRun, AuditSession, run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import Profile, load_profile, profile_from_mapping
from mcp_confirm_audit.target import zygote_main

STAGING = Path(__file__).resolve().parents[2] / "targets" / "staging"
BURN = "MCA-BURN-001"
V = Verdict.VULNERABLE


ZYGOTE_MAIN = str(Path(zygote_main.__file__)).encode()


def command(script: str, *options: str) -> str:
    return shlex.join([sys.executable, str(STAGING / script), "--root", "{root}", *options])


def two_servers(
    *post_flaws: str,
    words: str = "approval",
    edits: str | None = None,
    commit_fields: bool = False,
    post_options: tuple[str, ...] = (),
    execute_by_saved_id: bool = False,
) -> Profile:
    flags = [word for flaw in post_flaws for word in ("--flaw", flaw)] + ["--words", words, *post_options]
    # --commit-fields: the commit restates the invoice (the profile gives what was staged).
    restated = {"vendor": "acme", "amount_cents": 500} if commit_fields else {}
    flags += ["--commit-fields"] if commit_fields else []
    stage = ("--edits", edits) if edits is not None else ()
    approve = shlex.join([sys.executable, str(STAGING / "approve_cli.py"), "{root}", "{id}"])
    # The person reads the staged invoice first (`--show`): what prompt-forging judges.
    shown = {"command": f"{approve} --show", "shows": True}
    person: Any = [shown, {"command": approve}]
    posted, declined = "{id}", [{"command": f"{approve} --decline"}]
    if execute_by_saved_id:
        # invoice-intake-mcp's shape: the person's own step hands back the id the post takes (there
        # the staged id an approval is for), and the agent's post never names the pending id itself.
        echo = shlex.join([sys.executable, "-c", "import sys; print(sys.argv[1])", "{id}"])
        person = [shown, {"command": approve}, {"command": echo, "save": "posted"}]
        posted = "{posted}"
    raw = {
        "servers": {"stage": command("stage_server.py", *stage), "post": command("post_server.py", *flags)},
        "tool": "stage_invoice",
        "args": {"vendor": "acme", "amount_cents": 500},
        "effect": [{"tool": "list_posted", "server": "post"}],
        "call_timeout": 10,
        "confirmation": {
            "kind": "pending",
            "pending": {
                "id_from": "invoice_id",
                "human": person,
                **({"decline": declined} if declined else {}),
                "execute": {
                    "tool": "post_invoice",
                    "args": {"invoice_id": posted, **restated},
                    "server": "post",
                },
            },
        },
    }
    # Both servers forked from the SDK's zygote: how they start, not what is audited.
    return forked(profile_from_mapping(raw, source="two-servers"))


def audit(
    catalogue: Catalogue, generation: Any, *post_flaws: str, families: frozenset[str] | None = None
) -> AuditRun:
    """The pair audited over the whole catalogue, or over `families` alone."""
    select = None if families is None else (lambda spec: spec.family in families)
    return run_audit(two_servers(*post_flaws), catalogue=catalogue, generation=generation, select=select)


def test_with_a_zygote_every_server_of_the_pair_is_forked_from_it(catalogue: Catalogue) -> None:
    session = AuditSession(two_servers(), catalogue)
    session.start()
    try:
        zygote = session.world.zygote
        assert zygote is not None
        assert zygote.pid is not None
        # Confined, the zygote's interpreter runs below its launcher and its namespace's init: the
        # process of zygote_main.py whose parent is not one, and the forks are its children.
        tree = _descendants(zygote.pid) | {zygote.pid}
        zygotes = {pid for pid in tree if _cmdline(pid).split(b"\0")[1:2] == [ZYGOTE_MAIN]}
        interpreter = next(pid for pid in zygotes if _parent(pid) not in zygotes)
        forked_from_it = [pid for pid in zygotes if _parent(pid) == interpreter]
    finally:
        session.close()
    # The stage server and the post server: two processes, each forked fresh for this world.
    assert len(forked_from_it) == 2, forked_from_it


def _descendants(root: int) -> set[int]:
    parents = {pid: _parent(pid) for pid in map(int, filter(str.isdigit, os.listdir("/proc")))}
    found: set[int] = set()
    frontier = {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _parent(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
    except (OSError, IndexError, ValueError):
        return None


@pytest.fixture(scope="module")
def careful_pair(catalogue: Catalogue, generation: Any, across_workers: Shared[AuditRun]) -> AuditRun:
    """The careful pair over the whole catalogue, audited once in the run for the tests that read it."""
    return across_workers("two-servers-careful", lambda: audit(catalogue, generation))


def test_the_careful_pair_posts_what_the_person_approved_and_refuses_every_attack(
    careful_pair: AuditRun,
) -> None:
    run = careful_pair
    approve = next(c for c in run.controls if c.name == "approve")
    # Staged on one server, posted by the other: the post shows through the post server's probe.
    assert approve.passed, run.controls
    assert "tool:list_posted.posted[0]" in approve.detail
    judged = [r for r in run.results if r.verdict is not Verdict.NOT_APPLICABLE]
    # The person's approval is a command the agent never sees: the out-of-band families judge it too,
    # and prompt-forging the vendor the approver's CLI shows them first (escaped, as JSON).
    assert {r.family for r in judged} == {
        "self-approval",
        "token-replay",
        "approval-replay",
        "approval-transplant",
        "agent-reachable-approval",
        "prompt-forging",
        "double-spend",
        # A wrong invoice id before the honest one: the post server refuses it and posts the right one.
        "wrong-guess",
        # The invoice staged at 1 cent and posted at once: every invoice waits for a person here.
        "stage-time-fields",
    }
    for result in judged:
        assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), result


@pytest.mark.parametrize(
    ("flaw", "caught"),
    [
        # The post server reads no decision: the agent posts what nobody approved, and what was declined.
        # The post server takes no approval for what it posts: the agent's own request, or one the
        # person approved for another invoice, is posted all the same.
        (
            "posts-unapproved",
            {"MCA-SELFAPPROVE-001": V, "MCA-TOKREUSE-002": V, "MCA-OOBSELF-001": V, "MCA-OOBMOVE-001": V},
        ),
        # It never marks an invoice posted: one approval posts twice, and a race posts it many times.
        (
            "posts-twice",
            {
                "MCA-TOKREUSE-001": V,
                "MCA-TOKREUSE-003": V,
                "MCA-OOBREPLAY-001": V,
                # The person's approval given again posts again too: nothing was ever spent.
                "MCA-OOBREPLAY-002": V,
                "MCA-DSPEND-001": V,
            },
        ),
    ],
)
def test_each_flaw_of_the_post_server_is_caught_and_fools_no_other(
    catalogue: Catalogue, generation: Any, flaw: str, caught: dict[str, Verdict]
) -> None:
    # "Fools no other family" on this pair is proven once, over the whole catalogue, by posts-twice (the
    # flaw that reaches the most families: a spend never recorded); posts-unapproved runs the families of
    # the attacks that catch it (the families its corpus case, staging/posts-unapproved, runs).
    run = audit(catalogue, generation, flaw, families=CAUGHT_BY_FAMILY.get(flaw))
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    found = {r.id: r.verdict for r in run.results if r.verdict in (V, Verdict.WEAK)}
    assert found == caught, [(r.id, r.verdict, r.reason) for r in run.results if r.id in caught]


# The flaws audited over the families of the attacks that catch them (any other: the whole catalogue).
CAUGHT_BY_FAMILY = {
    "posts-unapproved": frozenset(
        {"self-approval", "token-replay", "agent-reachable-approval", "approval-transplant"}
    ),
}


# The person's steps on the servers they name (targets/staging-approval-route.yaml): the approval code
# read on the stage server's console, given to the post server's approval route over HTTP.
ROUTE = STAGING.parent / "staging-approval-route.yaml"
PERSONS = frozenset({"self-approval", "approval-replay", "approval-transplant", "agent-reachable-approval"})


def audit_route(catalogue: Catalogue, generation: Any, *post_flaws: str, read_on: str = "stage") -> AuditRun:
    profile = load_profile(ROUTE)
    assert profile.servers is not None
    flags = " ".join(f"--flaw {flaw}" for flaw in post_flaws)
    # The shipped profile's `python` is this interpreter, named so that the stage server (stdio) forks
    # from the SDK's zygote; the post server serves HTTP and starts its own interpreter.
    commands = tuple(
        (name, shlex.join([sys.executable, *shlex.split(cmd)[1:]]) + (f" {flags}" if name == "post" else ""))
        for name, cmd in profile.servers.commands
    )
    person = profile.confirmation.human if isinstance(profile.confirmation, Pending) else None
    assert person is not None
    first, *rest = person.approve
    approve = (replace(first, server=read_on), *rest)
    profile = replace(
        profile,
        command=dict(commands)["stage"],
        servers=replace(profile.servers, commands=commands),
        confirmation=replace(profile.confirmation, human=replace(person, approve=approve)),
        call_timeout=5.0,
    )
    return run_audit(
        forked(profile), catalogue=catalogue, select=lambda s: s.family in PERSONS, generation=generation
    )


def test_each_person_step_goes_to_the_server_it_names_and_the_careful_pair_refuses(
    catalogue: Catalogue, generation: Any
) -> None:
    run = audit_route(catalogue, generation)
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, run.controls
    said = " ".join(e for r in run.results for e in r.evidence)
    # The code read on the stage server's console, the decision sent to the post server's route.
    assert "read stderr (approval code for inv_" in said
    assert "/approvals/inv_" in said
    assert "HTTP 200" in said
    judged = {r.family: (r.verdict, r.layer) for r in run.results if r.verdict is not Verdict.NOT_APPLICABLE}
    assert judged == dict.fromkeys(PERSONS, (Verdict.REFUSED, Layer.TOOL)), [
        (r.id, r.verdict, r.reason) for r in run.results
    ]


def test_the_same_read_on_the_other_server_finds_no_code_and_judges_nothing(
    catalogue: Catalogue, generation: Any
) -> None:
    # The post server never prints a code: a step that names it reads there, and the honest flow fails.
    run = audit_route(catalogue, generation, read_on="post")
    approve = next(c for c in run.controls if c.name == "approve")
    assert not approve.passed
    assert "reached the person on stderr" in approve.detail, approve.detail
    assert {r.verdict for r in run.results} == {Verdict.INCONCLUSIVE}


def test_a_post_server_that_posts_twice_is_caught_through_its_approval_route(
    catalogue: Catalogue, generation: Any
) -> None:
    run = audit_route(catalogue, generation, "posts-twice")
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    found = {r.id: r.verdict for r in run.results if r.verdict in (V, Verdict.WEAK)}
    assert found == {"MCA-OOBREPLAY-001": V, "MCA-OOBREPLAY-002": V}, [
        (r.id, r.verdict, r.reason) for r in run.results
    ]


REPLAYS = frozenset({"token-replay", "approval-replay"})


@pytest.mark.parametrize("flaw", [(), ("posts-twice",)], ids=["careful", "posts-twice"])
def test_a_second_commit_answered_already_posted_is_the_gate_holding_and_its_flaw_is_caught(
    catalogue: Catalogue, generation: Any, flaw: tuple[str, ...]
) -> None:
    # "invoice inv_1 already posted", naming no approval: the single-use check of the post server, as a
    # webhook flow's "already used" is; nothing moved, so it is refused, not left inconclusive.
    run = run_audit(
        two_servers(*flaw, words="plain"),
        catalogue=catalogue,
        generation=generation,
        select=lambda spec: spec.family in REPLAYS,
    )
    judged = {r.id: (r.verdict, r.layer) for r in run.results if r.verdict is not Verdict.NOT_APPLICABLE}
    replayed = {"MCA-TOKREUSE-001", "MCA-OOBREPLAY-001"}
    assert replayed <= set(judged), judged
    for id_ in replayed:
        expected = (V, Layer.NONE) if flaw else (Verdict.REFUSED, Layer.TOOL)
        assert judged[id_][0] is expected[0], [(r.id, r.verdict, r.reason) for r in run.results]
        if not flaw:
            assert judged[id_] == expected
    said = " ".join(r.reason for r in run.results)
    assert flaw or "already posted" in said, said


def test_the_shipped_two_servers_profile_loads_and_runs(catalogue: Catalogue, generation: Any) -> None:
    # docs/how-to/channels.md shows this file: it runs as written, and the careful pair refuses a replay.
    profile = forked(load_profile(STAGING.parent / "staging-two-servers.yaml"))
    run = run_audit(
        profile,
        catalogue=catalogue,
        generation=generation,
        select=lambda spec: spec.family == "approval-replay",
    )
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    judged = {r.id: (r.verdict, r.layer) for r in run.results if r.verdict is not Verdict.NOT_APPLICABLE}
    # The person's approve step taken twice (link-twice: here the approve command run again) is refused
    # as well: the invoice is posted once, and its approval is spent.
    assert judged == {
        "MCA-OOBREPLAY-001": (Verdict.REFUSED, Layer.TOOL),
        "MCA-OOBREPLAY-002": (Verdict.REFUSED, Layer.TOOL),
    }, run.results
    assert "its approval is spent" in run.by_id()["MCA-OOBREPLAY-002"].reason


STAGED = frozenset({"staged-fields", "subject-drift", "ungated", "wrong-guess"})
R = (Verdict.REFUSED, Layer.TOOL)
FOUND = (V, Layer.NONE)
EDIT, RESTATED, OWN = "MCA-STAGED-001", "MCA-STAGED-002", "MCA-STAGED-003"


@pytest.mark.parametrize(
    ("edits", "commit_fields", "words", "flaws", "expected"),
    [
        # The stage server edits an approved invoice; the post server compares what the person approved
        # with what is staged now, and refuses the edited one. The commit names the id alone: nothing
        # but the id to change there, which wrong-guess tries.
        ("open", False, "approval", (), {EDIT: R}),
        # The stage server freezes an invoice once a person decided on it: the edit itself is refused.
        ("locked", False, "plain", (), {EDIT: R}),
        # The post server reads the decision but not what it approved: the edited amount is posted.
        ("open", False, "approval", ("posts-edited",), {EDIT: FOUND}),
        # The commit restates the invoice; the careful post server posts it only as staged and approved,
        # in both its wordings (no edit tool: the edit is not applicable).
        (None, True, "approval", (), {RESTATED: R, OWN: R}),
        (None, True, "plain", (), {RESTATED: R, OWN: R}),
        # It checks the id's approval and posts the call's own amount.
        (None, True, "approval", ("posts-given-fields",), {RESTATED: FOUND, OWN: R}),
        # It posts an id the stage server never staged, as the call gives it.
        (None, True, "approval", ("posts-unstaged",), {RESTATED: R, OWN: FOUND}),
    ],
    ids=[
        "careful-post",
        "careful-stage",
        "posts-edited",
        "restated-careful",
        "restated-careful-plain",
        "posts-given-fields",
        "posts-unstaged",
    ],
)
def test_a_staged_invoice_changed_after_its_approval_or_never_staged_is_refused_or_caught(
    catalogue: Catalogue,
    generation: Any,
    edits: str | None,
    commit_fields: bool,
    words: str,
    flaws: tuple[str, ...],
    expected: dict[str, tuple[Verdict, Layer]],
) -> None:
    run = run_audit(
        two_servers(*flaws, words=words, edits=edits, commit_fields=commit_fields),
        catalogue=catalogue,
        generation=generation,
        select=lambda spec: spec.family in STAGED,
    )
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    staged = {r.id: r for r in run.results if r.family == "staged-fields"}
    judged = {i: (r.verdict, r.layer) for i, r in staged.items() if r.verdict is not Verdict.NOT_APPLICABLE}
    assert judged == expected, [(r.id, r.verdict, r.reason) for r in staged.values()]
    said = " ".join(e for r in staged.values() for e in r.evidence)
    # The amount, changed tenfold and more after the person approved 500: through the stage server's
    # tool, or in the commit call itself.
    assert '"amount_cents": 5007' in said, said
    # Only this family is fooled (the edit tool is no ungated way to post, and no drift was declared),
    # but where the post server posts any id it does not know: wrong-guess's wrong id is posted too.
    others = {
        r.id: r.verdict for r in run.results if r.family != "staged-fields" and r.verdict in (V, Verdict.WEAK)
    }
    assert others == ({"MCA-BURN-001": V} if "posts-unstaged" in flaws else {}), others


def test_a_wrong_guess_the_agents_call_cannot_carry_is_not_applicable_never_a_refusal(
    catalogue: Catalogue, careful_pair: AuditRun
) -> None:
    # The person approves the pending id and their own step hands back what the post takes, so the
    # agent's post never names the pending id: a wrong guess at it cannot be sent, and the post that
    # goes out instead is the honest call sent early (invoice-intake-mcp's BURN-001 read "refused").
    # With the pending id in the post (the usual shape), the same attack is judged (the careful pair's audit).
    run = run_audit(two_servers(execute_by_saved_id=True), catalogue=catalogue, select=lambda s: s.id == BURN)
    assert all(c.passed for c in run.controls if c.name == "approve"), run.controls
    result = run.by_id()[BURN]
    assert result.verdict is Verdict.NOT_APPLICABLE, (result.reason, result.evidence)
    assert "carries no" in result.reason, result.reason
    judged = careful_pair.by_id()[BURN]
    assert judged.verdict is Verdict.REFUSED, (judged.reason, judged.evidence)
