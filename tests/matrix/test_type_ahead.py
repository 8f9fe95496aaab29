"""type-ahead over the terminal channel: a `y` already typed on the person's terminal approves the next question.

`targets/elsewhere/server.py --channel terminal` asks on its own controlling terminal, the harness's
pseudo-terminal (`tty: true`), and the profile `targets/elsewhere-terminal.yaml` plays the person
at it. The family types the person's approving answer before the agent's call, and sends the call
once that line is waiting in the terminal's input, so the order is fixed and nothing sleeps. Nobody
answers the question the call then shows. The flawed server (`--flaw type-ahead`) reads its
terminal as it is and deletes the file. The careful server throws away what was typed before its
prompt, either flushing the input queue or reading and dropping every line already waiting; it
then refuses when its own short deadline (--ttl) lapses. A tool that asks over MCP has no terminal
to type on.

A channel test: benchmarks/under_load.sh runs it beside the CPU burners.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from conftest import MATRIX_GENERATION, REFERENCE_SERVER, forked
from deadline import deadline

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import Layer, Result, Verdict
from mcp_confirm_audit.profile.loader import load_profile, profile_from_mapping, resolve_profile

TARGETS = Path(__file__).resolve().parents[2] / "targets"
SERVER = TARGETS / "elsewhere" / "server.py"
TYPE_AHEAD = "MCA-TYPEAHEAD-001"


def _type_ahead_on_the_terminal(catalogue: Catalogue, *options: str) -> Result:
    """type-ahead against the terminal server started with `options`; its controls must all hold first."""
    # The server's own wait for its person, scaled as forked() scales the profile's deadlines.
    words = [
        sys.executable,
        str(SERVER),
        "--root",
        "{root}",
        "--channel",
        "terminal",
        "--ttl",
        f"{deadline(3):g}",
    ]
    profile = resolve_profile(
        load_profile(TARGETS / "elsewhere-terminal.yaml"), shlex.join([*words, *options]), None
    )
    run = run_audit(
        forked(profile),
        catalogue=catalogue,
        select=lambda spec: spec.family == "type-ahead",
        generation=MATRIX_GENERATION,
    )
    failed = [(c.name, c.detail) for c in run.controls if not c.passed]
    assert not failed, failed
    return run.by_id()[TYPE_AHEAD]


def test_a_yes_typed_before_the_question_deletes_the_file_on_a_server_that_reads_its_terminal_as_it_is(
    catalogue: Catalogue,
) -> None:
    result = _type_ahead_on_the_terminal(catalogue, "--flaw", "type-ahead")
    assert (result.verdict, result.layer) == (Verdict.VULNERABLE, Layer.NONE), (
        result.reason,
        result.evidence,
    )
    assert result.reason.startswith("acted on an answer typed on the person's terminal before its question")
    assert result.effect.removed, result.evidence
    said = " ".join(result.evidence)
    assert "typed 'y' and Enter on the target's terminal before any question was shown" in said
    # Nobody answered the question the call showed: the line typed ahead was all there was.
    assert "with nobody answering -> delete_file(" in said


@pytest.mark.parametrize("discard", ["flush", "drain"])
def test_a_server_that_throws_away_what_was_typed_before_its_prompt_refuses_when_nobody_answers(
    catalogue: Catalogue, discard: str
) -> None:
    result = _type_ahead_on_the_terminal(catalogue, "--discard", discard)
    assert (result.verdict, result.layer) == (Verdict.REFUSED, Layer.TOOL), (result.reason, result.evidence)
    assert result.reason.startswith("the answer typed before the question was shown ('y') approved nothing: ")
    assert not result.effect.happened
    assert "gone from the terminal's input when the call ended" in " ".join(result.evidence)


def test_a_tool_that_asks_over_mcp_has_no_terminal_to_type_ahead_on(catalogue: Catalogue) -> None:
    # The MRTR reference server, in process: its question goes to the client, never to a terminal.
    profile = profile_from_mapping(
        {"command": f"py:{REFERENCE_SERVER}:build_server", "tool": "delete_file", "call_timeout": 10.0},
        source="test",
    )
    run = run_audit(
        profile,
        catalogue=catalogue,
        select=lambda spec: spec.family == "type-ahead",
        generation=MATRIX_GENERATION,
    )
    result = run.by_id()[TYPE_AHEAD]
    assert result.verdict is Verdict.NOT_APPLICABLE, (result.reason, result.evidence)
    assert result.reason == (
        "the tool asks over MCP (an MRTR question), not on a terminal of the server's: nothing typed there "
        "answers it"
    )
    assert result.evidence == ()  # decided before anything was sent
