"""The corpus manifest's servers and cases as profiles: settings, several servers, a deadline scale."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mcp_confirm_audit.cli.corpus import Manifest, profile_of, settings_of

TARGETS = Path("/t")


def _manifest(server: dict[str, object], case: dict[str, object]) -> Manifest:
    return Manifest.model_validate(
        {"servers": {"s": server}, "cases": [{"id": "s/c", "server": "s", "careful": True, **case}]}
    )


def test_settings_take_the_interpreter_the_targets_and_where_the_flags_go() -> None:
    manifest = _manifest(
        {
            "command": "{python} {targets}/post.py --root {root}",
            "settings": {"servers": {"post": "{python} {targets}/post.py --root {root} {flags}"}},
        },
        {"flags": ["--flaw", "posts-twice"], "settings": {"tool": "stage"}},
    )
    settings = settings_of(manifest, manifest.cases[0], TARGETS)
    assert settings["servers"] == {"post": f"{sys.executable} /t/post.py --root {{root}} --flaw posts-twice"}
    assert settings["tool"] == "stage"


def test_a_case_setting_wins_over_its_servers() -> None:
    manifest = _manifest({"command": "x --root {root}", "settings": {"ttl": 1.0}}, {"settings": {"ttl": 2.0}})
    assert settings_of(manifest, manifest.cases[0], TARGETS) == {"ttl": 2.0}


def test_the_scale_stretches_the_harnesss_deadlines_and_never_the_servers_lifetime() -> None:
    manifest = _manifest(
        {
            "command": "srv --root {root}",
            "call_timeout": 10,
            "settings": {"ttl_flag": "--ttl {ttl}", "ttl": 1.0},
        },
        {},
    )
    plain = profile_of(manifest, manifest.cases[0], TARGETS)
    scaled = profile_of(manifest, manifest.cases[0], TARGETS, scale=4)
    assert (scaled.call_timeout, scaled.start_timeout) == (40, plain.start_timeout * 4)
    assert scaled.ttl == plain.ttl == 1.0


@pytest.mark.parametrize(
    ("server", "case", "said"),
    [
        ({"command": "x", "profile": "p.yaml", "settings": {"ttl": 1}}, {}, "a profile or has settings"),
        ({"command": "x", "profile": "p.yaml"}, {"settings": {"ttl": 1}}, "put settings in that profile"),
    ],
)
def test_settings_beside_a_profile_are_refused_in_one_line(
    server: dict[str, object], case: dict[str, object], said: str
) -> None:
    with pytest.raises(ValueError, match=said):
        _manifest(server, case)


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ({"skip": ["self-approval"]}, "says why"),
        ({"skip": ["self-approval"], "families": ["consent"], "why": "w"}, "skip: is for a careful case"),
        ({"careful": False, "skip": ["self-approval"], "expect": {"MCA-X-001": ["weak"]}}, "skip: is for"),
    ],
    ids=["skip-without-why", "skip-beside-families", "skip-on-a-flawed-case"],
)
def test_a_careful_case_that_skips_families_says_why_and_lists_no_families(
    case: dict[str, object], said: str
) -> None:
    with pytest.raises(ValueError, match=said):
        _manifest({"command": "x"}, case)
    whole = _manifest({"command": "x"}, {"skip": ["self-approval"], "why": "by design"})
    assert whole.cases[0].skip == ["self-approval"]


def test_a_corpus_worker_keeps_an_in_process_targets_rich_log_handler_out() -> None:
    # In a process of its own, as a worker of the pool: the SDK's server configures logging when built.
    check = (
        "import logging\n"
        "from mcp_confirm_audit.cli.corpus import plain_logging\n"
        "from mcp.server.mcpserver.utilities.logging import configure_logging\n"
        "plain_logging()\n"
        "configure_logging('INFO')\n"
        "root = logging.getLogger()\n"
        "print([type(h).__name__ for h in root.handlers], logging.getLevelName(root.level))\n"
    )
    shown = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, check=True).stdout
    assert shown.split() == ["['StreamHandler']", "WARNING"]
