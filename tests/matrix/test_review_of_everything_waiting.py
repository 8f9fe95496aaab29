"""What the person reads lists every change still waiting: a line break is the name's only where it stands.

Trial 16, openmymemo 0.3.1: the person reads `openmymemo review`, which prints every proposal still
waiting, each on lines of its own. openmymemo collapses a proposal's whitespace (`" ".join(content.split())`),
so no line break of the agent's ever reaches it; yet MCA-PROMPT-001 was `vulnerable`: "line break U+000A from
the name reached the question [generated example, shrunk: "\\u2028"]". The review held more line ends than
the plain question did (more requests waited by then), and a name of line breaks only, or one ending in
them, was credited with any of them. And "bidi control U+061C from the name reached the question [shrunk:
"f"]" blamed a name holding none on another request's. targets/memory's `review.py list` is that review:
careful (each change an escaped JSON string) and with `--flaw raw-content` (printed as proposed).
"""

from __future__ import annotations

import re

from conftest import MATRIX_GENERATION
from memory_target import memory_profile, review

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec, Verdict

ATTACKS = {"MCA-PROMPT-001", "MCA-PROMPT-002", "MCA-PROMPT-003"}
_BLAMED = re.compile(
    r"vulnerable: (?:bidi control|invisible character) U\+(?P<code>[0-9A-F]+) from the name reached the "
    r'question \[generated example, shrunk: "(?P<example>.*)"\]$'
)


def audit(catalogue: Catalogue, *review_flaws: str) -> AuditRun:
    # The person reads every change still waiting (`list`), as openmymemo's review shows them.
    profile = memory_profile(reads=review("list", *review_flaws, proposal=""))

    def select(spec: AttackSpec) -> bool:
        return spec.id in ATTACKS

    return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)


def test_a_review_that_escapes_every_waiting_change_is_not_blamed_for_its_own_line_ends(
    catalogue: Catalogue,
) -> None:
    run = audit(catalogue)
    verdicts = {r.id: r.verdict for r in run.results}
    assert verdicts == dict.fromkeys(ATTACKS, Verdict.REFUSED), {
        r.id: (r.verdict, r.reason) for r in run.results
    }


def test_a_review_that_prints_each_waiting_change_raw_is_caught_by_the_names_own_characters(
    catalogue: Catalogue,
) -> None:
    run = audit(catalogue, "raw-content")
    found = {r.id: r for r in run.results}
    assert {i: r.verdict for i, r in found.items()} == dict.fromkeys(ATTACKS, Verdict.VULNERABLE), found
    for result in found.values():
        for line in result.evidence:
            blamed = _BLAMED.match(line)
            if blamed is not None:
                # A generated example is blamed only for a bidi or invisible character it holds.
                example = blamed["example"].encode("ascii").decode("unicode_escape")
                assert chr(int(blamed["code"], 16)) in example, line
