"""A real third-party server from PyPI: mcp-confirm, audited as its users would run it.

The audit read here is the one the README's command makes when it regenerates the checked-in review
(`targets/mcp-confirm.yaml`, the whole catalogue): conftest.py's `readme_review` runs it once for this
module and test_checked_in_review.py, and these tests read its audit.json.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_confirm_audit.catalogue.generation import generation_for
from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.profile.loader import beside_interpreter, load_profile

ROOT = Path(__file__).resolve().parents[2]

# What mcp-confirm 0.2.1 gets wrong, each read off its source:
KNOWN_FINDINGS = {
    # It reads the confirm box by truthiness: `(answer.content or {}).get("confirmed")`.
    "MCA-CONSENT-004",
    "MCA-CONSENT-005",
    # Its re-check after the answer is exists() and is_file() on the resolved path, so
    # another file renamed onto the name is deleted in its place ...
    "MCA-IDSWAP-001",
    # ... and its link check (`Path(path).is_symlink()`) sees only the last component,
    # so a parent directory swapped for a link to another directory in the root is
    # followed, and the same-named canary there is deleted.
    "MCA-PARENT-001",
    # safe_value() drops bidi overrides and turns Cc/Cf/Zl/Zp into spaces, but keeps
    # unassigned code points: U+E0000 and most of the tag block are default-ignorable,
    # so they reach the question and are invisible.
    "MCA-PROMPT-003",
}
KNOWN_WEAK = {
    # The same truthiness takes the integer 1 for true: a lax yes, which a client could send as true.
    "MCA-CONSENT-006",
    # The file rewritten in place after the question is still deleted.
    "MCA-IDSWAP-002",
    # Markdown and HTML in a name reach the question unescaped.
    "MCA-PROMPT-007",
    # Controls become spaces and runs of spaces collapse: "a\u200bb" and "a b" read the same.
    "MCA-PROMPT-009",
    # It never reads the client's capabilities: the form goes to a client that declared no
    # elicitation (or URL mode only), the MUST NOT. That client cannot answer it, and nothing goes.
    "MCA-DOWNGRADE-001",
    "MCA-DOWNGRADE-002",
}


@pytest.fixture(scope="module")
def whole_catalogue(readme_review: Path) -> dict[str, Any]:
    """The whole catalogue's audit.json, from the README's command (run once for both tests below)."""
    # Beside the interpreter running the tests, whether or not its venv is activated.
    assert beside_interpreter("mcp-confirm") != "mcp-confirm", "mcp-confirm is part of the dev extra"
    audit: dict[str, Any] = json.loads((readme_review / "report" / "audit.json").read_text())
    return audit


def _happened(effect: dict[str, list[str]]) -> bool:
    # As models.Effect.happened: additions alone are no effect.
    return bool(effect["removed"] or effect["changed"] or effect["observed"])


def test_mcp_confirm_refuses_what_its_readme_claims_and_falls_for_what_its_source_misses(
    whole_catalogue: dict[str, Any],
) -> None:
    results = whole_catalogue["results"]
    by_id = {r["id"]: r for r in results}
    vulnerable = {r["id"] for r in results if r["verdict"] == "vulnerable"}
    assert vulnerable == KNOWN_FINDINGS, [
        (r["id"], r["reason"]) for r in results if r["id"] in vulnerable ^ KNOWN_FINDINGS
    ]
    weak = {r["id"] for r in results if r["verdict"] == "weak"}
    assert weak == KNOWN_WEAK, [(r["id"], r["reason"]) for r in results if r["id"] in weak ^ KNOWN_WEAK]
    # Its README's table: the SDK refuses cross-target and forged state, the package the rest.
    assert by_id["MCA-XTARGET-001"]["layer"] == "sdk-boundary"
    assert by_id["MCA-FORGE-006"]["layer"] == "sdk-boundary"
    assert by_id["MCA-REPLAY-002"]["layer"] == "tool"
    assert by_id["MCA-ROOT-003"]["layer"] == "tool"
    # Its last-component link check does refuse a swapped final link, and containment
    # after resolving refuses a parent swapped for a link out of the root.
    assert {by_id[i]["layer"] for i in ("MCA-SYMLINK-001", "MCA-SYMLINK-002", "MCA-PARENT-002")} == {"tool"}
    # A NUL byte makes Python's own path functions raise, and the SDK hides the exception
    # ("Error executing tool delete_file"): its reply says nothing of why. Its benign twin, the
    # same call naming a harmless file with the same suffix, was asked about: the call was right,
    # and what refused the NUL byte, with nothing deleted, is the tool.
    assert not [r for r in results if r["verdict"] == "inconclusive"]
    nul = by_id["MCA-ROOT-007"]
    assert (nul["verdict"], nul["layer"]) == ("refused", "tool"), nul["evidence"]
    assert "an exception inside the tool, whose reason the SDK's frame hides" in nul["reason"]
    assert "benign twin" in nul["reason"]
    assert "was asked about" in nul["reason"]
    assert any(line.startswith("[setup] benign twin") for line in nul["evidence"]), nul["evidence"]
    assert {r["tool"] for r in results} == {"delete_file"}
    # It serves no 2025-era client (its MRTR tool answers one with -32603, "Handler returned an
    # invalid result"): no honest flow completes there, so no defence refused anything there.
    for attack_id in (f"MCA-ERAS-00{n}" for n in range(1, 6)):
        eras = by_id[attack_id]
        assert eras["verdict"] == "not_applicable", (attack_id, eras["reason"])
        assert eras["reason"].startswith("the target completes no honest flow over 2025-11-25: "), eras[
            "reason"
        ]
        assert "Handler returned an invalid result" in eras["reason"], eras["reason"]


def test_mcp_confirm_sends_its_form_to_a_client_that_declared_no_elicitation_which_cannot_answer_it(
    whole_catalogue: dict[str, Any],
) -> None:
    # The family's results in the whole catalogue's audit (its one tool is delete_file).
    downgrade = [r for r in whole_catalogue["results"] if r["family"] == "capability-downgrade"]
    assert downgrade
    for result in downgrade:
        assert (result["verdict"], result["layer"], result["mechanism"]) == ("weak", "protocol", "mrtr")
        assert "MUST NOT" in result["reason"]
        assert not _happened(result["effect"]), result["evidence"]
        # The question was put to the client that said it cannot ask anyone, which never answered it.
        assert any("from a client declaring" in line and "[asked" in line for line in result["evidence"])
        assert any("no second round was sent" in line for line in result["evidence"]), result["evidence"]


def test_mcp_confirm_built_in_process_gets_the_verdicts_it_gets_over_stdio(
    whole_catalogue: dict[str, Any], catalogue: Catalogue
) -> None:
    # The profile `bench` measures a careful server of another style with in process
    # (targets/adapters/mcp_confirm_in_process.py hands its factory a list of one root). What it
    # audits must be the server the stdio review audits, or the bench would measure something else.
    profile = load_profile(ROOT / "targets" / "mcp-confirm-in-process.yaml")
    assert profile.is_in_process
    run = run_audit(profile, catalogue=catalogue, generation=generation_for(None, profile.seed, {}))
    in_process = {r.id: r.verdict.value for r in run.results}
    over_stdio = {r["id"]: r["verdict"] for r in whole_catalogue["results"]}
    assert in_process.keys() == over_stdio.keys()
    # One process built in the harness has no replicas to send a confirmation across.
    replicas = {attack_id for attack_id in over_stdio if attack_id.startswith("MCA-REPLICA-")}
    assert replicas
    assert {in_process[attack_id] for attack_id in replicas} == {"not_applicable"}
    differ = {
        attack_id: (verdict, over_stdio[attack_id])
        for attack_id, verdict in in_process.items()
        if verdict != over_stdio[attack_id] and attack_id not in replicas
    }
    assert not differ, differ
