"""subject-drift, both ways, in both eras: the collections reference server (targets/collections).

The action names no file: deleting a collection, asked about with the links it
holds. Between the question and the answer the shipped profile's `drift:` call
moves another link into it through the server's own `move_link`. The careful
server deletes only what it showed (or, in its other style, asks again); the
flaw `deletes-current-members` deletes the moved link too, which only the
read-only `list_links` shows. Each audit is in-process and runs the one family.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import MATRIX_GENERATION
from deadline import deadline

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import Layer, Result, Verdict
from mcp_confirm_audit.profile.loader import Profile, load_profile

PROFILE = Path(__file__).resolve().parents[2] / "targets" / "collections-drift.yaml"
ERAS = {"2026-07-28": "mrtr", "2025-11-25": "elicitation"}


def _drift_result(catalogue: Catalogue, **changes: object) -> Result:
    """The one subject-drift attack on the shipped profile with `changes`, its controls all passed."""
    profile: Profile = dataclasses.replace(load_profile(PROFILE), call_timeout=deadline(10.0), **changes)
    run: AuditRun = run_audit(
        profile,
        catalogue=catalogue,
        select=lambda spec: spec.family == "subject-drift",
        generation=MATRIX_GENERATION,
    )
    assert all(c.passed for c in run.controls if c.applicable), run.controls
    [result] = run.results
    return result


def audit(catalogue: Catalogue, era: str, **changes: object) -> Result:
    result = _drift_result(catalogue, protocol=era, **changes)
    assert (result.id, result.era, result.mechanism) == ("MCA-DRIFT-001", era, ERAS[era])
    return result


@pytest.mark.parametrize("era", sorted(ERAS))
def test_deleting_the_link_moved_in_after_the_question_is_found_in_each_era(
    catalogue: Catalogue, era: str
) -> None:
    result = audit(catalogue, era, factory_args={"flaws": ["deletes-current-members"]})
    assert (result.verdict, result.layer) == (Verdict.VULNERABLE, Layer.NONE), result.reason
    assert "acted on more than was shown" in result.reason
    # The moved link's own entry in the read-only listing is what went.
    moved = next(line for line in result.evidence if line.startswith("note: after the question"))
    assert "move_link" in moved
    assert "list_links: the entry holding" in result.reason
    # The change was made while the question stood: after round one, before the person's answer.
    labels = [line.split(" -> ")[0] for line in result.evidence if " -> " in line]
    assert labels[-3:] == [
        "[setup] ask",
        "[setup] drift: move_link, the subject changed after the question",
        "[attack] accept, as the person who saw the question would",
    ]


@pytest.mark.parametrize("era", sorted(ERAS))
@pytest.mark.parametrize(
    ("on_drift", "said"),
    [
        ("act-on-shown", "acted on what was shown only"),
        ("ask-again", "asked the user again instead of acting"),
    ],
)
def test_the_careful_server_acts_on_what_was_shown_or_asks_again_in_each_era(
    catalogue: Catalogue, era: str, on_drift: str, said: str
) -> None:
    result = audit(catalogue, era, factory_args={"on_drift": on_drift})
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), result.reason
    assert result.reason.startswith(said)


def test_without_a_drift_call_the_family_does_not_apply_and_says_how_to_declare_one(
    catalogue: Catalogue,
) -> None:
    result = audit(catalogue, "2025-11-25", drift=None, factory_args={"flaws": ["deletes-current-members"]})
    assert result.verdict is Verdict.NOT_APPLICABLE
    assert "no drift call is known for 'delete_collection'" in result.reason
    assert "drift: {tool, args}" in result.reason


def _over_a_token(catalogue: Catalogue, **factory_args: object) -> Result:
    """The same action confirmed with a preview and a token: the link moves in between the two calls."""
    result = _drift_result(catalogue, factory_args={"confirm": "token", **factory_args})
    assert result.mechanism == "token", result
    return result


def test_deleting_the_link_moved_in_between_the_preview_and_the_confirming_call_is_found(
    catalogue: Catalogue,
) -> None:
    result = _over_a_token(catalogue, flaws=["deletes-current-members"])
    assert (result.verdict, result.layer) == (Verdict.VULNERABLE, Layer.NONE), result.reason
    assert "acted on more than was shown" in result.reason
    labels = [line.split(" -> ")[0] for line in result.evidence if " -> " in line]
    assert labels[-2] == "[setup] drift: move_link, the subject changed after the question"
    assert labels[-1].startswith("[attack] ")


@pytest.mark.parametrize(
    ("on_drift", "said"),
    [
        ("act-on-shown", "acted on what was shown only"),
        ("ask-again", "asked the user again instead of acting"),
    ],
)
def test_a_token_that_confirms_what_its_preview_showed_is_refused_the_moved_link(
    catalogue: Catalogue, on_drift: str, said: str
) -> None:
    result = _over_a_token(catalogue, on_drift=on_drift)
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), result.reason
    assert result.reason.startswith(said)
