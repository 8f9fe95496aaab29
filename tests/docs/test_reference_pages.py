"""The docs site's generated reference pages are what the code writes now, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcp_confirm_audit.cli import reference
from mcp_confirm_audit.cli.main import main
from mcp_confirm_audit.plugin import OPTIONS

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("page", sorted(reference.PAGES))
def test_a_generated_reference_page_is_not_stale(page: str) -> None:
    committed = (DOCS / page).read_text(encoding="utf-8")
    assert committed == reference.PAGES[page](), f"docs/{page} is stale: run `{reference.COMMAND}`"


def test_the_generator_writes_every_page_where_the_site_reads_it(tmp_path: Path) -> None:
    assert reference.main([str(tmp_path)]) == 0
    for page, render in reference.PAGES.items():
        assert (tmp_path / page).read_text(encoding="utf-8") == render()


def test_the_cli_page_lists_every_subcommand_and_every_plugin_option() -> None:
    page = reference.cli_markdown()
    for command in ("run", "init", "replay", "baseline", "fleet", "merge", "catalogue", "schema"):
        assert f"\n## {command}\n" in page
    for flag, _, _ in OPTIONS:
        assert f"`{flag}" in page
    assert "`--mcp-strict` | `mcp_strict` |" in page
    assert "`mcp_header` (one a line)" in page


def test_the_exit_code_table_covers_every_code_an_audit_can_end_with() -> None:
    codes = [int(code) for code, _, _ in reference.EXIT_CODES]
    assert codes == sorted(set(codes))
    assert set(codes) >= {int(code) for code in pytest.ExitCode if code <= pytest.ExitCode.NO_TESTS_COLLECTED}


def test_a_usage_error_exits_with_the_code_the_table_gives_it(capsys: pytest.CaptureFixture[str]) -> None:
    meaning = {int(code): text for code, text, _ in reference.EXIT_CODES}
    assert "usage error" in meaning[main(["run"])]
    with pytest.raises(SystemExit) as exited:
        main(["catalogue", "--no-such-option"])
    assert isinstance(exited.value.code, int)
    assert "usage error" in meaning[exited.value.code]
    assert "--no-such-option" in capsys.readouterr().err
