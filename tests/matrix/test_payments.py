"""A confirmed action that touches no file, proven both ways: the payments reference server.

Zero configuration: the gated tool is found among the tools not declared
read-only, its effect is learned (the read-only `list_payments` moves when the
honest approval pays), and its audit log in the root is learned as bookkeeping.
Each flaw is caught by its family and fools no other; the careful server, in a
style of its own, refuses every attack at the layer the file server does.

The careful servers run as stdio subprocesses; each flaw's server is built in the audit's own
process (`build_server`, its flaws given to its factory), as test_detection_matrix.py's are: the
real SDK and server code over the whole catalogue, at half the CPU (the corpus audits each payments flaw
over stdio; the job tracker's careful audit below stays on stdio).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from conftest import Shared, forked
from deadline import scaled
from matrix_expectations import CAREFUL_LAYER, NOT_MRTR
from test_detection_matrix import V_OR_W, V, W, assert_caught_and_nothing_else

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import Profile, load_profile

TARGETS = Path(__file__).resolve().parents[2] / "targets"
PAYMENTS = TARGETS / "payments" / "server.py"
# What an action that names no file cannot be attacked through, and why each says so.
FILE_FAMILIES = ("symlink-swap", "parent-swap", "identity-swap", "out-of-root")
NOT_CONFIGURED = {
    "cross-replica": "--mcp-replicas 2",
    "expiry": "set ttl_flag",
    "cross-principal": "principals:",
}
CAREFUL_LAYER_BY_ID = {"MCA-ROBUST-002": Layer.PROTOCOL}

AuditFn = Callable[..., AuditRun]


def payments_command(*options: str) -> str:
    return shlex.join([sys.executable, str(PAYMENTS), "--root", "{root}", *options])


@pytest.fixture(scope="session")
def audit_payments(catalogue: Catalogue, generation: Any) -> AuditFn:
    """Audit the payments server with no profile at all: only its command (forked from the SDK's zygote
    unless `zygote=False`: that says how its processes start, not what is audited)."""

    def audit(
        *options: str, families: Sequence[str] | None = None, zygote: bool = True, **settings: Any
    ) -> AuditRun:
        command = settings.pop("command", None) or payments_command(*options)
        profile = Profile(command=command, call_timeout=10.0, **settings)
        profile = forked(profile) if zygote else scaled(profile)
        return run_audit(
            profile,
            catalogue=catalogue,
            select=lambda spec: families is None or spec.family in families,
            generation=generation,
        )

    return audit


def built(server: Path, *flaws: str) -> dict[str, Any]:
    """Settings that build `server` with `flaws` in the audit's own process (no ablation: as over stdio)."""
    return {"command": f"py:{server}:build_server", "factory_args": {"flaws": list(flaws)}, "ablation": False}


