"""Every protocol era: servers that ask with elicitation/create, and the downgrade between eras.

The legacy reference server (targets/legacy) asks over the back channel, the way
`ctx.elicit` does on a 2025-11-25 connection. Careful, it holds every family to
zero `vulnerable` and zero `weak`; with each flaw, exactly that family catches it
and no other is fooled (over the whole catalogue for the flaws only this server has; the others are the
reference server's flaws, whose "no other" the detection matrix proves). With `--mrtr-only-checks` the same tool speaks both eras,
and `protocol-downgrade` finds a gate that lives in its MRTR path alone.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache
from pathlib import Path

import anyio
import pytest
from baselined import assert_green_as_it_is, assert_green_with_its_findings_baselined
from conftest import MATRIX_GENERATION, Shared
from deadline import deadline
from mcp import types
from notes_audit import audit_notes

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Layer, Outcome, Phase, Result, Verdict
from mcp_confirm_audit.profile.loader import load_profile, profile_from_mapping
from mcp_confirm_audit.target.driver import connect
from mcp_confirm_audit.techniques import traits_of

LEGACY_SERVER = Path(__file__).resolve().parents[2] / "targets" / "legacy" / "server.py"
COLLECTIONS = LEGACY_SERVER.parents[1] / "collections-drift.yaml"
V, W, R, NA = Verdict.VULNERABLE, Verdict.WEAK, Verdict.REFUSED, Verdict.NOT_APPLICABLE
ACCEPT = types.ElicitResult(action="accept", content={"confirm": True})


def audit(
    catalogue: Catalogue,
    *flaws: str,
    families: Sequence[str] | None = None,
    both_eras: bool = False,
    style: str = "plain",
    **settings: object,
) -> AuditRun:
    """In-process and pinned to 2025-11-25 (fast); `both_eras` lets the same tool speak 2026-07-28 too.

    The server's wait for an answer is scaled with the round trip's bound, from one scale: on a loaded
    machine the harness's prompt answer came after an unscaled 2 s, and `timeout-proceeds` acted on
    every question (prompt-forging then saw a deletion nobody approved).
    """
    factory = {
        "flaws": list(flaws),
        "answer_timeout": deadline(2.0),
        "mrtr_only_checks": both_eras,
        "style": style,
    }
    raw = {
        "command": f"py:{LEGACY_SERVER}:build_server",
        "factory_args": factory,
        "tool": "delete_file",
        "call_timeout": deadline(10.0),
        **({} if both_eras else {"protocol": "2025-11-25"}),
        **settings,
    }
    profile = profile_from_mapping(raw, source="test")

    def select(spec: AttackSpec) -> bool:
        return families is None or spec.family in families

    return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)


SharedFn = Callable[..., AuditRun]


@pytest.fixture(scope="module")
def shared(catalogue: Catalogue, across_workers: Shared[AuditRun]) -> SharedFn:
    """`audit`, run once (per run, on any worker) for every test that asks the same of the same server."""

    @cache
    def run(
        *flaws: str, families: tuple[str, ...] | None = None, both_eras: bool = False, style: str = "plain"
    ) -> AuditRun:
        key = f"eras-{'-'.join(flaws)}-{','.join(families or ('all',))}-{both_eras}-{style}"
        return across_workers(
            key, lambda: audit(catalogue, *flaws, families=families, both_eras=both_eras, style=style)
        )

    return run


def _only(run: AuditRun, *families: str) -> AuditRun:
    """The results of `families` in a run that audited more of them."""
    return replace(run, results=tuple(r for r in run.results if r.family in families))


def _found(run: AuditRun) -> dict[str, Verdict]:
    return {r.id: r.verdict for r in run.results if r.verdict in (V, W)}


def test_the_careful_legacy_server_holds_every_family_asked_over_the_back_channel(shared: SharedFn) -> None:
    run = shared()
    assert all(c.passed for c in run.controls if c.applicable), run.controls
    assert _found(run) == {}
    judged = [r for r in run.results if r.verdict is not NA]
    assert {r.mechanism for r in run.results} == {"elicitation"}
    assert {r.era for r in run.results if r.family != "protocol-downgrade"} == {"2025-11-25"}
    # Each family ran for real over the back channel: refused, by the tool that asked.
    refused = {r.family for r in judged if r.verdict is R}
    assert {
        "consent",
        "prompt-forging",
        "symlink-swap",
        "parent-swap",
        "identity-swap",
        "out-of-root",
        "double-spend",
        "capability-downgrade",
        "unanswered",
    } <= refused
    # Its ctx.elicit cannot ask over 2026-07-28 at all: there is no second era to walk around it with.
    downgrade = {r.verdict for r in run.results if r.family == "protocol-downgrade"}
    assert downgrade == {NA}
    # Judged, not left open: no inconclusive result, every control held; the CI gate exits 0.
    assert_green_as_it_is(run)


def test_the_state_families_do_not_apply_to_a_legacy_question_each_saying_why(shared: SharedFn) -> None:
    # The careful server's whole-catalogue audit above: these families' results in it.
    run = _only(shared(), "replay", "forged-state", "cross-target")
    assert run.results
    for result in run.results:
        assert result.verdict is NA
        found = traits_of(result.family)
        assert found is not None
        assert result.reason == found.needs_state


# Each flaw, and the attacks that must catch it; every other family must not be fooled.
FLAW_CAUGHT_BY = {
    "decline-as-accept": {"MCA-CONSENT-001": V, "MCA-CONSENT-002": V},
    "accept-means-yes": {"MCA-CONSENT-003": V, "MCA-CONSENT-007": V, "MCA-CONSENT-010": V},
    "truthy-strings": {"MCA-CONSENT-004": V, "MCA-CONSENT-005": V, "MCA-CONSENT-006": W},
    "unsanitised-question": {"MCA-PROMPT-001": V},
    "question-without-name": {"MCA-PROMPT-001": V},
    "asks-for-secret": {"MCA-PROMPT-010": V},
    "no-recheck": {"MCA-SYMLINK-001": V, "MCA-PARENT-001": V, "MCA-IDSWAP-001": V},
    "no-identity-check": {"MCA-IDSWAP-001": V},
    "no-containment": {"MCA-ROOT-001": V, "MCA-ROOT-002": V},
    "approval-cache": {"MCA-DSPEND-001": V},
    "elicits-without-capability": {"MCA-DOWNGRADE-001": W, "MCA-DOWNGRADE-002": W},
    "waits-forever": {"MCA-NOANSWER-001": W},
    "timeout-proceeds": {"MCA-NOANSWER-001": V},
}
FLAW_FAMILIES = {
    # The decline that races the accepts (MCA-DSPEND-002) is a decline acted on, too.
    "decline-as-accept": {"consent", "protocol-downgrade", "double-spend"},
    "accept-means-yes": {"consent", "protocol-downgrade"},
    "truthy-strings": {"consent"},
    "unsanitised-question": {"prompt-forging"},
    "question-without-name": {"prompt-forging"},
    "asks-for-secret": {"prompt-forging"},
    "no-recheck": {"symlink-swap", "parent-swap", "identity-swap"},
    "no-identity-check": {"identity-swap"},
    "no-containment": {"out-of-root"},
    "approval-cache": {"double-spend"},
    "elicits-without-capability": {"capability-downgrade"},
    "waits-forever": {"unanswered"},
    "timeout-proceeds": {"unanswered"},
}


# The flaws only the legacy server has, audited over the whole catalogue: "fools no other family" proven
# on this server's shape. Every other flaw here is the reference server's flaw of the same name, which the
# detection matrix audits whole (test_detection_matrix.py, over MRTR) beside the careful legacy server's
# whole audit above; here each runs the families it may fool, where its attacks must catch it.
LEGACY_ONLY = frozenset({"approval-cache", "waits-forever", "timeout-proceeds"})


def _families_of(flaw: str) -> tuple[str, ...] | None:
    """The families a flaw's audit runs: all for a flaw only this server has, else those it may fool."""
    return None if flaw in LEGACY_ONLY else tuple(sorted(FLAW_FAMILIES[flaw]))


