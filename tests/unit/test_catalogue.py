"""The catalogue is data checked against the code: ids, techniques, and no orphan technique."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_confirm_audit.catalogue import load_catalogue
from mcp_confirm_audit.errors import UsageError

FAMILIES = {"replay", "cross-target", "forged-state", "fabricated-approval", "consent", "out-of-root"}


def test_the_shipped_catalogue_loads_with_unique_ids_and_every_technique_used() -> None:
    catalogue = load_catalogue()
    ids = [a.id for a in catalogue.attacks]
    assert len(ids) == len(set(ids))
    assert set(catalogue.families) >= FAMILIES
    assert {a.technique for a in catalogue.attacks} == set(catalogue.techniques)


def test_forged_state_has_at_least_ten_mutations_of_a_real_state() -> None:
    forged = [a for a in load_catalogue().attacks if a.family == "forged-state"]
    assert sum(a.params.get("kind") == "mutation" for a in forged) >= 10


def _write(tmp_path: Path, text: str) -> Path:
    source = Path(__file__).resolve().parents[2] / "attacks"
    for path in source.glob("*.yaml"):
        (tmp_path / path.name).write_text(path.read_text())
    (tmp_path / "zz-extra.yaml").write_text(text)
    return tmp_path


def test_a_duplicate_id_is_refused(tmp_path: Path) -> None:
    extra = "family: replay-two\ncode: REPLAY\ntechnique: replay\nseverity: high\nlevel: MUST\nattacks:\n  - {id: MCA-REPLAY-001, slug: again, params: {mode: after-success}}\n"
    with pytest.raises(UsageError, match="MCA-REPLAY-001 is used twice"):
        load_catalogue(_write(tmp_path, extra))


def test_an_unknown_technique_is_refused(tmp_path: Path) -> None:
    extra = "family: magic\ncode: MAGIC\ntechnique: magic\nseverity: high\nlevel: MUST\nattacks:\n  - {id: MCA-MAGIC-001, slug: x}\n"
    with pytest.raises(UsageError, match="technique 'magic' is not registered"):
        load_catalogue(_write(tmp_path, extra))


def test_an_id_that_does_not_match_its_family_code_is_refused(tmp_path: Path) -> None:
    extra = "family: magic\ncode: MAGIC\ntechnique: replay\nseverity: high\nlevel: MUST\nattacks:\n  - {id: MCA-OTHER-001, slug: x}\n"
    with pytest.raises(UsageError, match="must look like MCA-MAGIC-NNN"):
        load_catalogue(_write(tmp_path, extra))


def test_reported_success_must_name_a_failing_verdict(tmp_path: Path) -> None:
    extra = (
        "family: magic\ncode: MAGIC\ntechnique: replay\nseverity: high\nlevel: MUST\n"
        "attacks:\n  - {id: MCA-MAGIC-001, slug: x, reported_success: refused}\n"
    )
    with pytest.raises(UsageError, match="reported_success must be weak or vulnerable"):
        load_catalogue(_write(tmp_path, extra))
