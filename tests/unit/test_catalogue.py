"""The catalogue is data checked against the code: ids, techniques, and no orphan technique."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mcp_confirm_audit.catalogue.loader import load_catalogue
from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.models import OWASP_ITEMS

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
    family = re.search(r"^family: (\S+)$", text, re.MULTILINE)
    assert family is not None
    (tmp_path / f"{family.group(1)}.yaml").write_text(text)
    return tmp_path


def test_a_duplicate_id_is_refused(tmp_path: Path) -> None:
    extra = "family: replay-two\ncode: REPLAY\ntechnique: replay\nseverity: high\nlevel: MUST\nremedy: Spend it.\nowasp: []\nattacks:\n  - {id: MCA-REPLAY-001, slug: again, params: {mode: after-success}}\n"
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
    with pytest.raises(
        UsageError, match="MCA-MAGIC-001: 'reported_success' should be 'weak' or 'vulnerable', got 'refused'"
    ):
        load_catalogue(_write(tmp_path, extra))


_FAMILY = "family: magic\ncode: MAGIC\ntechnique: replay\nseverity: high\nlevel: MUST\n"


def test_every_shipped_entry_says_how_to_fix_it_and_which_owasp_items_it_falls_under() -> None:
    for attack in load_catalogue().attacks:
        assert len(attack.remedy.split()) >= 8, attack.id
        assert all(item in OWASP_ITEMS for item in attack.owasp), attack.id
        if attack.level == "DERIVED":
            assert attack.derived, f"{attack.id} is DERIVED and does not say from what"


def test_no_entry_cites_a_client_requirement_or_a_non_requirement_as_the_servers() -> None:
    for attack in load_catalogue().attacks:
        for ref in attack.refs:
            assert "clients SHOULD" not in ref, attack.id
            assert "clients MUST" not in ref, attack.id
            assert "informational" not in ref, attack.id


def test_an_entry_without_a_remedy_is_refused(tmp_path: Path) -> None:
    extra = _FAMILY + "owasp: []\nattacks:\n  - {id: MCA-MAGIC-001, slug: x, params: {mode: after-success}}\n"
    with pytest.raises(UsageError, match="MCA-MAGIC-001: needs a 'remedy'"):
        load_catalogue(_write(tmp_path, extra))


def test_an_attack_may_override_its_familys_remedy(tmp_path: Path) -> None:
    extra = _FAMILY + (
        "remedy: Spend the approval.\nowasp: [MCP07]\nattacks:\n"
        "  - {id: MCA-MAGIC-001, slug: x, remedy: Spend it first., params: {mode: after-success}}\n"
        "  - {id: MCA-MAGIC-002, slug: y, params: {mode: after-success}}\n"
    )
    magic = [a for a in load_catalogue(_write(tmp_path, extra)).attacks if a.family == "magic"]
    assert [(a.remedy, a.owasp) for a in magic] == [
        ("Spend it first.", ("MCP07",)),
        ("Spend the approval.", ("MCP07",)),
    ]


def test_an_owasp_item_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    extra = _FAMILY + "remedy: Fix it.\nowasp: [ASI11]\nattacks:\n  - {id: MCA-MAGIC-001, slug: x}\n"
    with pytest.raises(UsageError, match="'owasp' must be a list of OWASP item ids"):
        load_catalogue(_write(tmp_path, extra))


def test_a_missing_owasp_key_is_refused_so_every_family_decides(tmp_path: Path) -> None:
    extra = _FAMILY + "remedy: Fix it.\nattacks:\n  - {id: MCA-MAGIC-001, slug: x}\n"
    with pytest.raises(UsageError, match="'owasp' must be a list"):
        load_catalogue(_write(tmp_path, extra))


def test_a_derived_level_must_say_what_it_is_derived_from(tmp_path: Path) -> None:
    extra = _FAMILY.replace("level: MUST", "level: DERIVED") + (
        "remedy: Fix it.\nowasp: []\nattacks:\n  - {id: MCA-MAGIC-001, slug: x}\n"
    )
    with pytest.raises(UsageError, match="a DERIVED level needs 'derived'"):
        load_catalogue(_write(tmp_path, extra))


def test_a_family_must_live_in_a_file_named_after_it(tmp_path: Path) -> None:
    # The plugin lists the family markers from the file names alone.
    source = Path(__file__).resolve().parents[2] / "attacks"
    for path in source.glob("*.yaml"):
        (tmp_path / path.name).write_text(path.read_text())
    (tmp_path / "other.yaml").write_text(_FAMILY + "remedy: x y\nowasp: []\nattacks: []\n")
    with pytest.raises(UsageError, match=r"family 'magic' must be in a file named magic\.yaml"):
        load_catalogue(tmp_path)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "{id: MCA-MAGIC-001, slug: x, refused-by: [tool], params: {mode: after-success}}",
            "catalogue magic.yaml: MCA-MAGIC-001: unknown key 'refused-by' (did you mean 'refused_by'?)",
        ),
        (
            "{id: MCA-MAGIC-001, slug: x, statuss: retired, params: {mode: after-success}}",
            "catalogue magic.yaml: MCA-MAGIC-001: unknown key 'statuss' (did you mean 'status'?)",
        ),
        (
            "{id: MCA-MAGIC-001, slug: x, parms: {mode: after-success}}",
            "catalogue magic.yaml: MCA-MAGIC-001: unknown key 'parms' (did you mean 'params'?)",
        ),
        (
            "{id: MCA-MAGIC-001, slug: x, params: {mode: after-sucess}}",
            "catalogue magic.yaml: MCA-MAGIC-001: 'params.mode' should be 'after-success', "
            "'decline-then-accept' or 'cancel-then-accept', got 'after-sucess'",
        ),
        (
            "{id: MCA-MAGIC-001, slug: x, params: {mode: after-success, modes: 2}}",
            "catalogue magic.yaml: MCA-MAGIC-001: unknown key 'params.modes' (did you mean 'mode'?)",
        ),
        (
            "{id: MCA-MAGIC-001, slug: x, params: [after-success]}",
            "catalogue magic.yaml: MCA-MAGIC-001: 'params' should be a valid dictionary, got ['after-success']",
        ),
        (
            "{id: MCA-MAGIC-001, slug: x, second_process: 'yes', params: {mode: after-success}}",
            "catalogue magic.yaml: MCA-MAGIC-001: 'second_process' should be a valid boolean, got 'yes'",
        ),
    ],
)
def test_a_misspelled_key_or_a_wrong_type_is_refused_in_one_line_naming_the_entry_and_the_key(
    tmp_path: Path, entry: str, message: str
) -> None:
    extra = _FAMILY + f"remedy: Spend it.\nowasp: []\nattacks:\n  - {entry}\n"
    with pytest.raises(UsageError) as caught:
        load_catalogue(_write(tmp_path, extra))
    assert str(caught.value) == message


def test_a_params_value_of_the_wrong_type_is_refused_naming_the_entry_and_the_key(tmp_path: Path) -> None:
    extra = (
        "family: oor\ncode: OOR\ntechnique: out-of-root\nseverity: high\nlevel: MUST\nremedy: Resolve it.\n"
        "owasp: []\nattacks:\n  - {id: MCA-OOR-001, slug: x, params: {target: overlong, length: '3000'}}\n"
    )
    with pytest.raises(UsageError) as caught:
        load_catalogue(_write(tmp_path, extra))
    assert str(caught.value) == (
        "catalogue oor.yaml: MCA-OOR-001: 'params.length' should be a valid integer, got '3000'"
    )


def test_a_misspelled_key_of_the_family_is_refused_naming_it(tmp_path: Path) -> None:
    extra = _FAMILY + "remedy: Spend it.\nowasp: []\nrefuse_before_askin: true\nattacks: []\n"
    with pytest.raises(UsageError) as caught:
        load_catalogue(_write(tmp_path, extra))
    assert str(caught.value) == (
        "catalogue magic.yaml: unknown key 'refuse_before_askin' (did you mean 'refuse_before_asking'?)"
    )