@pytest.mark.parametrize("flaw", sorted(FLAW_CAUGHT_BY))
def test_each_flaw_of_the_legacy_server_is_caught_by_its_family_and_fools_no_other(
    catalogue: Catalogue, shared: SharedFn, flaw: str
) -> None:
    run = shared(flaw, families=_families_of(flaw))
    found = _found(run)
    for attack_id, verdict in FLAW_CAUGHT_BY[flaw].items():
        assert found.get(attack_id) is verdict, (attack_id, run.by_id()[attack_id].reason)
    fooled = {r.family for r in run.results if r.verdict in (V, W)}
    assert fooled <= FLAW_FAMILIES[flaw], [(r.id, r.reason) for r in run.results if r.family in fooled]
    if flaw in LEGACY_ONLY:
        assert {r.family for r in run.results} > FLAW_FAMILIES[flaw], "a legacy-only flaw is audited whole"
    assert_green_with_its_findings_baselined(run, catalogue)


def test_a_vulnerable_result_over_the_back_channel_names_its_era_and_the_person_was_asked(
    shared: SharedFn,
) -> None:
    # The flaw's audit of the matrix above.
    run = shared("no-identity-check", families=_families_of("no-identity-check"))
    swapped = run.by_id()["MCA-IDSWAP-001"]
    assert swapped.verdict is V
    assert swapped.era == "2025-11-25"
    assert swapped.mechanism == "elicitation"
    # The swap was made while the server waited on its elicitation/create: the real window.
    assert any("elicitation/create" in line for line in swapped.evidence)