def assert_careful(
    run: AuditRun, *, switches: Sequence[str] = (), others: bool = False, shows_only_lookups: bool = False
) -> None:
    """`switches`: the gated tool's boolean and enum arguments; `others`: it has a tool not read-only beside it;
    `shows_only_lookups`: the only free text its question shows from the arguments is an id that must exist."""
    assert all(c.passed for c in run.controls), run.controls
    for result in run.results:
        if result.family in FILE_FAMILIES:
            assert result.verdict is Verdict.NOT_APPLICABLE, result
            assert "needs an argument that names a file" in result.reason
        elif result.family in NOT_CONFIGURED:
            assert result.verdict is Verdict.NOT_APPLICABLE, result
            assert NOT_CONFIGURED[result.family] in result.reason
        elif result.family == "prompt-forging" and shows_only_lookups:
            # A job id names a job that must exist: its harmless twin is refused before any question, and
            # so is J7, a value of the shape of the honest J1 that was asked about (a format check would
            # take it): the id takes only values the target knows, so no hostile text reaches the question.
            assert result.verdict is Verdict.NOT_APPLICABLE, result
            assert "job_id names a record that must exist" in result.reason, result.reason
            assert "no job 'J7' in jobs.csv" in result.reason, result.reason
        elif result.id == "MCA-ERAS-004":
            # A swap in each era renames another file onto the name: no file, nothing to try. (A replay
            # in each era, MCA-ERAS-005, runs: a second payment is an effect of its own.)
            assert result.verdict is Verdict.NOT_APPLICABLE, result
            assert "needs an argument that names a file" in result.reason, result.reason
        elif result.family == "protocol-downgrade":
            # Its MRTR tool cannot answer a legacy connection (-32603): no honest flow there, nothing refused.
            assert result.verdict is Verdict.NOT_APPLICABLE, result
            assert "completes no honest flow over 2025-11-25" in result.reason, result.reason
        elif result.id == "MCA-FLAGBYPASS-002" and switches and result.verdict is Verdict.NOT_APPLICABLE:
            # The job tracker takes a row id and a status enum: no free value to send beyond the profile's.
            assert "nothing can be sent beyond the profile's values" in result.reason, result.reason
        elif result.family == "flag-bypass" and switches:
            # The job tracker's status enum: every value tried, and each one asked.
            assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), result.evidence
            assert all(f'"{name}": ' in " ".join(result.evidence) for name in switches), result.evidence
        elif result.id in NOT_MRTR:
            assert result.verdict is Verdict.NOT_APPLICABLE, result
        elif result.family == "ungated" and not others:
            assert (result.verdict, "no other tool") == (Verdict.NOT_APPLICABLE, "no other tool"), result
        elif result.family == "ungated":
            # The handle shape's create_transfer stages a draft: nothing moves where a payment shows.
            assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), result.evidence
            assert result.reason.startswith("nothing moved where the gated action's effect shows"), result
        elif result.id == "MCA-XTARGET-004" and result.verdict is Verdict.NOT_APPLICABLE:
            # A server with one tool, or whose other tools declare themselves read-only (list_payments).
            assert "no other tool" in result.reason or "other tools are read-only" in result.reason, result
        elif result.id == "MCA-FORGE-020":
            assert (result.verdict, result.reason) == (Verdict.NOT_APPLICABLE, result.reason)
            assert "opaque" in result.reason
        else:
            expected = CAREFUL_LAYER_BY_ID.get(result.id, CAREFUL_LAYER[result.family])
            assert (result.id, result.verdict, result.layer) == (result.id, Verdict.REFUSED, expected), (
                result.reason,
                result.evidence,
            )


def test_zero_config_finds_the_payment_learns_its_effect_and_takes_the_audit_log_for_bookkeeping(
    audit_payments: AuditFn,
) -> None:
    run = audit_payments("--log-into-root", zygote=False)
    assert {r.tool for r in run.results} == {"send_payment"}
    approve = next(c for c in run.controls if c.name == "approve")
    assert "tool:list_payments.payments[0]" in approve.detail
    bookkeeping = next(c for c in run.controls if c.name == "bookkeeping")
    assert "root/audit.jsonl" in bookkeeping.detail
    assert_careful(run)
    # The log grew during every attack and was left out, by name, never silently.
    assert any("root/audit.jsonl" in r.effect.ignored for r in run.results if r.family == "replay")


# flaw -> (the families it may fool, the attacks that must catch it, and how)
FLAWS: dict[str, tuple[str | tuple[str, ...], dict[str, Verdict | frozenset[Verdict]]]] = {
    "no-ledger": (
        ("replay", "double-spend"),
        {"MCA-REPLAY-001": V, "MCA-REPLAY-002": V, "MCA-REPLAY-003": V, "MCA-DSPEND-001": V_OR_W},
    ),
    "racy-ledger": ("double-spend", {"MCA-DSPEND-001": V_OR_W, "MCA-DSPEND-002": V_OR_W}),
    "decline-acts": ("consent", {"MCA-CONSENT-001": V, "MCA-CONSENT-002": V}),
    "stateless-answers": ("fabricated-approval", {"MCA-FABRICATE-001": V, "MCA-FABRICATE-002": V}),
    "unescaped-memo": (
        "prompt-forging",
        {**{f"MCA-PROMPT-{n:03d}": V for n in range(1, 7)}, "MCA-PROMPT-007": W},
    ),
    # Readable and editable: the approval of one payment, rewritten to pay another.
    "unsealed-state": ("forged-state", {"MCA-FORGE-020": V}),
    "elicits-without-capability": ("capability-downgrade", {"MCA-DOWNGRADE-001": W, "MCA-DOWNGRADE-002": W}),
}


@pytest.mark.parametrize("flaw", sorted(FLAWS))
def test_each_payment_flaw_is_caught_by_its_family_and_fools_no_other(
    audit_payments: AuditFn, flaw: str
) -> None:
    families, expected = FLAWS[flaw]
    run = audit_payments(**built(PAYMENTS, flaw))
    assert_caught_and_nothing_else(run, families, expected)


