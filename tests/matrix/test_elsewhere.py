"""The person approves somewhere else: each channel driven both ways, each out-of-band family proven.

`targets/elsewhere/server.py` is one careful server per channel (a webhook with an approve
link, a paired device signing its requests with HMAC, a terminal prompt, a signed
challenge), each with one flaw per family; the profiles beside it (`targets/elsewhere-*.yaml`)
play the person. Every run is a real process driven over stdio by the real SDK, the person's
steps real requests at the sink, real commands and a real pseudo-terminal.

Each audit runs the families (and, where a name costs the person a step, the prompt-forging
attacks) its tests read. The careful terminal is audited whole here; the careful webhook, device
and signed channels are audited whole by the corpus (`mcp-confirm-audit corpus`, outside CI,
targets/corpus/corpus.yaml), as is every flaw's "fools no other" over all four out-of-band families.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
from baselined import assert_green_with_its_findings_baselined
from conftest import MATRIX_GENERATION, Shared, forked
from deadline import deadline, scaled

from mcp_confirm_audit.catalogue.generation import CI_SEED, Generation
from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Layer, Result, Verdict
from mcp_confirm_audit.profile.loader import load_profile, resolve_profile
from mcp_confirm_audit.techniques import traits

TARGETS = Path(__file__).resolve().parents[2] / "targets"
SERVER = TARGETS / "elsewhere" / "server.py"
# The families that judge what a person handed over, by the flaw that each one catches.
OUT_OF_BAND = {
    "replay": "approval-replay",
    "transplant": "approval-transplant",
    "agent-reachable": "agent-reachable-approval",
    "expiry": "approval-expiry",
}
HANDED_OVER = ("webhook", "device", "signed", "signed-two")
# A profile's channel and the server's options for it: the signed challenge taken back in two fields.
SERVER_CHANNEL = {
    "signed-two": ("signed", "--fields", "two"),
    "webhook-chat": ("webhook", "--webhook", "{sink}/hook"),
    "device-two": ("device", "--devices", "2"),
}


@pytest.fixture(autouse=True)
def owner_key(monkeypatch: pytest.MonkeyPatch) -> None:
    # The owner's signing key: the server and sign.py (the person) read it; the agent is never given it.
    monkeypatch.setenv("ELSEWHERE_OWNER_KEY", "owner-key-3b9f-never-the-agents")


def _audit(
    catalogue: Catalogue,
    channel: str,
    *flaws: str,
    families: frozenset[str],
    generation: Generation = MATRIX_GENERATION,
    ttl: float = 5,
    options: tuple[str, ...] = (),
    prompts: frozenset[str] | None = None,
    **settings: object,
) -> AuditRun:
    """`prompts`: only these prompt-forging attacks (a test that reads no other's verdict runs no other)."""
    profile = load_profile(TARGETS / f"elsewhere-{channel}.yaml")
    served, *more = SERVER_CHANNEL.get(channel, (channel,))
    words = [sys.executable, str(SERVER), "--root", "{root}", "--channel", served, *more]
    # The server's wait for its person, scaled as the profile's deadlines are (forked() below).
    words += ["--ttl", f"{deadline(ttl):g}"] if channel == "terminal" else []
    words += ["--webhook", "{sink}/hook"] if channel == "webhook" else []
    for flaw in flaws:
        words += ["--flaw", flaw]
    words += options
    profile = resolve_profile(replace(profile, **settings), shlex.join(words), None)  # type: ignore[arg-type]
    # Over stdio the server's processes fork from the SDK's zygote (a terminal's run on a pty as written).
    profile = forked(profile)

    def select(spec: AttackSpec) -> bool:
        if spec.family == "prompt-forging" and prompts is not None:
            return spec.id in prompts and spec.family in families
        return spec.family in families

    return run_audit(profile, catalogue=catalogue, select=select, generation=generation)


# A careful channel shows no name raw: a few generated names beside the fixed hostile ones say so, and
# every name costs the person's steps (a device's two signed requests, each a process of its own).
# A failing generated name is reported as drawn, not shrunk: the tests here read which attack a flaw
# fools, never how small its name is (shrinking has its proof in tests/unit/test_generated_search.py),
# and each smaller candidate would be another round of the person's steps (some 55 on a device).
FEW_NAMES = Generation(examples=3, seed=CI_SEED, shrink_tries=0)
# A flawed card is caught by a fixed hostile name (each name read is a process of the person's device).
ONE_NAME = Generation(examples=1, seed=CI_SEED, shrink_tries=0)


def _verdicts(run: AuditRun, of: frozenset[str] | None = None) -> dict[str, tuple[Verdict, Layer | None]]:
    return {
        r.family: (r.verdict, r.layer)
        for r in run.results
        if r.verdict is not Verdict.NOT_APPLICABLE and (of is None or r.family in of)
    }


def _of(run: AuditRun, families: frozenset[str]) -> list[Result]:
    return [r for r in run.results if r.family in families]


SWAPS = frozenset({"symlink-swap", "parent-swap", "identity-swap"})
# Every family of the catalogue: a careful channel audited whole (what does not apply is decided
# before anything starts, so the cost is the families that do).
WHOLE = frozenset(traits())
# The channels audited whole here: the terminal, whose every family that applies is one a test below
# reads. The others are audited whole by the corpus (`mcp-confirm-audit corpus`, outside CI: cases
# elsewhere-webhook/careful, elsewhere-signed/careful, elsewhere-signed-two/careful and
# elsewhere-device/careful, docs/explanation/corpus.md); here, the families the tests below read.
AUDITED_WHOLE = ("terminal",)
# What a raw name forges on a terminal (escapes, line breaks) and what it does not (markup): the
# raw-prompt tests read these three verdicts and no other, so only these three attacks run.
RAW_ON_A_TERMINAL = frozenset({"MCA-PROMPT-001", "MCA-PROMPT-004", "MCA-PROMPT-007"})
# What a device's card is proven on both ways: the raw-prompt and masks-secrets flaws' attacks, and
# the card naming its file. Each name read is the person's signed request (a process of its own), so
# the other prompt-forging attacks read the card in the corpus's whole audit, not in CI.
ON_A_CARD = RAW_ON_A_TERMINAL | {"MCA-PROMPT-012", "MCA-PROMPT-013"}
HANDED_OVER_FAMILIES = frozenset({*OUT_OF_BAND.values(), "double-spend"})
# Each careful channel is audited once (per run) for every test below that asks it something: the
# out-of-band families, and beside them what the person is shown (few names: prompt-forging alone reads
# the generation's examples), the race of one approval, the terminal's own question, wait and swaps.
CAREFUL_FAMILIES = {
    "webhook": HANDED_OVER_FAMILIES | {"prompt-forging"},
    "device": HANDED_OVER_FAMILIES | {"prompt-forging", "self-approval", "token-replay"},
    "signed": HANDED_OVER_FAMILIES,
    "signed-two": HANDED_OVER_FAMILIES,
    "terminal": WHOLE,
}
# The prompt-forging attacks each careful channel runs (all, unless named here).
CAREFUL_PROMPTS = {"device": ON_A_CARD}
# The terminal gate that takes no answer as yes, likewise once for its two tests.
FAILS_OPEN_FAMILIES = frozenset({"unanswered", "self-approval"})


@pytest.fixture(scope="module")
def careful(catalogue: Catalogue, across_workers: Shared[AuditRun]) -> Callable[[str], AuditRun]:
    """The careful server's audit on a channel, run the first time a test (on any worker) asks for it."""

    @cache
    def run(channel: str) -> AuditRun:
        return across_workers(
            f"elsewhere-careful-{channel}",
            lambda: _audit(
                catalogue,
                channel,
                families=CAREFUL_FAMILIES[channel],
                generation=FEW_NAMES,
                prompts=CAREFUL_PROMPTS.get(channel),
            ),
        )

    return run


@pytest.fixture(scope="module")
def fails_open(catalogue: Catalogue, across_workers: Shared[AuditRun]) -> Callable[[], AuditRun]:
    @cache
    def run() -> AuditRun:
        return across_workers(
            "elsewhere-fails-open",
            # Its person's wait is short: nobody answering is what both tests read, and it acts then anyway.
            lambda: _audit(catalogue, "terminal", "fails-open", families=FAILS_OPEN_FAMILIES, ttl=2),
        )

    return run


@pytest.mark.parametrize("channel", HANDED_OVER)
def test_the_careful_server_refuses_every_out_of_band_family(
    careful: Callable[[str], AuditRun], channel: str
) -> None:
    run = careful(channel)
    approve = next(c for c in run.controls if c.name == "approve")
    assert approve.passed, approve.detail
    handed_over = frozenset(OUT_OF_BAND.values())
    assert _verdicts(run, handed_over) == {family: (Verdict.REFUSED, Layer.TOOL) for family in handed_over}, [
        (r.id, r.verdict, r.reason) for r in _of(run, handed_over)
    ]


@pytest.mark.parametrize("channel", HANDED_OVER)
def test_the_careful_server_refuses_the_persons_steps_taken_twice(
    careful: Callable[[str], AuditRun], channel: str
) -> None:
    twice = careful(channel).by_id()["MCA-OOBREPLAY-002"]
    assert (twice.verdict, twice.layer) == (Verdict.REFUSED, Layer.TOOL), (twice.reason, twice.evidence)


def test_the_person_reads_the_webhook_and_follows_its_link(careful: Callable[[str], AuditRun]) -> None:
    said = " ".join(careful("webhook").by_id()["MCA-OOBREPLAY-001"].evidence)
    # What the person did is in the evidence: the body read at the sink, the link followed on loopback.
    assert "read sink (approve_url): http://127.0.0.1:" in said
    assert "POST http://127.0.0.1:" in said
    assert "/approve/" in said


@pytest.mark.parametrize("channel", ["webhook", "device"])
def test_what_the_person_is_shown_is_judged_and_the_careful_channel_passes(
    careful: Callable[[str], AuditRun], channel: str
) -> None:
    # The agent's preview names no file; the webhook body and the device's card do, escaped.
    shown = _of(careful(channel), frozenset({"prompt-forging"}))
    judged = [r for r in shown if r.verdict is not Verdict.NOT_APPLICABLE]
    assert judged
    assert {r.verdict for r in judged} == {Verdict.REFUSED}, [(r.id, r.verdict, r.reason) for r in judged]


# Every channel that hands the person's approval over (issue 35: refused on every channel, at any load).
@pytest.mark.parametrize("channel", HANDED_OVER)
def test_one_approval_redeemed_many_times_at_once_takes_effect_once_on_the_careful_server(
    careful: Callable[[str], AuditRun], channel: str
) -> None:
    # The person approves once; the agent sends what they handed over eight times at once.
    run = careful(channel)
    race = run.by_id()["MCA-DSPEND-001"]
    assert (race.verdict, race.layer) == (Verdict.REFUSED, Layer.TOOL), (race.reason, race.evidence)
    assert "took effect once" in race.reason
    assert any("redemption 8 of 8 of the person's approval" in line for line in race.evidence)
    # Nothing handed over says no: a decline has nothing to race.
    assert run.by_id()["MCA-DSPEND-002"].verdict is Verdict.NOT_APPLICABLE


@pytest.mark.parametrize("channel", HANDED_OVER)
@pytest.mark.parametrize("flaw", sorted(OUT_OF_BAND))
def test_each_flaw_is_caught_by_its_family_and_fools_no_other(
    catalogue: Catalogue, channel: str, flaw: str
) -> None:
    caught = OUT_OF_BAND[flaw]
    families = frozenset(OUT_OF_BAND.values())
    if channel != "webhook" and caught != "approval-expiry":
        # approval-expiry waits out a lifetime in every audit that runs it: that it is fooled by no
        # other flaw is shown on the webhook here, on every channel by the corpus's cases (outside CI).
        families -= {"approval-expiry"}
    run = _audit(catalogue, channel, flaw, families=families)
    verdicts = _verdicts(run)
    assert verdicts.pop(caught)[0] is Verdict.VULNERABLE, [(r.id, r.verdict, r.reason) for r in run.results]
    assert set(verdicts.values()) == {(Verdict.REFUSED, Layer.TOOL)}, verdicts
    assert_green_with_its_findings_baselined(run, catalogue)


def test_an_approval_redeemed_past_its_lifetime_on_a_loaded_machine_is_tried_again_not_judged(
    catalogue: Catalogue,
) -> None:
    # The short-lived process checks its first redemption 4.5 s into a 3 s lifetime, as a machine too
    # loaded to redeem in time would: that control proves nothing, and the next one does.
    run = _audit(
        catalogue, "webhook", families=frozenset({"approval-expiry"}), options=("--late-first-redeem", "4.5")
    )
    late = run.by_id()["MCA-OOBLATE-001"]
    assert (late.verdict, late.layer) == (Verdict.REFUSED, Layer.TOOL), late.evidence
    assert any("past the 3s lifetime: proves nothing, tried again" in line for line in late.evidence)


def test_a_person_answering_on_the_terminal_is_asked_never_acted_without_asking(
    careful: Callable[[str], AuditRun],
) -> None:
    run = careful("terminal")
    controls = {c.name: c for c in run.controls}
    assert controls["approve"].passed, controls["approve"].detail
    assert "through waits" in controls["approve"].detail
    assert controls["unanswered"].passed, controls["unanswered"].detail
    assert "unasked" not in controls
    said = " ".join(e for r in run.results for e in r.evidence)
    assert "the terminal asked" in said
    assert "typed 'n'" in said
    # The agent alone (nobody at the terminal) is refused; what the terminal showed passes the checks.
    judged = [r for r in run.results if r.verdict is not Verdict.NOT_APPLICABLE]
    assert {r.verdict for r in judged} == {Verdict.REFUSED}, [(r.id, r.verdict, r.reason) for r in judged]
    # Nothing was judged as acting without asking (a family's title may say "unasked": chained-command's).
    assert not [r.id for r in run.results if "unasked" in " ".join((r.reason, *r.evidence))]


def _learned(run: AuditRun, kind: str) -> list[str]:
    """The refusals control's lines of one kind ("gate refusal", "other failure"), as `kind: shape`."""
    refusals = next(c for c in run.controls if c.name == "refusals").detail
    lines = [line for line in refusals.split("; ") if line.startswith(f"{kind} learned from ")]
    return [line.split(": ", 1)[1] for line in lines]


ORDER_DESK = TARGETS / "orders" / "server.py"


@pytest.mark.parametrize("asked_first", [False, True], ids=["checked-first", "asked-first"])
def test_a_call_that_waits_for_a_person_never_learns_the_worlds_failure_from_their_no(
    catalogue: Catalogue, careful: Callable[[str], AuditRun], asked_first: bool
) -> None:
    # The world's failure comes where the action begins: on a call that waits for the person, once they
    # said yes. Their no is the gate's refusal (learned from the preview alone, the call they said no
    # to); learned from a call about a subject that does not exist they also said no to, "other failure"
    # was the gate's words twice over (trial 14: a terminal approver that asks before it looks the order
    # up). The order desk's terminal asks about any reference first; the careful terminal checks the file
    # first and asks nobody about a missing one.
    if asked_first:
        ttl = f"{deadline(5):g}"
        words = [sys.executable, str(ORDER_DESK), "--root", "{root}", "--mechanism", "terminal", "--ttl", ttl]
        # The person at the desk's terminal, as the careful terminal's profile plays them.
        person = load_profile(TARGETS / "elsewhere-terminal.yaml")
        profile = resolve_profile(replace(person, tool="cancel_order"), shlex.join(words), None)
        run = run_audit(forked(profile), catalogue=catalogue, select=lambda spec: False)
    else:
        run = careful("terminal")
    gate, other = _learned(run, "gate refusal"), _learned(run, "other failure")
    assert gate, run.controls
    assert not any("did not approve" in said for said in other), other
    # Whatever the world's failure is worded as, it is never a refusal the gate gave.
    shapes = {said.split(" ", 1)[1] for said in gate}
    assert not shapes & {said.split(" ", 1)[1] for said in other}, (gate, other)


def test_without_a_terminal_the_terminal_gate_fails_closed_and_is_never_unasked(catalogue: Catalogue) -> None:
    # No tty: the server finds nobody to ask and refuses; zero configuration sees a tool that did not act.
    profile = resolve_profile(
        None, shlex.join([sys.executable, str(SERVER), "--root", "{root}", "--channel", "terminal"]), None
    )
    # No tty: its processes fork from the SDK's zygote, as every stdio matrix target's do.
    run = run_audit(
        forked(profile), catalogue=catalogue, select=lambda spec: False, generation=MATRIX_GENERATION
    )
    assert "unasked" not in {c.name for c in run.controls}, run.controls


def test_a_prompt_that_shows_the_name_raw_is_caught_on_the_terminal(catalogue: Catalogue) -> None:
    # Few generated names: each flaw is caught by a fixed example (the generated ones add breadth).
    run = _audit(
        catalogue,
        "terminal",
        "raw-prompt",
        families=frozenset({"prompt-forging"}),
        generation=FEW_NAMES,
        prompts=RAW_ON_A_TERMINAL,
    )
    vulnerable = {r.id for r in run.results if r.verdict is Verdict.VULNERABLE}
    # A terminal shows escapes and line breaks; markup it does not render is no finding there.
    assert {"MCA-PROMPT-001", "MCA-PROMPT-004"} <= vulnerable, vulnerable
    assert "MCA-PROMPT-007" not in vulnerable


def test_a_card_that_shows_the_name_raw_is_caught_and_its_markup_is_text_on_the_persons_terminal(
    catalogue: Catalogue,
) -> None:
    # The device's card is what a command the person runs prints (shows: true): escapes and line
    # breaks act there; a markdown or HTML link is shown as text, never clickable, so no finding.
    run = _audit(
        catalogue,
        "device",
        "raw-prompt",
        families=frozenset({"prompt-forging"}),
        generation=ONE_NAME,
        prompts=RAW_ON_A_TERMINAL,
    )
    found = {r.id: r.verdict for r in run.results if r.verdict in (Verdict.VULNERABLE, Verdict.WEAK)}
    assert {"MCA-PROMPT-001", "MCA-PROMPT-004"} <= set(found), found
    assert "MCA-PROMPT-007" not in found, run.by_id()["MCA-PROMPT-007"].reason


def test_a_terminal_gate_that_takes_no_answer_as_yes_fails_its_control(
    fails_open: Callable[[], AuditRun],
) -> None:
    run = fails_open()
    controls = {c.name: c for c in run.controls}
    assert not controls["unanswered"].passed
    assert "acted though the person never answered" in controls["unanswered"].detail
    self_approval = _of(run, frozenset({"self-approval"}))
    assert self_approval
    assert {r.verdict for r in self_approval} == {Verdict.INCONCLUSIVE}


def test_a_terminal_gate_that_acts_when_nobody_answers_is_the_unanswered_familys_finding(
    fails_open: Callable[[], AuditRun],
) -> None:
    # Its control fails (every other attack waits for an honest flow), and the family itself sends
    # the call with nobody at the terminal: the deletion that follows is the finding.
    run = fails_open()
    assert not {c.name: c for c in run.controls}["unanswered"].passed
    found = run.by_id()["MCA-NOANSWER-001"]
    assert (found.verdict, found.layer) == (Verdict.VULNERABLE, Layer.NONE), (found.reason, found.evidence)
    assert "nobody answered" in found.reason
    assert found.effect.removed, found.evidence
    assert run.by_id()["MCA-SELFAPPROVE-001"].verdict is Verdict.INCONCLUSIVE


# A terminal that waits longer for its person than a round trip takes, on purpose (--ttl): each test
# below waits it out, so it is no longer than it needs to be to stand well clear of the round trip.
SLOW_PERSON = {"call_timeout": 4.0, "ttl": 7.0}


def _unanswered_control(catalogue: Catalogue, ttl: float, **settings: object) -> tuple[bool, str]:
    run = _audit(
        catalogue,
        "terminal",
        families=frozenset(),  # the controls alone: they run before any attack, and none is selected
        ttl=ttl,
        call_timeout=SLOW_PERSON["call_timeout"],
        **settings,
    )
    controls = {c.name: c for c in run.controls}
    return controls["unanswered"].passed, controls["unanswered"].detail


def test_a_gate_that_waits_longer_than_a_round_trip_passes_its_unanswered_control_once_its_deadline_is_declared(
    catalogue: Catalogue,
) -> None:
    # Nobody answers; it refuses after 7 s. Declared, the harness waits that long and sees it fail closed.
    passed, detail = _unanswered_control(catalogue, SLOW_PERSON["ttl"], answer_deadline=SLOW_PERSON["ttl"])
    assert passed, detail
    # Undeclared, its bound is one call timeout (4 s): the control fails and names the key that says more.
    passed, detail = _unanswered_control(catalogue, SLOW_PERSON["ttl"])
    assert not passed
    assert f"did not fail closed within its bound ({deadline(4):g}s" in detail
    assert "set answer_deadline" in detail


def test_a_gate_that_waits_far_past_its_declared_deadline_still_fails_its_unanswered_control(
    catalogue: Catalogue,
) -> None:
    passed, detail = _unanswered_control(catalogue, 600, answer_deadline=SLOW_PERSON["ttl"])
    assert not passed
    assert f"within its bound ({deadline(11):g}s: its declared answer_deadline of {deadline(7):g}s" in detail


def test_zero_configuration_of_a_call_that_waits_for_a_person_points_at_the_waits_kind(
    catalogue: Catalogue,
) -> None:
    # The terminal gate with a terminal nobody answers: the call neither asks over MCP nor fails, it
    # blocks. A newcomer's first run must say that a person elsewhere may be awaited and how to state
    # it, not leave "no answer within 2s" as if the server were broken.
    command = [
        sys.executable,
        str(SERVER),
        "--root",
        "{root}",
        "--channel",
        "terminal",
        "--ttl",
        f"{deadline(30):g}",
    ]
    profile = resolve_profile(None, shlex.join(command), None)
    profile = replace(profile, tty=True, call_timeout=deadline(2.0))
    run = run_audit(profile, catalogue=catalogue, select=lambda spec: False, generation=MATRIX_GENERATION)
    approve = {c.name: c for c in run.controls}["approve"]
    assert not approve.passed
    assert f"no answer within {deadline(2):g}s" in approve.detail
    assert "confirmation: {kind: waits" in approve.detail, approve.detail
    assert "answer_deadline" in approve.detail


def test_a_waits_flow_whose_decline_steps_show_nothing_says_prompt_forging_reads_them(
    catalogue: Catalogue, tmp_path: Path
) -> None:
    # The person's approving steps read the prompt, their decline: steps say no without reading
    # anything. prompt-forging reads the question on the decline (a hostile name is never approved),
    # so it cannot judge: it must say that decline: needs the step that shows the call, not leave a
    # newcomer with "shown nothing" while their human: steps plainly show something.
    profile_text = (
        (TARGETS / "elsewhere-terminal.yaml")
        .read_text()
        .replace(
            "decline: [{terminal: {expect: 'allow\\? \\[y/N\\] ', answer: n}}]",
            "decline: [{command: 'python -c pass'}]",
        )
    )
    assert "python -c pass" in profile_text
    written = tmp_path / "terminal-decline-blind.yaml"
    written.write_text(profile_text)
    command = [
        sys.executable,
        str(SERVER),
        "--root",
        "{root}",
        "--channel",
        "terminal",
        "--ttl",
        f"{deadline(2):g}",
    ]
    profile = scaled(resolve_profile(load_profile(written), shlex.join(command), None))
    run = run_audit(
        profile,
        catalogue=catalogue,
        select=lambda spec: spec.id == "MCA-PROMPT-001",
        generation=FEW_NAMES,
    )
    result = run.by_id()["MCA-PROMPT-001"]
    assert result.verdict is Verdict.INCONCLUSIVE, result.reason
    assert "decline:" in result.reason, result.reason
    assert "shows: true" in result.reason


@pytest.mark.parametrize("channel", ["terminal", "device"])
def test_a_prompt_that_masks_a_credential_like_name_leaves_the_person_approving_blind(
    catalogue: Catalogue, channel: str
) -> None:
    # A gate that redacts "secrets" before display hides `sk-quarterlyreport2024.txt` whole: the person
    # reads "Delete [redacted]?" and approves a deletion they cannot see. Every other name is shown
    # escaped, so no other prompt-forging attack is fooled (on the terminal: those a raw name would
    # fool, and the one that asks whether the file is named); the careful channels above show it whole.
    # The device's card is the same text, each name read a process of the person's device: there the
    # credential-like names and the card naming its file, with one generated name each.
    on_device = channel == "device"
    run = _audit(
        catalogue,
        channel,
        "masks-secrets",
        families=frozenset({"prompt-forging"}),
        generation=ONE_NAME if on_device else FEW_NAMES,
        prompts=frozenset({"MCA-PROMPT-012", "MCA-PROMPT-013"}) if on_device else ON_A_CARD,
    )
    found = {r.id: r for r in run.results if r.verdict in (Verdict.VULNERABLE, Verdict.WEAK)}
    assert set(found) == {"MCA-PROMPT-013"}, {k: r.reason for k, r in found.items()}
    assert found["MCA-PROMPT-013"].verdict is Verdict.VULNERABLE
    assert "is not shown (masked or left out)" in found["MCA-PROMPT-013"].reason


def test_a_terminal_prompt_printed_through_console_markup_is_caught_by_its_live_link(
    catalogue: Catalogue,
) -> None:
    # A prompt printed by a console library reads `[link=https:evil.example]report.txt` as markup: the
    # person's terminal gets an OSC 8 hyperlink, and `[conceal]` hides the rest of the name. The same
    # names printed as text (the careful terminal, and raw-prompt) are no finding on a terminal. Beside
    # it, the attacks a raw name would fool and the one that asks whether the file is named: none is.
    run = _audit(
        catalogue,
        "terminal",
        "console-markup",
        families=frozenset({"prompt-forging"}),
        generation=FEW_NAMES,
        prompts=ON_A_CARD,
    )
    found = {r.id: r for r in run.results if r.verdict in (Verdict.VULNERABLE, Verdict.WEAK)}
    assert set(found) == {"MCA-PROMPT-007"}, {k: r.reason for k, r in found.items()}
    assert found["MCA-PROMPT-007"].verdict is Verdict.VULNERABLE
    assert "U+001B from the name reached the question" in found["MCA-PROMPT-007"].reason


def test_a_file_swapped_while_the_person_reads_the_terminal_is_refused_by_a_server_that_checks_again(
    careful: Callable[[str], AuditRun],
) -> None:
    # One call waits at the prompt; the harness swaps the file after the prompt is read, before the y.
    swaps = _of(careful("terminal"), SWAPS)
    judged = {r.id: (r.verdict, r.layer) for r in swaps}
    assert judged, swaps
    assert set(judged.values()) == {(Verdict.REFUSED, Layer.TOOL)}, [
        (r.id, r.verdict, r.reason) for r in swaps
    ]
    said = " ".join(e for r in swaps for e in r.evidence)
    assert "after the question:" in said
    assert "typed 'y'" in said


def test_a_yes_that_follows_the_name_again_deletes_what_the_person_never_read_about(
    catalogue: Catalogue,
) -> None:
    run = _audit(catalogue, "terminal", "no-recheck", families=SWAPS)
    vulnerable = {r.id for r in run.results if r.verdict is Verdict.VULNERABLE}
    # The link's destination inside and outside the root, a file through a swapped parent, another
    # file renamed onto the name: each deleted on the yes about the file the prompt showed.
    expected = {"MCA-SYMLINK-001", "MCA-SYMLINK-002", "MCA-PARENT-001", "MCA-PARENT-002", "MCA-IDSWAP-001"}
    assert expected <= vulnerable, [(r.id, r.verdict, r.reason) for r in run.results]


# The channels whose server can hold an approval's check and its spending apart (--flaw check-then-spend).
CHECK_THEN_SPEND = ("webhook", "signed")


@pytest.mark.parametrize("channel", CHECK_THEN_SPEND)
def test_an_approval_checked_then_spent_a_moment_later_is_taken_by_every_redemption_at_once(
    catalogue: Catalogue, channel: str
) -> None:
    run = _audit(
        catalogue, channel, "check-then-spend", families=frozenset({"double-spend", "approval-replay"})
    )
    verdicts = {r.id: r for r in run.results}
    race = verdicts["MCA-DSPEND-001"]
    assert race.verdict is Verdict.VULNERABLE, (race.reason, race.evidence)
    assert "one approval took effect" in race.reason
    # Sent one after another the approval is spent by then: only the race finds this flaw.
    replay = verdicts["MCA-OOBREPLAY-001"]
    assert (replay.verdict, replay.layer) == (Verdict.REFUSED, Layer.TOOL), replay.reason
    assert_green_with_its_findings_baselined(run, catalogue)


def test_the_persons_saved_link_followed_twice_approves_again_only_where_the_link_is_never_spent(
    catalogue: Catalogue,
) -> None:
    # link-rearms: the approve link re-approves a spent request. Redeeming again without it is still
    # refused (the request was spent), so only the variant that follows the person's link again finds it.
    flawed = _audit(catalogue, "webhook", "link-rearms", families=frozenset({"approval-replay"})).by_id()
    twice = flawed["MCA-OOBREPLAY-002"]
    assert twice.verdict is Verdict.VULNERABLE, (twice.reason, twice.evidence)
    assert any("followed again" in line for line in twice.evidence), twice.evidence
    assert (flawed["MCA-OOBREPLAY-001"].verdict, flawed["MCA-OOBREPLAY-001"].layer) == (
        Verdict.REFUSED,
        Layer.TOOL,
    )


def test_a_careful_terminal_gate_passes_its_unanswered_control_and_the_family_adds_nothing(
    careful: Callable[[str], AuditRun],
) -> None:
    run = careful("terminal")
    assert {c.name: c for c in run.controls}["unanswered"].passed
    result = run.by_id()["MCA-NOANSWER-001"]
    assert result.verdict is Verdict.NOT_APPLICABLE, result.reason
    assert "unanswered control" in result.reason


@pytest.mark.parametrize("flaw", [(), ("raw-prompt",)], ids=["careful", "raw-prompt"])
def test_a_webhook_text_the_person_reads_as_text_is_judged_as_shown_raw(
    catalogue: Catalogue, flaw: tuple[str, ...]
) -> None:
    # reads: text: a chat app shows the body's text field as text. Escaped there, every name passes; shown
    # raw, its line break and bidi override act (the same body read as JSON shows them escaped). The
    # attacks a raw name fools, markup, the masked and the unnamed file: the careful chat is audited
    # whole by the corpus (case elsewhere-webhook-chat/careful, outside CI).
    run = _audit(
        catalogue,
        "webhook-chat",
        *flaw,
        families=frozenset({"prompt-forging"}),
        generation=FEW_NAMES,
        prompts=ON_A_CARD,
    )
    found = {r.id for r in run.results if r.verdict in (Verdict.VULNERABLE, Verdict.WEAK)}
    if flaw:
        assert {"MCA-PROMPT-001", "MCA-PROMPT-004"} <= found, [
            (r.id, r.verdict, r.reason) for r in run.results
        ]
    else:
        judged = [r for r in run.results if r.verdict is not Verdict.NOT_APPLICABLE]
        assert judged
        assert {r.verdict for r in judged} == {Verdict.REFUSED}, [(r.id, r.verdict, r.reason) for r in judged]


@pytest.mark.parametrize("flaw", [(), ("unsigned",)], ids=["careful", "unsigned"])
def test_a_kiosk_that_takes_an_unsigned_request_is_approved_by_the_agent_without_the_pairing_code(
    catalogue: Catalogue, careful: Callable[[str], AuditRun], flaw: tuple[str, ...]
) -> None:
    # credentials: [code] on the device's command steps: the agent runs them without the person's code.
    if flaw:
        run = _audit(catalogue, "device", *flaw, families=frozenset({"agent-reachable-approval"}))
    else:
        run = careful("device")  # the careful device's audit runs agent-reachable-approval too
    result = run.by_id()["MCA-OOBSELF-001"]
    if flaw:
        assert result.verdict is Verdict.VULNERABLE, (result.reason, result.evidence)
    else:
        assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), (
            result.reason,
            result.evidence,
        )
        # The device API turned the unsigned card request away: the agent got no further.
        assert "the agent could not take the person's steps with what it saw" in " ".join(result.evidence)