def test_a_gate_that_lives_only_in_the_mrtr_path_is_found_naming_both_eras(shared: SharedFn) -> None:
    careful = shared(both_eras=True, families=("protocol-downgrade",))
    assert {r.id: r.verdict for r in careful.results} == {
        "MCA-ERAS-001": R,
        "MCA-ERAS-002": R,
        "MCA-ERAS-003": R,
        "MCA-ERAS-004": R,
        "MCA-ERAS-005": R,
    }
    # Controls first: the honest flow completed over 2025-11-25 (asked, approved, deleted), once.
    [control] = _controls_over_the_other_era(careful)
    assert "<- input-required" in control, control
    # The family's results in the flawed tool's whole-catalogue audit (the next test's).
    flawed = _only(shared("asks-only-in-mrtr", both_eras=True), "protocol-downgrade")
    results = flawed.by_id()
    assert {r.id: r.verdict for r in flawed.results} == {
        "MCA-ERAS-001": V,
        "MCA-ERAS-002": V,
        "MCA-ERAS-003": V,
        # It acts on the legacy call alone, before any swap or any yes: neither the swap nor the
        # replay in each era applies there (MCA-ERAS-001 is the finding), so a baseline holds it green.
        "MCA-ERAS-004": Verdict.NOT_APPLICABLE,
        "MCA-ERAS-005": Verdict.NOT_APPLICABLE,
    }
    assert all("(MCA-ERAS-001) judges" in results[i].reason for i in ("MCA-ERAS-004", "MCA-ERAS-005"))
    unasked = results["MCA-ERAS-001"]
    assert unasked.rated_severity == "critical"
    assert "over 2026-07-28 the gate held" in unasked.reason
    assert "over 2025-11-25" in unasked.reason
    assert "acted without asking" in unasked.reason
    assert unasked.era == "2026-07-28, 2025-11-25"


