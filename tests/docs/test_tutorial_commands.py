"""The tutorial's commands, run as written in a folder beside a clone: each ends as the page says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown_blocks import REPO, blocks, commands, newcomer_env, newcomer_folder, run

TUTORIAL = REPO / "docs" / "tutorial"


def _shown(page: str, index: int) -> list[str]:
    """The lines of the page's `text` block number `index`, each a line the reader is told to expect."""
    return [line.strip() for line in blocks(page, "text")[index].splitlines() if line.strip()]


def _unnumbered(text: str) -> str:
    """`text` without the case folders' numbers (`root/011-mca-...`): they count the attacks before it,
    which a new family matching the page's `-k` shifts; the finding and its evidence are what matter.
    Likewise an entry's index in a listing (`payments[2]`): each earlier attack that paid adds one."""
    return re.sub(r"(\.\w+)\[\d+\]", r"\1[N]", re.sub(r"\broot/\d+-", "root/N-", text))


def test_your_first_audit_refuses_on_the_careful_server_and_finds_the_flaw(tmp_path: Path) -> None:
    page = (TUTORIAL / "first-audit.md").read_text(encoding="utf-8")
    _, careful, flawed = (commands(b) for b in blocks(page))
    here = newcomer_folder(tmp_path)
    # The careful run's selection: its controls, the line the page shows (each attack's refusal on the
    # careful server is the detection matrix's); the flawed run's command line selects its own.
    env = newcomer_env("control")
    (careful_line,) = careful
    done = run(careful_line, here, env)
    assert done.returncode == pytest.ExitCode.OK, done.stdout[-2000:]
    assert _shown(page, 0)[0] in done.stdout
    assert (here / "first-audit" / "review.md").is_file()
    (flawed_line,) = flawed
    done = run(flawed_line, here, env)
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout[-2000:]
    assert all(_unnumbered(line) in _unnumbered(done.stdout) for line in _shown(page, 2)[:3])
    assert "3 failed" in done.stdout
    assert (here / "flawed" / "review.md").is_file()


def test_your_first_profile_sees_the_payment_and_the_replayed_approval(tmp_path: Path) -> None:
    page = (TUTORIAL / "first-profile.md").read_text(encoding="utf-8")
    (init,), (audit,) = (commands(b) for b in blocks(page))
    draft, profile = blocks(page, "yaml")
    here = newcomer_folder(tmp_path)
    env = newcomer_env("control or REPLAY or CONSENT")
    done = run(init, here, env)
    assert done.returncode == 0, done.stderr
    written = (here / "payments.yaml").read_text()
    assert all(line in written for line in draft.splitlines() if line.startswith("#   "))
    (here / "payments.yaml").write_text(profile)
    done = run(audit, here, env)
    assert done.returncode == pytest.ExitCode.OK, done.stdout[-2000:]
    assert all(line in done.stdout for line in _shown(page, 0))
    # Step 4: the same profile with --flaw no-ledger added to its command.
    (here / "payments.yaml").write_text(profile.replace("--shape handle", "--shape handle --flaw no-ledger"))
    done = run(audit, here, env)
    assert done.returncode == pytest.ExitCode.TESTS_FAILED, done.stdout[-2000:]
    assert all(_unnumbered(line) in _unnumbered(done.stdout) for line in _shown(page, 1))