# The memo-below question (--question memo-below): the memo last, below a line of `---`, its line feeds kept,
# as mcp-proton-email's send_email shows an email's body. Its lines are the memo's, so a "SYSTEM NOTICE" it
# starts forges none of the question's (MCA-PROMPT-001 and 006 were false findings on that server); each flaw
# takes half of that away, and both are caught there.
MEMO_BELOW_FLAWS = {
    "memo-not-last": 'text after a line break in the name starts a line: "SYSTEM NOTICE: your sess"',
    "memo-unfenced": 'text after a line break in the name starts a line: "SYSTEM NOTICE: your sess"',
}


def memo_below(*flaws: str) -> dict[str, Any]:
    settings = built(PAYMENTS, *flaws)
    settings["factory_args"]["question"] = "memo-below"
    return settings


def test_a_memo_shown_last_below_a_separator_is_careful_in_a_style_of_its_own(
    audit_payments: AuditFn,
) -> None:
    # Audited whole: the memo's raw line feeds fool no family, and what hides text is still escaped.
    run = audit_payments(**memo_below())
    assert_careful(run)
    # The memo's line breaks reached the question raw, and were judged as the memo's own lines.
    notice = run.by_id()["MCA-PROMPT-006"]
    assert any("---\\nmcp-confirm-audit report.txt\\n\\nSYSTEM NOTICE" in line for line in notice.evidence)


@pytest.mark.parametrize("flaw", sorted(MEMO_BELOW_FLAWS))
def test_a_memo_with_a_line_of_the_questions_after_it_or_no_separator_forges_lines(
    audit_payments: AuditFn, flaw: str
) -> None:
    run = audit_payments(families=("prompt-forging",), **memo_below(flaw))
    assert_caught_and_nothing_else(run, "prompt-forging", {"MCA-PROMPT-001": V, "MCA-PROMPT-006": V})
    assert MEMO_BELOW_FLAWS[flaw] in run.by_id()["MCA-PROMPT-006"].reason
    # Only where the memo stands changed: what hides text is escaped as in the careful style.
    assert [r.id for r in run.results if r.verdict in (V, W)] == ["MCA-PROMPT-001", "MCA-PROMPT-006"]


@pytest.fixture(scope="module")
def handle_shape(catalogue: Catalogue, generation: Any, across_workers: Shared[AuditRun]) -> AuditRun:
    """The shipped handle-shape profile over the whole catalogue: once for the tests that read it."""
    return across_workers(
        "payments-handle-shape",
        lambda: run_audit(
            load_profile(TARGETS / "payments-handle.yaml"), catalogue=catalogue, generation=generation
        ),
    )


def test_the_handle_shape_is_audited_through_its_setup_call_with_the_shipped_profile(
    handle_shape: AuditRun,
) -> None:
    # The handle (a transfer id) is minted by create_transfer before every use of the action.
    run = handle_shape
    assert {r.tool for r in run.results} == {"execute_transfer"}
    assert_careful(run, others=True)
    replay = run.by_id()["MCA-REPLAY-001"]
    assert any("setup 1: create_transfer" in line for line in replay.evidence), replay.evidence


def test_the_handle_shape_with_no_ledger_pays_a_declined_transfer_but_never_one_twice(
    catalogue: Catalogue, generation: Any
) -> None:
    shipped = load_profile(TARGETS / "payments-handle.yaml")
    profile = Profile(**{**_fields(shipped), "command": f"{shipped.command} --flaw no-ledger"})
    run = run_audit(profile, catalogue=catalogue, generation=generation, select=_family("replay"))
    by_id = run.by_id()
    # The staged transfer is spent by executing it: a second guard the nonce ledger's absence leaves.
    assert (by_id["MCA-REPLAY-001"].verdict, by_id["MCA-REPLAY-001"].layer) == (Verdict.REFUSED, Layer.TOOL)
    assert "already executed" in by_id["MCA-REPLAY-001"].reason
    # A declined or cancelled question's state is not spent, and its transfer was never executed.
    assert by_id["MCA-REPLAY-002"].verdict is Verdict.VULNERABLE, by_id["MCA-REPLAY-002"].evidence
    assert by_id["MCA-REPLAY-003"].verdict is Verdict.VULNERABLE, by_id["MCA-REPLAY-003"].evidence