# One careful run per style holds both defences in both eras; the flawed run beside it has one of
# them on the MRTR path alone, and exactly the attack that runs that family in each era finds it.
@pytest.mark.parametrize(
    ("style", "flaw", "caught"),
    [
        ("plain", "identity-only-in-mrtr", "MCA-ERAS-004"),
        ("error-result", "single-use-only-in-mrtr", "MCA-ERAS-005"),
    ],
    ids=["swap-plain", "replay-error-result"],
)
def test_a_defence_that_lives_only_in_the_mrtr_path_is_found_by_its_family_in_each_era(
    catalogue: Catalogue, shared: SharedFn, style: str, flaw: str, caught: str
) -> None:
    # The same careful tool in two styles holds the swap and the replay in both eras: over MRTR its
    # state is spent once, over the back channel the same call again asks anew.
    careful = shared(both_eras=True, families=("protocol-downgrade",), style=style)
    for held in ("MCA-ERAS-004", "MCA-ERAS-005"):
        result = careful.by_id()[held]
        assert (result.verdict, result.layer) == (R, Layer.TOOL), (held, result.reason, result.evidence)
    replayed = careful.by_id()["MCA-ERAS-005"]
    assert "asked the user again instead of acting" in replayed.reason, replayed.reason
    flawed = audit(catalogue, flaw, both_eras=True, families=("protocol-downgrade",), style=style)
    found = {r.id: r.verdict for r in flawed.results if r.verdict in (V, W)}
    assert found == {caught: V}, [(r.id, r.verdict, r.reason) for r in flawed.results]
    result = flawed.by_id()[caught]
    assert "over 2026-07-28 the gate held" in result.reason, result.reason
    assert result.effect.removed, result.effect
    if caught == "MCA-ERAS-004":
        # With the identity check on the MRTR path alone, the file swapped in while a 2025-era call
        # waits for the person is deleted.
        assert "over 2025-11-25 the tool deleted the file swapped in after the question" in result.reason
        assert sum("renamed onto" in line for line in result.evidence) == 2, result.evidence
    else:
        # The MRTR state is refused the second time; the legacy path remembered the yes for the path,
        # and the same call again deleted the file put back after the honest deletion, unasked.
        assert "over 2025-11-25 the tool acted a second time on the person's one yes" in result.reason
        assert sum("after the honest redemption" in line for line in result.evidence) == 2, result.evidence
        again = [line for line in result.evidence if "the same call again" in line]
        [unasked] = again
        assert "[attack]" in unasked, unasked
        assert "[asked" not in unasked, unasked
        mrtr_replay = next(line for line in result.evidence if "the same state redeemed again" in line)
        assert "[setup]" in mrtr_replay, mrtr_replay
        assert "<- tool-error" in mrtr_replay, mrtr_replay


MRTR_ONLY = LEGACY_SERVER.parents[1] / "reference" / "server.py"
UNSERVED = (
    'the target completes no honest flow over 2025-11-25: "Handler returned an invalid result"; '
    "a downgrade has nothing to reach"
)


def _controls_over_the_other_era(run: AuditRun) -> list[str]:
    return [line for r in run.results for line in r.evidence if "control: the honest call" in line]


def test_a_server_that_serves_no_legacy_client_refused_nothing_there_and_the_family_does_not_apply(
    catalogue: Catalogue,
) -> None:
    # The MRTR reference tool cannot answer a 2025-11-25 connection at all (-32603): its honest flow
    # never completes there, so no defence refused anything in that era. Controls first: not
    # applicable, quoting the reply, never refused. The control runs once for the five attacks.
    profile = profile_from_mapping(
        {"command": f"py:{MRTR_ONLY}:build_server", "tool": "delete_file", "call_timeout": 10.0},
        source="test",
    )
    run = run_audit(
        profile,
        catalogue=catalogue,
        select=lambda spec: spec.family == "protocol-downgrade",
        generation=MATRIX_GENERATION,
    )
    assert all(c.passed for c in run.controls if c.applicable), run.controls
    assert {r.id: (r.verdict, r.reason) for r in run.results} == {
        f"MCA-ERAS-00{n}": (NA, UNSERVED) for n in range(1, 6)
    }
    [control] = _controls_over_the_other_era(run)
    assert '<- rpc-error -32603 "Handler returned an invalid result"' in control, control
    assert "[setup] over 2025-11-25: control" in control, control
    assert_green_as_it_is(run)