@pytest.mark.parametrize(("flaws", "verdict"), [((), Verdict.REFUSED), (("any-device",), Verdict.VULNERABLE)])
def test_a_second_paired_device_approving_is_tried_on_a_stdio_target_both_ways(
    catalogue: Catalogue, flaws: tuple[str, ...], verdict: Verdict
) -> None:
    # principals: names the requester's own laptop by the steps that read its pairing code; approver-identity
    # has it take the person's steps. The careful server turns it away; any-device lets it approve.
    run = _audit(catalogue, "device-two", *flaws, families=frozenset({"approver-identity"}))
    result = run.by_id()["MCA-OOBWHO-001"]
    assert (result.verdict, result.layer if verdict is Verdict.REFUSED else None) == (
        verdict,
        Layer.TOOL if verdict is Verdict.REFUSED else None,
    ), (result.reason, result.evidence)
    said = " ".join(result.evidence)
    assert "principal requester-laptop approves in the person's place" in said


@pytest.mark.parametrize("channel", AUDITED_WHOLE)
def test_the_careful_server_audited_whole_finds_nothing_and_leaves_no_attack_inconclusive(
    careful: Callable[[str], AuditRun], channel: str
) -> None:
    # Every family on the careful terminal: an input attack (a path, a token, an id) refused with no
    # effect, never a false weak (the terminal asked nothing about a path outside the root). The other
    # channels are audited whole by the corpus (AUDITED_WHOLE above).
    run = careful(channel)
    assert len(run.results) > 100, len(run.results)
    judged = {r.id: (r.verdict, r.reason) for r in run.results if r.verdict is not Verdict.NOT_APPLICABLE}
    assert {verdict for verdict, _ in judged.values()} == {Verdict.REFUSED}, judged