@pytest.mark.parametrize("flaw", [None, "elicits-without-capability"])
def test_a_client_that_declares_less_is_asked_about_a_transfer_staged_in_its_own_process(
    catalogue: Catalogue, generation: Any, handle_shape: AuditRun, flaw: str | None
) -> None:
    # Over stdio the client that declares no elicitation is a process of its own, and a transfer staged
    # on the primary is unknown there: the handle is minted again on that process (armguard-mcp's plan
    # ids were "unknown plan id" there, and the attack was never judged).
    if flaw:
        shipped = load_profile(TARGETS / "payments-handle.yaml")
        profile = Profile(**{**_fields(shipped), "command": f"{shipped.command} --flaw {flaw}"})
        run = run_audit(
            profile, catalogue=catalogue, generation=generation, select=_family("capability-downgrade")
        )
    else:
        run = handle_shape  # the careful shape's whole-catalogue audit runs the family too
    for attack in ("MCA-DOWNGRADE-001", "MCA-DOWNGRADE-002"):
        result = run.by_id()[attack]
        staged_there = [line for line in result.evidence if "create_transfer" in line]
        assert staged_there, result.evidence
        if flaw:
            # The form went to that client (the MUST NOT), which cannot answer it: nothing was paid.
            assert (result.verdict, result.layer) == (Verdict.WEAK, Layer.PROTOCOL), result.evidence
            assert "MUST NOT" in result.reason
        else:
            assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.PROTOCOL), result.evidence


def _fields(profile: Profile) -> dict[str, Any]:
    return {name: getattr(profile, name) for name in profile.__dataclass_fields__}


def _family(name: str) -> Callable[[Any], bool]:
    return lambda spec: spec.family == name


JOBS = TARGETS / "jobs" / "server.py"


@pytest.fixture(scope="session")
def audit_jobs(catalogue: Catalogue, generation: Any) -> AuditFn:
    def audit(*options: str, **settings: Any) -> AuditRun:
        command = settings.pop("command", None) or shlex.join(
            [sys.executable, str(JOBS), "--root", "{root}", *options]
        )
        return run_audit(
            forked(Profile(command=command, call_timeout=10.0, **settings)),
            catalogue=catalogue,
            generation=generation,
        )

    return audit


def test_a_job_tracker_whose_only_effect_is_a_csv_cell_is_audited_with_no_profile(
    audit_jobs: AuditFn,
) -> None:
    # No tool shows the change: the file in the root does, and a finding names its row and cell.
    run = audit_jobs()
    approve = next(c for c in run.controls if c.name == "approve")
    assert "root/jobs.csv" in approve.detail
    bookkeeping = next(c for c in run.controls if c.name == "bookkeeping")
    assert "root/jobs.log" in bookkeeping.detail
    assert_careful(run, switches=("status",), shows_only_lookups=True)


@pytest.mark.parametrize(
    ("flaw", "families", "expected"),
    [
        ("decline-acts", "consent", {"MCA-CONSENT-001": V, "MCA-CONSENT-002": V}),
        ("no-ledger", ("replay", "double-spend"), {f"MCA-REPLAY-00{n}": V for n in (1, 2, 3)}),
    ],
)
def test_each_job_tracker_flaw_is_caught_and_named_by_its_cell(
    audit_jobs: AuditFn, flaw: str, families: Any, expected: dict[str, Verdict]
) -> None:
    run = audit_jobs(**built(JOBS, flaw))
    assert_caught_and_nothing_else(run, families, expected)
    first = run.by_id()[next(iter(expected))]
    assert "file:jobs.csv[0].revision" in first.effect.observed, first.effect


def test_a_job_id_only_format_checked_is_caught_by_prompt_forging_and_fools_no_other(
    audit_jobs: AuditFn,
) -> None:
    # Any id that starts J and digits is a new job, shown raw: hostile text after J7 (a value of J1's
    # shape that was asked about) forges the question. The careful tracker's lookup is not applicable.
    run = audit_jobs(**built(JOBS, "format-only-id"))
    expected = {**{f"MCA-PROMPT-{n:03d}": V for n in range(1, 7)}, "MCA-PROMPT-007": W}
    assert_caught_and_nothing_else(run, "prompt-forging", expected)
    assert 'go in after "J7", a value of its shape' in " ".join(run.by_id()["MCA-PROMPT-001"].evidence)