# The server refuses an answer sooner than its bound after the question (`--too-fast`, as magnemo-mcp does
# with 0.3 s); the person the profile describes reads for longer. Not a deadline: never scaled. Answered
# at once, the harness is far inside a bound of seconds however loaded the machine; at the person's pace
# it waits at least `answer_after`, so neither direction rests on how fast anything runs.
TOO_FAST, READS_FOR, AT_ONCE_BOUND = 0.3, 0.4, 3.0


@pytest.mark.parametrize("protocol", ["2025-11-25", None], ids=["elicitation", "mrtr"])
def test_a_server_that_refuses_answers_faster_than_a_person_reads_is_answered_at_the_profiles_pace(
    catalogue: Catalogue, protocol: str | None
) -> None:
    def consent(too_fast: float, **settings: object) -> AuditRun:
        factory = {"too_fast": too_fast, "mrtr_only_checks": protocol is None, "answer_timeout": 10.0}
        raw = {
            "command": f"py:{LEGACY_SERVER}:build_server",
            "factory_args": factory,
            "tool": "delete_file",
            "call_timeout": 10.0,
            **({"protocol": protocol} if protocol else {}),
            **settings,
        }
        return run_audit(
            profile_from_mapping(raw, source="test"),
            catalogue=catalogue,
            select=lambda spec: spec.id == "MCA-CONSENT-001",
            generation=MATRIX_GENERATION,
        )

    # Answered at once, the honest yes is refused: no honest flow, so the attack is inconclusive, and
    # the control says why and which key sets the pace.
    hurried = consent(AT_ONCE_BOUND)
    approve = next(c for c in hurried.controls if c.name == "approve")
    assert not approve.passed
    assert "faster than a person reads it; nothing was deleted" in approve.detail, approve.detail
    assert "answer_after: SECONDS" in approve.detail, approve.detail
    declined = hurried.by_id()["MCA-CONSENT-001"]
    assert declined.verdict is Verdict.INCONCLUSIVE, declined.reason
    assert "faster than a person reads it" in declined.reason, declined.reason
    # At the person's pace the honest flow completes, and the decline is judged: refused by the tool.
    paced = consent(TOO_FAST, answer_after=READS_FOR)
    assert all(c.passed for c in paced.controls if c.applicable), paced.controls
    declined = paced.by_id()["MCA-CONSENT-001"]
    assert (declined.verdict, declined.layer) == (R, Layer.TOOL), (declined.reason, declined.evidence)
    assert "faster than a person" not in " ".join(declined.evidence)


def test_the_same_tool_over_2026_07_28_is_audited_through_mrtr_and_its_flaw_stays_out_of_sight(
    shared: SharedFn,
) -> None:
    # The flaw lives on the legacy path: every family but protocol-downgrade, run over MRTR, misses it.
    run = shared("asks-only-in-mrtr", both_eras=True)
    assert {r.mechanism for r in run.results} == {"mrtr"}
    assert {r.family for r in run.results if r.verdict in (V, W)} == {"protocol-downgrade"}


def test_pinned_to_2025_06_18_the_handshake_asks_for_it(catalogue: Catalogue) -> None:
    run = audit(catalogue, "decline-as-accept", families=("consent",), protocol="2025-06-18")
    assert {r.era for r in run.results} == {"2025-06-18"}
    assert run.by_id()["MCA-CONSENT-001"].verdict is V


