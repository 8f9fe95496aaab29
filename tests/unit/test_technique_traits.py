"""A family's traits are declared where it is registered, checked there, and read by everyone else."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mcp_confirm_audit import techniques
from mcp_confirm_audit.confirmations.elicitation import Elicitation
from mcp_confirm_audit.confirmations.flag import Flag
from mcp_confirm_audit.confirmations.mrtr import Mrtr
from mcp_confirm_audit.confirmations.pending import Pending
from mcp_confirm_audit.confirmations.token import Token
from mcp_confirm_audit.confirmations.waits import Waits
from mcp_confirm_audit.techniques import ROUNDS, mrtr_only, technique, traits, traits_of

PACKAGE = Path(techniques.__file__).resolve().parents[1]


async def _noop(attack: object, params: object) -> None:
    return None


def test_a_trait_the_decorator_does_not_know_fails_at_registration() -> None:
    with pytest.raises(TypeError, match="premise_askd"):
        technique("a-family", premise_askd=True)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("traits_given", "names"),
    [
        ({"mechanisms": {"mrtr", "tokn"}}, "tokn"),
        ({"mechanisms": {"token"}}, "must include mrtr"),
        ({"needs_state": "no state", "mechanisms": ROUNDS}, "must leave out elicitation"),
        ({"opens": {"elsewhere"}}, "elsewhere"),
    ],
)
def test_a_trait_value_it_does_not_know_fails_naming_the_family(
    traits_given: dict[str, object], names: str
) -> None:
    with pytest.raises(ValueError, match=names) as caught:
        technique("a-family", **traits_given)  # type: ignore[arg-type]
    assert "'a-family'" in str(caught.value)
    assert "a-family" not in traits()


def test_every_registered_family_has_traits_and_every_catalogue_family_is_registered() -> None:
    registered = techniques.load()
    assert set(traits()) == set(registered)
    shipped = {p.stem for p in (PACKAGE.parent / "attacks").glob("*.yaml")}
    assert shipped <= set(registered)


def test_which_family_applies_to_which_mechanism_is_read_from_the_traits() -> None:
    token, pending, waits = Token("t"), Pending("t"), Waits("t")
    flag, legacy = Flag("t", arg="approved"), Elicitation("t")
    for family, found in traits().items():
        assert mrtr_only(family, None) is None
        assert mrtr_only(family, Mrtr("t")) is None
        for mechanism in (token, pending, waits, flag):
            assert (mrtr_only(family, mechanism) is None) == (mechanism.kind in found.mechanisms), family
        # Over a legacy question every family runs but those whose attack is the request state.
        assert mrtr_only(family, legacy) == found.needs_state
    # A name nobody registered is a bug of the caller, not a silent "MRTR only".
    with pytest.raises(ValueError, match="no technique registers"):
        mrtr_only("replya", token)


def test_the_traits_that_replaced_the_hand_kept_lists() -> None:
    assert [n for n, t in traits().items() if t.waits_lifetime] == ["expiry", "lapsed-request"]
    assert {n for n, t in traits().items() if t.both_eras} == {"protocol-downgrade"}
    asked = {n for n, t in traits().items() if t.premise_asked}
    assert {"symlink-swap", "replay", "double-spend"} <= asked
    assert traits_of("no-such-family") is None


def test_no_module_outside_techniques_keeps_a_list_of_family_names() -> None:
    """A family name as a string literal outside techniques/ is a hand-kept list waiting to go stale."""
    names = set(traits())
    # Words that are also family names used for other things: the CLI's replay command, the
    # unanswered control's name.
    other_meanings = {"replay", "unanswered"}
    found = []
    for path in PACKAGE.rglob("*.py"):
        if path.parent.name == "techniques":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and node.value in names - other_meanings:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {node.value!r}")
    assert not found, "read the family's traits (techniques.traits_of) instead:\n" + "\n".join(found)