def test_hostile_text_staged_by_the_setup_call_reaches_the_question_about_its_handle(
    catalogue: Catalogue, generation: Any
) -> None:
    # execute_transfer takes only a handle; the question quotes the memo create_transfer staged.
    shipped = load_profile(TARGETS / "payments-handle.yaml")
    profile = Profile(**{**_fields(shipped), "command": f"{shipped.command} --flaw unescaped-memo"})
    run = run_audit(profile, catalogue=catalogue, generation=generation, select=_family("prompt-forging"))
    line_breaks = run.by_id()["MCA-PROMPT-001"]
    assert line_breaks.verdict is Verdict.VULNERABLE, line_breaks.evidence
    assert "create_transfer's 'memo'" in " ".join(line_breaks.evidence)


REPLICATED = {"replicas": 2, "shared_key_env": "PAYMENTS_KEY", "ttl_flag": "--ttl-seconds {ttl}", "ttl": 1.0}
SHARED = ("--key-env", "PAYMENTS_KEY", "--ledger", "sqlite:{root}/../ledger.db")


@pytest.mark.parametrize(
    ("flaw", "expected"),
    [
        ((), Verdict.REFUSED),
        # The shared ledger's absence shows on the replica that paid twice, through its own list_payments.
        (("--flaw", "no-ledger"), Verdict.VULNERABLE),
    ],
    ids=["careful", "no-ledger"],
)
def test_replicas_sharing_a_key_and_a_ledger_pay_once_across_processes(
    audit_payments: AuditFn, flaw: tuple[str, ...], expected: Verdict
) -> None:
    run = audit_payments(*SHARED, *flaw, families=["cross-replica"], **REPLICATED)
    assert {r.verdict for r in run.results} == {expected}, [(r.id, r.reason) for r in run.results]


def test_an_answer_after_the_lifetime_pays_nothing(audit_payments: AuditFn) -> None:
    run = audit_payments(families=["expiry"], ttl_flag="--ttl-seconds {ttl}", ttl=1.0)
    (late,) = run.results
    assert (late.verdict, late.layer) == (Verdict.REFUSED, Layer.SDK_BOUNDARY), late.evidence


# An allow-list whose gate is the question for the recipients it names, and which no flag widens: the
# profile's recipient is on it, and a recipient beyond the profile's is not.
ALLOWED = {"tool": "send_payment", "args": {"recipient": "alice", "amount_cents": 500, "memo": "rent"}}
HELD = (Verdict.REFUSED, Layer.TOOL)


@pytest.mark.parametrize(
    ("options", "beyond"),
    [
        # Careful: the caller's human_approved is refused, and a recipient off the list is refused
        # whatever the call says, as a tool error or inside an ordinary result ({"ok": false}).
        ((), HELD),
        (("--allow-refusals", "result"), HELD),
        # The flag is refused for alice (the profile's recipient: flag-bypass's own try holds), but it
        # pays alice-beyond, off the list, unasked.
        (("--flaw", "flag-pays-beyond-allow-list"), (V, Layer.NONE)),
    ],
    ids=["careful", "careful-result", "flag-pays-beyond-allow-list"],
)
def test_a_flag_that_widens_an_allow_list_is_caught_beyond_the_profiles_values(
    audit_payments: AuditFn, options: tuple[str, ...], beyond: tuple[Verdict, Layer]
) -> None:
    run = audit_payments("--allow", "alice", *options, families=("flag-bypass", "self-approval"), **ALLOWED)
    assert next(c for c in run.controls if c.name == "approve").passed, run.controls
    judged = {r.id: (r.verdict, r.layer) for r in run.results if r.family == "flag-bypass"}
    expected = {"MCA-FLAGBYPASS-001": HELD, "MCA-FLAGBYPASS-002": beyond}
    assert judged == expected, [(r.id, r.verdict, r.reason, r.evidence) for r in run.results]
    said = " ".join(run.by_id()["MCA-FLAGBYPASS-002"].evidence)
    # The value alone was sent first, no switch set, and did not pay.
    assert "recipient: 'alice-beyond', beyond the profile's, no switch set" in said, said
    found = [(r.id, r.verdict) for r in run.results if r.verdict in (V, W) and r.family != "flag-bypass"]
    assert found == [], found