def test_zero_configuration_finds_elicitation_on_the_legacy_server_over_stdio(catalogue: Catalogue) -> None:
    # No profile: the command alone. The SDK negotiates 2026-07-28, the tool's ctx.elicit has no back
    # channel there, and the tool is audited again over a legacy connection, where it asks.
    command = shlex.join(
        [sys.executable, str(LEGACY_SERVER), "--root", "{root}", "--flaw", "decline-as-accept"]
    )
    profile = profile_from_mapping({"command": command, "call_timeout": 6.0}, source="test")

    def select(spec: AttackSpec) -> bool:
        return spec.family == "consent"

    run = run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)
    assert {r.tool for r in run.results} == {"delete_file"}
    assert {(r.mechanism, r.era) for r in run.results} == {("elicitation", "2025-11-25")}
    results = run.by_id()
    assert results["MCA-CONSENT-001"].verdict is V
    assert results["MCA-CONSENT-003"].verdict is R
    assert results["MCA-CONSENT-003"].layer is Layer.TOOL
    # Its yes was never refused as too soon: no pace was learned, nothing waited (engine/pace).
    assert not any(c.name == "pace" for c in run.controls), run.controls


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_an_answer_given_after_the_server_stopped_waiting_leaves_the_next_question_to_its_own_call(
    tmp_path: Path,
) -> None:
    # On a slow machine a person's answer can come after the server's own deadline lapsed. The
    # late answer hears that refusal, and the next call is asked and answered as its own: the
    # harness waits for the server's end (an event), so no load makes this pass or fail.
    (tmp_path / "first.txt").write_text("asked about, never deleted")
    (tmp_path / "second.txt").write_text("deleted once its own question is answered")
    raw = {
        "command": f"py:{LEGACY_SERVER}:build_server",
        "factory_args": {"answer_timeout": 0.2},
        "call_timeout": 10.0,
        "protocol": "2025-11-25",
    }
    profile = profile_from_mapping(raw, source="test")
    with anyio.fail_after(
        deadline(60)
    ):  # a hang is the defect; the rounds themselves are bounded by call_timeout
        async with connect(profile, tmp_path, tmp_path, "primary") as conn:
            assert conn.back is not None
            asked = (await conn.call(Phase.ATTACK, "ask", "delete_file", {"path": "first.txt"})).response
            assert asked.outcome is Outcome.INPUT_REQUIRED
            parked = conn.back.parked(asked.request_state)
            assert parked is not None
            await parked.ended.wait()  # the server's own deadline lapsed: it refused
            late = await conn.call(
                Phase.ATTACK,
                "late",
                "delete_file",
                {"path": "first.txt"},
                state=asked.request_state,
                responses={asked.questions[0].key: ACCEPT},
            )
            assert late.response.outcome is Outcome.TOOL_ERROR
            assert "expired" in late.response.text

            second = (await conn.call(Phase.ATTACK, "ask", "delete_file", {"path": "second.txt"})).response
            assert second.outcome is Outcome.INPUT_REQUIRED
            assert "second.txt" in (second.questions[0].message or "")
            done = await conn.call(
                Phase.ATTACK,
                "answer",
                "delete_file",
                {"path": "second.txt"},
                state=second.request_state,
                responses={second.questions[0].key: ACCEPT},
            )
            assert done.response.outcome is Outcome.COMPLETE, done.response.text
            await conn.settle()
            assert conn.alive
    assert (tmp_path / "first.txt").exists()
    assert not (tmp_path / "second.txt").exists()


# A server that waits longer for its person than a round trip, on purpose, and says so. Both from the
# scale (tests/deadline.py): the rounds are in process, and each test waits these out (it was 5 s and 9 s).
LONG_WAIT = {"call_timeout": deadline(2.5), "answer_timeout": deadline(4.5)}


def _waits_long(catalogue: Catalogue, *flaws: str, **settings: object) -> Result:
    factory = {"flaws": list(flaws), "answer_timeout": LONG_WAIT["answer_timeout"]}
    raw = {
        "command": f"py:{LEGACY_SERVER}:build_server",
        "factory_args": factory,
        "tool": "delete_file",
        "call_timeout": LONG_WAIT["call_timeout"],
        "protocol": "2025-11-25",
        **settings,
    }
    run = run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.family == "unanswered",
        generation=MATRIX_GENERATION,
    )
    return run.by_id()["MCA-NOANSWER-001"]


def test_a_server_that_waits_longer_than_a_round_trip_for_its_person_is_judged_by_its_declared_deadline(
    catalogue: Catalogue,
) -> None:
    # It waits its answer_timeout, then refuses: with answer_deadline the harness waits that long, and sees it fail closed.
    declared = _waits_long(catalogue, answer_deadline=LONG_WAIT["answer_timeout"])
    assert declared.verdict is R, declared.reason
    assert "expired" in declared.reason
    # Undeclared, the round's bound is one call timeout: still waiting then is what the family reports.
    undeclared = _waits_long(catalogue)
    assert undeclared.verdict is W
    assert "set answer_deadline" in undeclared.reason


