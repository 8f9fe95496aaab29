"""A link at the confirmed name: what it leads to moving is critical, the link alone moving is not.

host-terminal-mcp's `rm` removed the link symlink-swap put in the confirmed file's place (and the
link out-of-root names), an entry inside the root, and the canary it led to was intact: the report
said "critical: took effect" all the same. Proven on the reference server in three shapes:

- one that follows the name as it is now (no-recheck; lexical-containment for a link already
  there): the canary is gone, the family's own finding, critical, as before;
- one that unlinks the name as it is now, as `rm` does (unlinks-the-name): only the link moved,
  weak, and the reason names the link and says the canary is untouched, never that it moved;
- the careful one, which re-checks the file's identity on the answer: refused, by the tool.
"""

from __future__ import annotations

import pytest
from conftest import MATRIX_GENERATION, REFERENCE_SERVER

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import AttackSpec, Layer, Result, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

V, W, R = Verdict.VULNERABLE, Verdict.WEAK, Verdict.REFUSED
SWAPPED_IN = ("MCA-SYMLINK-001", "MCA-SYMLINK-002", "MCA-SYMLINK-003")
ALREADY_THERE = "MCA-ROOT-004"


def audit(catalogue: Catalogue, *flaws: str) -> dict[str, Result]:
    raw = {
        "command": f"py:{REFERENCE_SERVER}:build_server",
        "factory_args": {"flaws": list(flaws)},
        "tool": "delete_file",
        "call_timeout": 10.0,
    }

    def select(spec: AttackSpec) -> bool:
        return spec.id in (*SWAPPED_IN, ALREADY_THERE)

    profile = profile_from_mapping(raw, source="test")
    return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION).by_id()


@pytest.mark.parametrize(
    ("flaw", "attacks"), [("no-recheck", SWAPPED_IN), ("lexical-containment", (ALREADY_THERE,))]
)
def test_a_server_that_follows_the_link_loses_what_it_leads_to_critically_as_before(
    catalogue: Catalogue, flaw: str, attacks: tuple[str, ...]
) -> None:
    results = audit(catalogue, flaw)
    for attack_id in attacks:
        result = results[attack_id]
        assert (result.verdict, result.severity) == (V, "critical"), (attack_id, result.reason)
        assert result.reason.startswith("the attack took effect on disk"), result.reason
        # What moved is where the link led, the canary (or what the directory held), never the link.
        assert all(
            not path.endswith(("/victim.txt", "/link-to-outside.txt")) for path in result.effect.removed
        )


def test_a_server_that_unlinks_the_name_as_rm_does_is_weak_and_says_the_canary_is_untouched(
    catalogue: Catalogue,
) -> None:
    results = audit(catalogue, "unlinks-the-name")
    for attack_id in (*SWAPPED_IN, ALREADY_THERE):
        result = results[attack_id]
        assert (result.verdict, result.layer) == (W, Layer.NONE), (attack_id, result.reason)
        link = "victim.txt" if attack_id in SWAPPED_IN else "link-to-outside.txt"
        assert [path.rsplit("/", 1)[-1] for path in result.effect.removed] == [link], result.effect
        assert "took effect" not in result.reason
        assert "is untouched" in result.reason
    assert "(outside the root), is untouched" in results["MCA-SYMLINK-002"].reason
    assert "identity-swap's finding" in results["MCA-SYMLINK-001"].reason
    assert "touched nothing out of it" in results[ALREADY_THERE].reason


def test_the_careful_server_re_checks_the_file_and_refuses_every_link(catalogue: Catalogue) -> None:
    results = audit(catalogue)
    assert {(r.verdict, r.layer) for r in results.values()} == {(R, Layer.TOOL)}, [
        (r.id, r.reason) for r in results.values()
    ]
