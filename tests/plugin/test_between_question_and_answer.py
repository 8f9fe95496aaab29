"""Swaps and forged prompts end to end through the plugin, on real stdio reference servers."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from mcp_confirm_audit.catalogue.generation import Generation

SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"
# Each reference server forked from the SDK's zygote (tests/forking.py).
pytestmark = pytest.mark.usefixtures("forked_targets")
FAMILIES = {"symlink-swap", "parent-swap", "identity-swap", "prompt-forging"}


def target(*options: str) -> str:
    return shlex.join([sys.executable, str(SERVER), "--root", "{root}", *options])


def test_a_server_that_follows_links_after_the_answer_loses_the_canaries_it_names(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest("--mcp-target", target("--flaw", "no-recheck"), "-k", "symlink or parent")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # -k parent also picks out-of-root's parent-traversal, which no-recheck still refuses.
    result.assert_outcomes(failed=5, passed=1)
    result.stdout.fnmatch_lines(
        [
            "*MCA-PARENT-002 The confirmed file's directory is replaced by a link*outside*",
            "*verdict: vulnerable*refused by: none (it took effect)*",
            "*disk removed: outside/*-parent-link-outside/canaries/victim.txt*",
            "*note: after the question: root/*/sub -> link to outside/*/canaries*",
        ]
    )
    result.stdout.fnmatch_lines(["*disk removed: outside/*-link-to-outside-canary/canary.txt*"])
    result.stdout.fnmatch_lines(["*disk removed: root/*-link-to-directory/folder, root/*/folder/canary.txt*"])


def test_a_server_without_an_identity_check_deletes_a_replaced_file_and_a_rewritten_one(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest(
        "--mcp-target", target("--flaw", "no-identity-check"), "-k", "IDSWAP", "-W", "default"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=1, passed=2, warnings=1)
    result.stdout.fnmatch_lines(
        [
            "*MCA-IDSWAP-001*",
            "*disk removed: root/*-renamed-onto/victim.txt*",
            "*AuditWarning: MCA-IDSWAP-002 weak*acted on a file that changed after the question*",
        ]
    )


def test_a_sanitiser_that_keeps_bidi_fails_with_the_offending_code_point_and_a_shrunk_example(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest(
        "--mcp-target", target("--flaw", "sanitiser-keeps-bidi"), "-k", "prompt", "--mcp-report-dir", "out"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(failed=2, passed=11)
    result.stdout.fnmatch_lines(
        [
            "*MCA-PROMPT-002 Bidi controls*",
            "*bidi control U+202E from the name reached the question*",
            '*[[]named example: "invoice\\u202efdp.exe"[]]*',
            "*[[]generated example, shrunk: *",
        ]
    )
    result.stdout.fnmatch_lines(["*invisible character U+200B from the name reached the question*"])
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    failed = {r["variant"] for r in report["results"] if r["verdict"] == "vulnerable"}
    assert failed == {"bidi", "invisible-characters"}


def test_the_careful_server_refuses_every_swap_and_forged_prompt_in_the_tool(
    pytester: pytest.Pytester,
) -> None:
    result = pytester.runpytest(
        "--mcp-target",
        target(),
        "-k",
        # The swap in each era (MCA-ERAS-004) is protocol-downgrade's: this server refuses the old era whole.
        "(swap or prompt) and not ERAS",
        "--mcp-report-dir",
        "out",
        "--mcp-examples",
        "10",
    )
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=21)
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    assert {r["family"] for r in report["results"]} == FAMILIES
    assert {(r["verdict"], r["layer"]) for r in report["results"]} == {("refused", "tool")}
    variants = {r["variant"] for r in report["results"]}
    assert {"link-to-outside-canary", "parent-link-inside", "rewritten-in-place", "bidi"} <= variants


def test_the_seed_is_printed_and_a_given_seed_draws_the_same_names(pytester: pytest.Pytester) -> None:
    args = ["--mcp-target", target(), "-k", "PROMPT-005", "--mcp-examples", "5", "--mcp-report-dir", "out"]
    names = []
    for _ in range(2):
        result = pytester.runpytest(*args, "--mcp-seed", "7")
        result.stdout.fnmatch_lines(
            ["mcp-confirm-audit: hostile names: 5 generated per attack, seed 7 (*--mcp-seed 7)"]
        )
        report = json.loads((pytester.path / "out" / "audit.json").read_text())
        assert report["target"]["generation"] == {"examples": 5, "seed": 7}
        names.append([line for line in report["results"][0]["evidence"] if "(other-controls)" in line])
    assert names[0] == names[1]


def test_without_a_seed_each_run_prints_the_one_it_drew_and_ci_fixes_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CI", raising=False)
    drawn = pytester.runpytest("--mcp-target", target(), "--collect-only")
    drawn.stdout.fnmatch_lines(["*hostile names: 25 generated per attack, seed * (repeat with --mcp-seed *)"])
    monkeypatch.setenv("CI", "true")
    fixed = pytester.runpytest("--mcp-target", target(), "--collect-only")
    fixed.stdout.fnmatch_lines(
        ["*hostile names: 25 generated per attack, seed 0 (derandomized because CI=true)"]
    )


def test_the_ini_twins_set_examples_and_seed(pytester: pytest.Pytester) -> None:
    pytester.makeini(f"[pytest]\nmcp_target = {target()}\nmcp_examples = 3\nmcp_seed = 11\n")
    result = pytester.runpytest("--collect-only")
    result.stdout.fnmatch_lines(["*hostile names: 3 generated per attack, seed 11 *"])


def test_a_bad_example_count_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--mcp-target", target(), "--mcp-examples", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--mcp-examples must be at least 1, got 0*"])


def test_xdist_workers_draw_from_the_controllers_seed(pytester: pytest.Pytester) -> None:
    # The careful server built in each worker's process (py:...:build_server): what is proven is where a
    # worker's names come from, not how a target starts (each worker would start its own, unforked).
    result = pytester.runpytest(
        "--mcp-target",
        f"py:{SERVER}:build_server",
        "-n",
        "2",
        "-k",
        "PROMPT-00",
        "--mcp-examples",
        "3",
        "--mcp-report-dir",
        "out",
    )
    assert result.ret == pytest.ExitCode.OK
    report = json.loads((pytester.path / "out" / "audit.json").read_text())
    seed = report["target"]["generation"]["seed"]
    generated = [r for r in report["results"] if r["family"] == "prompt-forging"]
    assert len(generated) == 9
    for r in generated:
        wanted = f"(seed {Generation(3, seed).seed_for(r['id'])} for this attack)"
        assert any(wanted in line for line in r["evidence"]), (wanted, r["evidence"][-3:])


ACTS_ON_ODD_NAMES = '''
import sys
from pathlib import Path
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

root = Path(sys.argv[sys.argv.index("--root") + 1])
server = MCPServer(name="acts-on-odd-names")
FORM = {"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}


@server.tool()
async def delete_file(path: str, ctx: Context) -> str | InputRequiredResult:
    """Delete a file after asking, except when its name has a line break in it."""
    answer = (ctx.input_responses or {}).get("confirm")
    if "\\n" in path or answer is not None:
        if answer is None or (answer.action == "accept" and (answer.content or {}).get("confirm") is True):
            (root / path).unlink()
            return "deleted"
        return "kept"
    question = ElicitRequestFormParams(mode="form", message=f"Delete {path!r}?", requested_schema=FORM)
    return InputRequiredResult(input_requests={"confirm": ElicitRequest(params=question)}, request_state="s")


server.run(transport="stdio")
'''


def test_a_hostile_name_the_tool_deletes_without_asking_is_caught_on_disk(pytester: pytest.Pytester) -> None:
    script = pytester.makepyfile(acts_on_odd_names=ACTS_ON_ODD_NAMES)
    result = pytester.runpytest(
        "--mcp-target",
        f"{sys.executable} {script} --root {{root}}",
        "-k",
        "PROMPT-001",
        "--mcp-examples",
        "3",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ['*the file was removed before any answer [[]acted in round one: "notes\\n\\n*']
    )