def test_a_server_that_waits_forever_is_still_caught_with_a_declared_deadline(catalogue: Catalogue) -> None:
    forever = _waits_long(catalogue, "waits-forever", answer_deadline=LONG_WAIT["answer_timeout"])
    assert forever.verdict is W
    assert f"its declared answer_deadline of {LONG_WAIT['answer_timeout']:g}s" in forever.reason


WAKE_SERVER = LEGACY_SERVER.with_name("wake.py")


@pytest.mark.parametrize(
    ("flaws", "expected"),
    [
        # Careful: every call asks, and each accepted one sends its three packets. Three rows
        # are one effect: seven approvals are seven wakes, not twenty-one.
        ((), {"MCA-DSPEND-001": R, "MCA-DSPEND-002": R}),
        # One accept stands for the calls after it: they wake the machine unasked.
        (("approval-cache",), {"MCA-DSPEND-001": V, "MCA-DSPEND-002": V}),
    ],
)
def test_an_approval_that_leaves_three_marks_is_counted_as_one_effect_even_after_a_decline(
    catalogue: Catalogue, flaws: tuple[str, ...], expected: dict[str, Verdict]
) -> None:
    raw = {
        "command": f"py:{WAKE_SERVER}:build_server",
        "factory_args": {"flaws": list(flaws)},
        "tool": "wake",
        "args": {"host": "study-pc"},
        "effect": [{"file": "packets.jsonl"}],
        "call_timeout": 10.0,
        "protocol": "2025-11-25",
    }
    profile = profile_from_mapping(raw, source="test")

    def select(spec: AttackSpec) -> bool:
        return spec.family == "double-spend"

    run = run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)
    assert all(c.passed for c in run.controls if c.applicable), run.controls
    assert {r.id: r.verdict for r in run.results} == expected, [(r.id, r.reason) for r in run.results]


def _wake_in_each_era(catalogue: Catalogue, style: str, flaws: Sequence[str], protocol: str | None) -> Result:
    """MCA-ERAS-005 alone on the wake server speaking both eras: an action that names no file."""
    raw = {
        "command": f"py:{WAKE_SERVER}:build_server",
        "factory_args": {"flaws": list(flaws), "both_eras": True, "style": style},
        "tool": "wake",
        "args": {"host": "study-pc"},
        "effect": [{"file": "packets.jsonl"}],
        "call_timeout": 10.0,
        **({"protocol": protocol} if protocol else {}),
    }
    run = run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.id == "MCA-ERAS-005",
        generation=MATRIX_GENERATION,
    )
    assert all(c.passed for c in run.controls if c.applicable), run.controls
    return run.by_id()["MCA-ERAS-005"]


# Replay in each era for an action that names no file (a wake: three packet rows per use). The
# primary's era is where the gate must hold first: the negotiated 2026-07-28, or 2025-11-25 pinned.
@pytest.mark.parametrize(
    ("style", "flaw", "protocol", "walks_into"),
    [
        ("plain", None, None, None),
        ("signed", None, "2025-11-25", None),
        ("plain", "single-use-only-in-mrtr", None, "2025-11-25"),
        ("signed", "single-use-only-in-legacy", "2025-11-25", "2026-07-28"),
    ],
    ids=["careful-plain", "careful-signed-legacy-first", "mrtr-only", "legacy-only"],
)
def test_an_approval_spent_in_one_era_only_is_found_for_an_action_that_names_no_file(
    catalogue: Catalogue, style: str, flaw: str | None, protocol: str | None, walks_into: str | None
) -> None:
    result = _wake_in_each_era(catalogue, style, [flaw] if flaw else [], protocol)
    if walks_into is None:
        # Both careful styles spend an MRTR state once and ask anew over the back channel.
        assert (result.verdict, result.layer) == (R, Layer.TOOL), (result.reason, result.evidence)
        # Over the back channel the same call asks anew; over MRTR the state is refused, in the
        # signed style's own words.
        said = (
            "Refused: approval invalid or replayed" if protocol else "asked the user again instead of acting"
        )
        assert said in result.reason, result.reason
        return
    held = "2026-07-28" if walks_into == "2025-11-25" else "2025-11-25"
    assert result.verdict is V, (result.reason, result.evidence)
    assert f"over {held} the gate held" in result.reason, result.reason
    assert f"over {walks_into} the tool acted a second time on the person's one yes" in result.reason
    # The effect is observed: a second wake's three packet rows, not a reply's words.
    assert "file:packets.jsonl" in result.reason, result.reason
    honest = [line for line in result.evidence if "(the honest redemption)" in line]
    assert len(honest) == 2, result.evidence
    again = "the same call again" if walks_into == "2025-11-25" else "the same state redeemed again"
    [replayed] = [line for line in result.evidence if again in line]
    assert "[attack]" in replayed, replayed


