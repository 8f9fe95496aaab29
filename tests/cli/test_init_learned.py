"""`init` writes what zero configuration learned, and where each value came from (issue 30).

Each shape is built in the audit's process (`py:FILE:build_server`, a two-line module naming the
shape): what `init` writes comes from the tools, refusals and files the search reads, which no
transport changes, and a process per world cost several times the CPU (tests/matrix/test_zero_config_search.py
says by how much). `init` of a command started as written is run as a person runs it in
tests/cli/test_errors_point_the_way.py and tests/docs/.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_confirm_audit.cli.main import main
from mcp_confirm_audit.profile.loader import load_profile

SHAPES = Path(__file__).resolve().parents[2] / "targets" / "zc_shapes" / "server.py"


def _in_process(folder: Path, shape: str) -> str:
    """`py:FILE:build_server` of a module in `folder` that builds the greenhouse's `shape`."""
    module = folder / f"{shape}_shape.py"
    module.write_text(
        "import importlib.util\n"
        f"_spec = importlib.util.spec_from_file_location('zc_shapes_{shape}', {str(SHAPES)!r})\n"
        "_shapes = importlib.util.module_from_spec(_spec)\n"
        "_spec.loader.exec_module(_shapes)\n"
        "def build_server(root):\n"
        f"    return _shapes.build_server(root, {shape!r})\n",
        encoding="utf-8",
    )
    return f"py:{module}:build_server"


def _init(tmp_path: Path, shape: str, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str, str]:
    out = tmp_path / f"{shape}.yaml"
    assert main(["init", _in_process(tmp_path, shape), "-o", str(out)]) == 0
    return out, out.read_text(encoding="utf-8"), capsys.readouterr().out


def test_init_writes_the_arguments_that_reached_the_gate_each_with_its_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, text, printed = _init(tmp_path, "rules", capsys)
    assert printed == f"wrote {out}\nnext: mcp-confirm-audit run --profile {out}\n"
    assert "  # from set_vent's refusal (\"unknown vent 'mcp-confirm-audit': vent must be one of" in text
    assert "  vent: north\n" in text
    assert (
        '  # from set_vent\'s refusal ("rejected: angle must be between 15 and 75 degrees")\n  angle: 45\n'
        in text
    )
    assert "# what the honest approve control saw change: asked, accepted, acted" in text
    profile = load_profile(out)
    assert (profile.tool, dict(profile.args or {})) == ("set_vent", {"vent": "north", "angle": 45})


def test_init_writes_the_setup_that_made_the_subject_and_the_bookkeeping(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, text, _ = _init(tmp_path, "subject", capsys)
    assert "#   plant_bed: skipped: makes clear_bed's subject (setup the honest-flow search learned)" in text
    assert "# setup: plant_bed makes a bed for every use (its 'bed_id')" in text
    profile = load_profile(out)
    assert [step.tool for step in profile.setup] == ["plant_bed"]
    assert dict(profile.args or {}) == {"bed_id": "{bed_id}"}

    out, text, _ = _init(tmp_path, "log", capsys)
    assert "# calls.log: grew on every one of" in text
    assert "ignore:\n- calls.log\n" in text
    assert "calls.log" in load_profile(out).ignore


def test_init_says_why_each_tool_was_left_out_and_never_that_an_unannotated_one_declared_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # host-terminal-mcp's status tools declare nothing; init said "declared read-only" of them (trial 14).
    _, text, _ = _init(tmp_path, "mode", capsys)
    assert "declared read-only" not in text
    assert (
        "#   irrigation_status: skipped: no annotations; two calls changed nothing and answered alike" in text
    )
    assert (
        "#   set_irrigation_mode: skipped: a rule of irrigate's gate, judged by policy-self-loosening" in text
    )
    assert "#   irrigate: audited (names no file; its effect seen through" in text


def test_init_that_could_not_complete_the_flow_names_the_step_the_words_and_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, text, _ = _init(tmp_path, "opaque", capsys)
    assert (
        "# The honest-flow search gave up: set_vent's refusal names no rule the harness can follow\n" in text
    )
    assert "# The server said: Error executing tool set_vent: rejected: \\x1b[31mvent out of range" in text
    assert "\x1b" not in text
    assert "# Fix: set args: (the values the server accepts)" in text
    load_profile(out)


def test_init_says_of_each_flow_that_failed_which_control_failed_in_its_words_and_where_the_fix_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Three tools, none of whose honest flows completes: each for its own reason, and each fix is elsewhere.
    out, text, _ = _init(tmp_path, "office", capsys)
    assert (
        "# The honest flow failed on 3 of 3 tools: every attack on them is inconclusive until it works.\n"
        in text
    )
    # The search that gave up, in the words of its control.
    assert "#   set_vent: search: gave up: set_vent's refusal names no rule the harness can follow\n" in text
    assert (
        '#     Fix: set args: (the values the server accepts) and setup: (the calls that make its subject); see docs/how-to/actions.md, "Say it in a profile"\n'
        in text
    )
    # The approve control's own words: the tool never asked, naming the sign-off it wants.
    assert (
        "#   prune_row: approve: relative: did not ask (tool-error: Error executing tool prune_row: row "
        in text
    )
    assert "pruning is signed off by the head grower in the office" in text
    assert (
        "#     Fix: set path_arg (or args: with {path}) to the argument that names the file; see docs/profile.md, the key path_arg\n"
        in text
    )
    # An approval only the grower gives, in their own app: the fix is the person's channel, never args.
    assert "#   run_command: approve: value: the approval was refused (approve_command: " in text
    assert (
        '#     Fix: say how the person answers on their own channel; see docs/how-to/channels.md, "Play the person '
        'on another channel"\n'
    ) in text
    # Every line of it a comment: the draft is still a profile.
    assert load_profile(out).tool is None


def test_init_of_a_shell_tool_writes_the_rm_line_its_honest_flow_ran(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Without the line, the draft said `path_arg: command` alone: its audit sent the case file's path as
    # the whole command line ("command not found") and every attack was inconclusive.
    shell = Path(__file__).resolve().parents[2] / "targets" / "shell" / "server.py"
    out = tmp_path / "shell.yaml"
    assert main(["init", f"py:{shell}:build_server", "-o", str(out)]) == 0
    capsys.readouterr()
    text = out.read_text(encoding="utf-8")
    assert "  # a command line: zero configuration's file action, rm of the case file" in text
    assert "  command: rm {path}\n" in text
    profile = load_profile(out)
    assert (profile.tool, profile.path_arg, dict(profile.args or {})) == (
        "run_command",
        "command",
        {"command": "rm {path}"},
    )
