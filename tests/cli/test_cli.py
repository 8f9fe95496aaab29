"""The CLI: thin subcommands over pytest and the catalogue, each with clear exit codes."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
import yaml

from mcp_confirm_audit import __version__
from mcp_confirm_audit.catalogue.docs import COMMAND, markdown
from mcp_confirm_audit.catalogue.loader import load_catalogue
from mcp_confirm_audit.cli.init_profile import _comment
from mcp_confirm_audit.cli.main import main
from mcp_confirm_audit.engine.baseline import load_baseline
from mcp_confirm_audit.plugin import OPTIONS
from mcp_confirm_audit.profile.loader import load_profile

# Each Python stdio target of the in-process runs forked from the SDK's zygote (tests/forking.py).
pytestmark = pytest.mark.usefixtures("forked_targets")

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "targets" / "reference" / "server.py"
GOLDEN_AUDIT = ROOT / "tests" / "report" / "golden" / "audit.json"


def target(*options: str) -> str:
    return shlex.join([sys.executable, str(SERVER), "--root", "{root}", *options])


def here(
    capsys: pytest.CaptureFixture[str], *argv: str
) -> tuple[int, pytest.LineMatcher, pytest.LineMatcher]:
    """`mcp-confirm-audit ARGV` in this process, from the current folder: exit code, stdout, stderr.

    The CLI is pytest.main in the caller's process either way; a person's subprocess runs are
    test_errors_point_the_way.py's and tests/docs/'s (the README's and the tutorial's commands).
    """
    capsys.readouterr()
    code = main(list(argv))
    said = capsys.readouterr()
    return code, pytest.LineMatcher(said.out.splitlines()), pytest.LineMatcher(said.err.splitlines())


def test_docs_attacks_md_is_generated_from_the_catalogue_and_not_stale() -> None:
    committed = (ROOT / "docs" / "attacks.md").read_text(encoding="utf-8")
    assert committed == markdown(load_catalogue()), f"docs/attacks.md is stale: run `{COMMAND}`"


def test_the_catalogue_lists_every_active_attack(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalogue"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == [a.id for a in load_catalogue().attacks]


def test_catalogue_markdown_writes_the_docs_file(tmp_path: Path) -> None:
    assert main(["catalogue", "--markdown", "-o", str(tmp_path / "attacks.md")]) == 0
    for family in load_catalogue().families:
        assert f"## {family}\n" in (tmp_path / "attacks.md").read_text()


def test_baseline_writes_a_file_the_gate_accepts(tmp_path: Path) -> None:
    out = tmp_path / "ci" / "baseline.yaml"
    assert main(["baseline", str(GOLDEN_AUDIT), "-o", str(out)]) == 0
    # The reasons a person writes in place of the TODOs (the gate refuses a TODO).
    out.write_text(out.read_text().replace("TODO say why", "accepted for now:"))
    written = load_baseline(out, load_catalogue())
    assert [(f.id, f.verdict.value if f.verdict else None) for f in written.findings] == [
        ("MCA-CONSENT-004", "weak"),
        ("MCA-REPLAY-001", "vulnerable"),
        # The golden run's decline control failed: accepted by its id, as a finding is.
        ("control-decline", None),
    ]
    assert {(e.id, e.layer.value) for e in written.layers} == {
        ("MCA-FORGE-001", "sdk-boundary"),
        ("MCA-ROOT-003", "tool"),
    }


def test_baseline_of_a_file_that_is_not_an_audit_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": "world"}))
    assert main(["baseline", str(other)]) == pytest.ExitCode.USAGE_ERROR
    assert "is not an audit.json of schema_version 1" in capsys.readouterr().err


def test_usage_errors_exit_4_not_argparse_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["catalogue", "--colour"])
    assert exited.value.code == pytest.ExitCode.USAGE_ERROR
    assert main(["run"]) == pytest.ExitCode.USAGE_ERROR
    said = capsys.readouterr().err
    assert "give the server to audit: run 'my-server --root {root}', run -- my-server --root {root}" in said
    # What follows `--` is pytest's when it is an option: still no target.
    assert main(["run", "--", "-k", "REPLAY"]) == pytest.ExitCode.USAGE_ERROR


def test_a_plugin_option_before_the_dashes_is_a_usage_error_not_a_server_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Read as unknown, its value would become the server's command ("120"), and pytest would then
    # say only that the option expected one argument.
    with pytest.raises(SystemExit) as exited:
        main(["run", "--profile", "p.yaml", "--mcp-start-timeout", "120"])
    assert exited.value.code == pytest.ExitCode.USAGE_ERROR
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert "--mcp-start-timeout is not an option of 'run'" in said
    assert "run --profile FILE -- --mcp-start-timeout ..." in said


def test_init_drafts_a_profile_from_discovery_and_the_honest_flow(tmp_path: Path) -> None:
    out = tmp_path / "target.yaml"
    assert main(["init", target("--paths", "absolute"), "-o", str(out)]) == 0
    text = out.read_text()
    assert text.startswith("# Drafted by `mcp-confirm-audit init`")
    assert "#   stat_file: skipped: declared read-only" in text
    profile = load_profile(out)
    assert (profile.tool, profile.path_arg, profile.paths) == ("delete_file", "path", "absolute")
    assert profile.command == target("--paths", "absolute")


def test_replay_reruns_exactly_one_result_of_a_report(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    report = {
        "schema_version": 1,
        "target": {
            "command": target("--flaw", "no-ledger"),
            "profile": None,
            "root_from": "arg",
            "call_timeout": 10,
        },
        "results": [
            {"id": "MCA-REPLAY-002", "tool": "delete_file"},
            {"id": "MCA-FORGE-001", "tool": "delete_file"},
        ],
    }
    (pytester.path / "audit.json").write_text(json.dumps(report))
    code, out, _ = here(capsys, "replay", "audit.json", "MCA-REPLAY-002")
    assert code == pytest.ExitCode.TESTS_FAILED
    out.fnmatch_lines(
        [
            "*FAILED mcp-audit::MCA-REPLAY-002-decline-then-accept[[]delete_file[]]*",
            "*1 failed, * deselected*",
        ]
    )
    code, _, err = here(capsys, "replay", "audit.json", "MCA-REPLAY-009")
    assert code == pytest.ExitCode.USAGE_ERROR
    err.fnmatch_lines(["*audit.json has no result MCA-REPLAY-009*"])
    # A run made with a profile is never replayed without it, as another audit of the same command.
    report["target"]["profile"] = "profiles/gone.yaml"  # type: ignore[index]
    (pytester.path / "audit.json").write_text(json.dumps(report))
    code, _, err = here(capsys, "replay", "audit.json", "MCA-REPLAY-002")
    assert code == pytest.ExitCode.USAGE_ERROR
    err.fnmatch_lines(["*the run used the profile profiles/gone.yaml, which is not found from*"])
    assert len(err.lines) == 1


def test_run_with_a_profile_passes_what_follows_the_double_dash_to_pytest(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    # "-k REPLAY-001" after a profile: without "--" the pattern could be taken for the target command.
    pytester.makefile(".yaml", flawed=f"command: {target('--flaw', 'no-ledger')}\ntool: delete_file\n")
    code, out, _ = here(capsys, "run", "--profile", "flawed.yaml", "--", "-k", "MCA-REPLAY-001")
    assert code == pytest.ExitCode.TESTS_FAILED
    out.fnmatch_lines(["*1 failed, * deselected*"])


def test_run_takes_the_servers_command_line_after_the_double_dash(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    # `run -- CMD...` as `docker run` and `uvx` take one; a second `--` starts pytest's arguments.
    words = shlex.split(target("--flaw", "no-ledger"))
    code, out, _ = here(capsys, "run", "--", *words, "--", "-k", "MCA-REPLAY-001")
    assert code == pytest.ExitCode.TESTS_FAILED
    out.fnmatch_lines(["*1 failed, * deselected*"])


def test_run_of_a_proxy_whose_own_double_dash_was_cut_says_to_quote_the_command_and_that_way_works(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    # Trial 15: `run -- toolpermit wrap ... -- upstream {root}` gave the upstream's words to pytest, and
    # the proxy died at its start ("an upstream command is required after --"), with no word on why.
    proxy = shlex.split(target("--flaw", "no-ledger"))
    code, _, err = here(capsys, "run", "--", "env", "--", *proxy)
    assert code == pytest.ExitCode.USAGE_ERROR
    err.fnmatch_lines(
        ["*the words after the second -- (*) go to pytest*give the whole command as one quoted word*"]
    )
    code, out, _ = here(capsys, "run", shlex.join(["env", "--", *proxy]), "--", "-k", "MCA-REPLAY-001")
    assert code == pytest.ExitCode.TESTS_FAILED
    out.fnmatch_lines(["*1 failed, * deselected*"])


def test_run_of_the_whole_quoted_command_after_the_double_dash_audits_it(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    # Trial 17: the advice above followed with the -- kept (`run -- 'toolpermit wrap ... -- upstream'`)
    # took the whole line for one program's name: "target command '...' was not found on PATH".
    proxy = shlex.join(["env", "--", *shlex.split(target("--flaw", "no-ledger"))])
    code, out, _ = here(capsys, "run", "--", proxy, "--", "-k", "MCA-REPLAY-001")
    assert code == pytest.ExitCode.TESTS_FAILED
    out.fnmatch_lines(["*1 failed, * deselected*"])


def test_run_of_a_command_with_no_root_says_where_root_from_goes_and_that_way_works(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str]
) -> None:
    # A newcomer's first try puts the plugin's option where the server's command goes: the one line
    # shows `run`'s own shape, and the shape it shows audits a server that works in its current folder.
    code, _, err = here(capsys, "run", "--", "my-server", "--serve")
    assert code == pytest.ExitCode.USAGE_ERROR
    err.fnmatch_lines(["*no {root} placeholder*'run -- my-server -- --mcp-root-from cwd'*"])
    in_its_folder = [sys.executable, str(SERVER), "--root", "."]
    code, out, _ = here(
        capsys, "run", "--", *in_its_folder, "--", "--mcp-root-from", "cwd", "-k", "MCA-REPLAY-001"
    )
    assert code == pytest.ExitCode.OK
    out.fnmatch_lines(["*1 passed, * deselected*"])


def test_version_and_help_say_what_a_user_needs_and_nothing_internal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"mcp-confirm-audit {__version__}"
    with pytest.raises(SystemExit):
        main(["--help"])
    top = capsys.readouterr().out
    assert "_COMMANDS" not in top
    assert "run --help" in top
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    run_help = capsys.readouterr().out
    assert "Anything after `--` goes to pytest" in run_help
    assert "Exit 1 with findings is the expected outcome" in run_help
    for flag, _, _ in OPTIONS:
        assert flag in run_help
    assert "--mcp-strict" in run_help


HOSTILE = ROOT / "targets" / "hostile" / "server.py"


def test_init_of_a_target_whose_honest_flow_fails_writes_valid_yaml_and_no_answer_hint_if_it_never_asked(
    tmp_path: Path,
) -> None:
    # It dies on the first tools/call: it never sent input_required, so no
    # form template could help, and the detail it leaves is comment lines only.
    out = tmp_path / "target.yaml"
    command = shlex.join([sys.executable, str(HOSTILE), "--root", "{root}", "--mode", "crash-on-call"])
    assert main(["init", command, "-o", str(out)]) == 0
    text = out.read_text()
    assert "# The honest approve flow failed:" in text
    assert "answer:' template" not in text
    assert all(line.startswith("#") or ":" in line for line in text.splitlines())
    assert yaml.safe_load(text)["command"] == command


def test_init_comments_keep_every_line_of_a_multi_line_detail_a_comment() -> None:
    lines = _comment("accepted but nothing happened:\nline two\r\nline\u2028three")
    assert all(line.startswith("#") for line in lines)
    assert len(lines) == 4
    assert yaml.safe_load("\n".join([*lines, "name: x"])) == {"name": "x"}


def test_init_names_its_own_option_when_the_command_has_no_root(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "my-server --serve"]) == pytest.ExitCode.USAGE_ERROR
    err = capsys.readouterr().err
    assert "pass --root-from cwd" in err
    # The advice for run is run's own spelling (a trial pasted init's into run: "unrecognized arguments").
    assert "'run -- my-server -- --mcp-root-from cwd'" in err
    assert "-- --root-from" not in err


def test_a_human_channel_off_this_machine_is_a_one_line_usage_error(pytester: pytest.Pytester) -> None:
    # The harness is safe on a laptop: the person's requests go to loopback only.
    pytester.makefile(
        ".yaml",
        profile="command: srv --root {root}\n"
        "confirmation:\n"
        "  kind: pending\n"
        "  pending: {human: {http: {url: 'https://approvals.example.com/{id}', json: {decision: approved}}}}\n",
    )
    run = pytester.run(sys.executable, "-m", "mcp_confirm_audit.cli.main", "run", "--profile", "profile.yaml")
    assert run.ret == pytest.ExitCode.USAGE_ERROR
    [line] = [line for line in run.stderr.lines if line.strip()]
    assert line.startswith("ERROR: profile profile.yaml: confirmation.pending.human.http: 'url' must be ")
    assert "is not on loopback" in line


def test_init_drafts_an_action_that_names_no_file_with_its_arguments_and_where_its_effect_shows(
    tmp_path: Path,
) -> None:
    out = tmp_path / "payments.yaml"
    payments = ROOT / "targets" / "payments" / "server.py"
    assert (
        main(["init", shlex.join([sys.executable, str(payments), "--root", "{root}"]), "-o", str(out)]) == 0
    )
    text = out.read_text()
    assert "send_payment: audited (names no file; its effect seen through tool:list_payments)" in text
    assert "path_arg" not in text
    # What it drafts is a profile the harness loads as it stands.
    profile = load_profile(out)
    assert (profile.tool, sorted(profile.args or {})) == (
        "send_payment",
        ["amount_cents", "memo", "recipient"],
    )
    assert [spec.name for spec in profile.effect] == ["tool:list_payments"]


@pytest.mark.parametrize("given", ["Bearer ${ALICE_TOKEN}", "literal"], ids=["variable", "typed-in"])
def test_init_drafts_a_profile_for_an_authenticated_server_and_writes_no_credential(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    token = "alice-" + "x7" * 12
    monkeypatch.setenv("REFERENCE_TOKENS", f"alice={token}")
    monkeypatch.setenv("ALICE_TOKEN", token)
    options = [
        "--transport",
        "http",
        "--port",
        "{port}",
        "--auth",
        "bearer",
        "--tokens-env",
        "REFERENCE_TOKENS",
    ]
    command = target(*options)
    header = f"Authorization: {given if given != 'literal' else 'Bearer ' + token}"
    out = tmp_path / "target.yaml"
    assert main(["init", command, "--header", header, "-o", str(out)]) == 0
    text = out.read_text()
    assert token not in text
    assert "# Headers: export " in text
    written = yaml.safe_load(text)["headers"]["Authorization"]
    assert written == ("Bearer ${ALICE_TOKEN}" if given != "literal" else "Bearer ${AUTHORIZATION}")
    monkeypatch.setenv("AUTHORIZATION", token)
    profile = load_profile(out)
    assert (profile.tool, profile.headers[0].value) == ("delete_file", f"Bearer {token}")


def test_python_dash_m_runs_the_same_command() -> None:
    # A venv whose scripts are not on PATH (trial 15 ran `python -m mcp_confirm_audit` and got "No module named
    # mcp_confirm_audit.__main__"): the module is the command.
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "mcp_confirm_audit", "--version"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert __version__ in done.stdout
