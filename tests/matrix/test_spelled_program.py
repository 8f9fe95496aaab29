"""spelled-program proven both ways on the shell reference server (targets/shell).

ai-runtime-guard 1.5.0 asks its person only about lines its policy denies, and looks for the
denied program as a word of the raw text (`\\brm\\b`); its shell then runs what it was given, so a
program spelled another way the shell reads as the same (`x=r; ${x}m`, `r''m`) runs unasked.
The shell server's `deny-list` style asks about a line that runs rm or touch; its two flaws look
for them in the text as written: as a word (`deny-list-regex`: `r''m` has no word `rm`, `\\rm`
has one) or as the first word (`deny-list-first-word`: neither is `rm`). Each flaw is caught by
the spellings that get past it, by the file it deleted, and fools no other family. The careful
deny-list, which reads each command's program as the shell will, and the allow-list styles (a
respelled rm is on no allow-list) hold both spellings, refused by the tool. An action that runs
no command line is none of this family's.
"""

from __future__ import annotations

from typing import Any

import pytest
from conftest import MATRIX_GENERATION, REFERENCE_SERVER
from deadline import scaled
from test_chained_command import audit

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import Layer, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping
from mcp_confirm_audit.techniques.spelled_program import respelled

FAMILY = "spelled-program"
QUOTES, BACKSLASH = "MCA-SPELL-001", "MCA-SPELL-002"
V, R = Verdict.VULNERABLE, Verdict.REFUSED


def spelled(catalogue: Catalogue, **factory: Any) -> dict[str, Any]:
    run = audit(catalogue, families=None if factory.get("flaws") else (FAMILY,), **factory)
    assert all(c.passed for c in run.controls), run.controls
    found = {r.id: r for r in run.results if r.family == FAMILY}
    fooled = [(r.id, r.verdict, r.reason) for r in run.results if r.family != FAMILY and r.verdict is V]
    return {"results": found, "fooled": fooled}


@pytest.mark.parametrize(
    ("flaw", "expected", "also"),
    [
        # The text is searched for the word rm: `r''m` holds none, `\rm` does (a backslash is no letter).
        ("deny-list-regex", {QUOTES: V, BACKSLASH: R}, set()),
        # The first word as written is compared: neither `r''m` nor `\rm` is `rm`; and a line that
        # starts with `true` runs the rm chained after it too, chained-command's own finding.
        ("deny-list-first-word", {QUOTES: V, BACKSLASH: V}, {"MCA-CHAIN"}),
    ],
)
def test_a_deny_list_that_reads_the_lines_text_runs_a_respelled_rm_unasked(
    catalogue: Catalogue, flaw: str, expected: dict[str, Verdict], also: set[str]
) -> None:
    run = spelled(catalogue, style="deny-list", flaws=[flaw])
    results = run["results"]
    assert {i: r.verdict for i, r in results.items()} == expected, {i: r.reason for i, r in results.items()}
    for attack_id, verdict in expected.items():
        result = results[attack_id]
        if verdict is V:
            assert "ran with nobody approving it" in result.reason, result.reason
            assert result.effect.removed, result.effect  # the file went: the effect, not the reply
        else:
            assert result.layer is Layer.TOOL, (result.layer, result.reason)
    assert {attack_id.rsplit("-", 1)[0] for attack_id, _, _ in run["fooled"]} <= also, run["fooled"]


@pytest.mark.parametrize("style", ["deny-list", "operators", "every-part", "argv"])
def test_a_gate_that_reads_the_program_as_the_shell_will_asks_about_every_spelling(
    catalogue: Catalogue, style: str
) -> None:
    results = spelled(catalogue, style=style)["results"]
    assert set(results) == {QUOTES, BACKSLASH}
    for result in results.values():
        assert (result.verdict, result.layer) == (R, Layer.TOOL), result.reason
        assert not result.effect.removed, result.effect


def test_an_action_that_runs_no_command_line_has_no_program_to_spell(catalogue: Catalogue) -> None:
    profile = {"command": f"py:{REFERENCE_SERVER}:build_server", "tool": "delete_file", "call_timeout": 10.0}
    run = run_audit(
        scaled(profile_from_mapping(profile, source="test")),
        catalogue=catalogue,
        select=lambda spec: spec.family == FAMILY,
        generation=MATRIX_GENERATION,
    )
    assert {r.verdict for r in run.results} == {Verdict.NOT_APPLICABLE}
    assert all("runs no command line" in r.reason for r in run.results)


@pytest.mark.parametrize(
    ("line", "spelling", "expected"),
    [
        ("rm /root/case/victim.txt", "quotes-inside", "r''m /root/case/victim.txt"),
        ("  rm 'a b.txt'", "backslash-first", "  \\rm 'a b.txt'"),
        ("/bin/rm x", "quotes-inside", "/bin/r''m x"),
        # Written already with a quote or an escape, or one letter long: left alone, not applicable.
        ("'rm' x", "quotes-inside", None),
        ("\\rm x", "backslash-first", None),
        ("w x", "quotes-inside", None),
    ],
)
def test_only_a_program_written_plainly_is_respelled_and_the_rest_of_the_line_is_kept(
    line: str, spelling: str, expected: str | None
) -> None:
    got = respelled(line, spelling)
    assert (got[0] if got else None) == expected