def test_a_use_that_does_not_act_twice_is_not_applicable_to_replay_in_each_era(catalogue: Catalogue) -> None:
    # A deleted collection is gone: the same use asked and approved again acts on nothing, so no
    # replay could be seen acting. Not applicable, saying why; never inconclusive or refused.
    profile = load_profile(COLLECTIONS)
    run = run_audit(
        profile,
        catalogue=catalogue,
        select=lambda spec: spec.id == "MCA-ERAS-005",
        generation=MATRIX_GENERATION,
    )
    result = run.by_id()["MCA-ERAS-005"]
    assert result.verdict is NA, (result.reason, result.evidence)
    assert "the same use of 'delete_collection', asked and approved again, did not act again" in result.reason
    assert "no collection" in result.reason, result.reason


def test_an_action_that_names_no_file_is_never_sent_a_path_when_its_honest_flow_failed(
    catalogue: Catalogue,
) -> None:
    # The person's yes is a "no" here (answer: confirm false), so approve never acts and no path style
    # is proven. unanswered still runs without an honest flow (its trait): it must call the wake with
    # its host, not a case file's path (magnemo-mcp's handoff ended in a harness error that way).
    raw = {
        "command": f"py:{WAKE_SERVER}:build_server",
        "tool": "wake",
        "args": {"host": "study-pc"},
        "effect": [{"file": "packets.jsonl"}],
        "call_timeout": 2.0,
        "protocol": "2025-11-25",
        "answer": {"confirm": False},
    }
    run = run_audit(
        profile_from_mapping(raw, source="test"),
        catalogue=catalogue,
        select=lambda spec: spec.id == "MCA-NOANSWER-001",
        generation=MATRIX_GENERATION,
    )
    assert not next(c for c in run.controls if c.name == "approve").passed
    result = run.by_id()["MCA-NOANSWER-001"]
    assert result.evidence[0].startswith('[setup] ask -> wake({"host": "study-pc"})'), result.evidence


def test_the_other_eras_control_stages_its_use_with_the_profiles_own_values(catalogue: Catalogue) -> None:
    # The notes server (magnemo-mcp's shape) takes only its own stores. The other era's control used to
    # stage its use with every value varied ('playbooks-1'), which the server refuses, and every ERAS
    # attack ended inconclusive on a careful server. The control's use is the setup run again over that
    # era's process, as the profile gives it: the 2025-era tool cannot ask over MRTR, so not applicable.
    result = audit_notes(catalogue, "MCA-ERAS-001", flaws=())
    assert (result.verdict, result.layer) == (NA, None), (result.reason, result.evidence)
    assert "the tool asks only over a back channel (elicitation/create)" in result.reason, result.reason
    # The victim's use, then the control's over the other era's process: both as the profile stages it.
    staged = [line for line in result.evidence if "-> stage(" in line]
    assert len(staged) == 2, result.evidence
    assert all('"store": "playbooks"}' in line and "<- complete" in line for line in staged), staged
    assert any("over 2026-07-28: control: the honest call" in line for line in result.evidence)