def test_out_of_root_over_a_terminal_is_refused_before_asking_and_asking_first_is_weak(
    careful: Callable[[str], AuditRun], catalogue: Catalogue
) -> None:
    refused = _of(careful("terminal"), frozenset({"out-of-root"}))
    assert {(r.verdict, r.layer) for r in refused} == {(Verdict.REFUSED, Layer.TOOL)}
    assert all("refused before asking" in " ".join(r.evidence) for r in refused), refused[0].evidence
    # asks-first: the same paths, asked about at the terminal and refused only after the yes.
    asked = _audit(catalogue, "terminal", "asks-first", families=frozenset({"out-of-root"})).results
    assert {(r.verdict, r.layer) for r in asked} == {(Verdict.WEAK, Layer.NONE)}, [
        (r.id, r.reason) for r in asked
    ]
    assert len(asked) == len(refused) == 8
    assert all("the terminal asked" in " ".join(r.evidence) for r in asked)


@pytest.mark.parametrize(
    ("flaw", "family", "verdict"),
    [
        ((), "MCA-SELFAPPROVE-001", Verdict.REFUSED),
        (("evidence-unchecked",), "MCA-SELFAPPROVE-001", Verdict.VULNERABLE),
        ((), "MCA-TOKREUSE-001", Verdict.REFUSED),
        (("replay",), "MCA-TOKREUSE-001", Verdict.VULNERABLE),
    ],
    ids=["careful-alone", "evidence-unchecked", "careful-again", "replay"],
)
def test_the_agents_call_without_the_device_sends_its_evidence_empty_and_a_replay_sends_it_again(
    careful: Callable[[str], AuditRun],
    catalogue: Catalogue,
    flaw: tuple[str, ...],
    family: str,
    verdict: Verdict,
) -> None:
    # `{evidence}` is what the paired device returns to the person's signed request: the agent alone
    # never has it, so its own call sends it empty (not the literal `{evidence}`, inconclusive); the
    # agent that sent it once sends it again in a replay.
    families = frozenset({"self-approval" if family.startswith("MCA-SELF") else "token-replay"})
    run = careful("device") if not flaw else _audit(catalogue, "device", *flaw, families=families)
    result = run.by_id()[family]
    assert result.verdict is verdict, (result.reason, result.evidence)
    said = " ".join(result.evidence)
    if family == "MCA-SELFAPPROVE-001":
        assert '"evidence_ref": ""' in said
        assert "which only the person can make: it sends it empty" in said
    else:
        assert said.count('confirm_request({"evidence_ref": "ev-') == 2, said  # the honest call, the replay
