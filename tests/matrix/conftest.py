"""Run the audit against the reference servers, as real stdio subprocesses."""

from __future__ import annotations

import dataclasses
import os
import pickle
import shlex
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import pytest
from deadline import deadline, scaled
from once import once

from mcp_confirm_audit.catalogue.generation import CI_SEED, Generation
from mcp_confirm_audit.catalogue.loader import Catalogue, load_catalogue
from mcp_confirm_audit.engine.session import AuditRun, run_audit
from mcp_confirm_audit.models import AttackSpec
from mcp_confirm_audit.profile.loader import Profile
from mcp_confirm_audit.target.zygote import keep_zygotes

ROOT = Path(__file__).resolve().parents[2]
REFERENCE_SERVER = ROOT / "targets" / "reference" / "server.py"
HOSTILE_SERVER = Path(__file__).resolve().parents[2] / "targets" / "hostile" / "server.py"
# Every flaw is caught by a named example; generated names add breadth, and a
# fixed seed keeps the matrix the same on every run. (Three per attack cut a whole-catalogue
# audit's round trips by a fifth, 384 to 307, but no time measurably: ten are kept.)
MATRIX_GENERATION = Generation(examples=10, seed=CI_SEED)
# Where every name asked about is a step of the person's, a process of its own (the command that shows
# them a pending request, a terminal's prompt): as many names, but a failing generated one is reported as
# drawn, not shrunk (as test_elsewhere.py's). These tests read which attack a flaw fools, never how small
# its name is (shrinking has its proof in tests/unit/test_generated_search.py), and each smaller
# candidate is another step: a flow whose preview names no file took 330 of them, 85 without.
PERSON_STEPS_GENERATION = dataclasses.replace(MATRIX_GENERATION, shrink_tries=0)
# Most of a Python target's start is its import of the SDK (about a second of CPU, a fork costs
# milliseconds), and one audit starts several processes: the primary, a fresh one for each input
# that stopped it, one per era asked for, a client that declares no elicitation... `zygote:`
# imports the SDK once per audit and forks each of them. Every one is still a real process of its
# own, started, watched and stopped through the launcher; test_transports.py keeps the plain start over HTTP.
SDK_ZYGOTE = ("mcp.server.mcpserver",)


@pytest.fixture(scope="session", autouse=True)
def one_zygote_per_worker() -> Iterator[None]:
    # The matrices run hundreds of audits: one zygote of the SDK serves them all (each process
    # still forked fresh for its world), where one each cost a second of CPU per audit.
    with keep_zygotes():
        yield


def forked(profile: Profile) -> Profile:
    """`profile` with the SDK's zygote, when its target is a script on this interpreter over stdio.

    Every matrix profile passes here, so its deadlines are scaled here too (tests/deadline.py).
    """
    profile = scaled(profile)
    stdio = not (profile.is_url or profile.is_in_process or profile.serves_http or profile.tty)
    script = shlex.split(profile.command)[:1] == [sys.executable]
    if not (stdio and script) or profile.zygote:
        return profile
    return dataclasses.replace(profile, zygote=SDK_ZYGOTE)


def reference_command(*options: str) -> str:
    return shlex.join([sys.executable, str(REFERENCE_SERVER), "--root", "{root}", *options])


T = TypeVar("T")
Shared = Callable[[str, Callable[[], T]], T]


@pytest.fixture(scope="session")
def across_workers(tmp_path_factory: pytest.TempPathFactory) -> Shared[Any]:
    """`share(key, compute)`: `compute()` once per run, whichever xdist worker asks first.

    A module-scoped fixture runs once per worker, and CI's `--dist worksteal` spreads the tests
    that read one audit over all of them: the same audit ran up to four times. `once()` (tests/once.py)
    makes it in the first worker that asks and the others read it (pickled); the folder is new on every
    run, so nothing is ever read from an earlier one. An audit that raises leaves nothing behind: the
    next worker to ask runs it again.
    """

    def share(key: str, compute: Callable[[], Any]) -> Any:
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in key)
        folder = once(
            tmp_path_factory,
            f"matrix-{name}",
            lambda made: (made / "value.pickle").write_bytes(pickle.dumps(compute())),
        )
        return pickle.loads((folder / "value.pickle").read_bytes())

    return share


@pytest.fixture(scope="session")
def generation() -> Generation:
    return MATRIX_GENERATION


@pytest.fixture(scope="session")
def catalogue() -> Catalogue:
    return load_catalogue()


AuditFn = Callable[..., AuditRun]


@pytest.fixture(scope="session")
def audit_reference(catalogue: Catalogue) -> AuditFn:
    """Audit the reference server started with the given options; one process per call."""

    def audit(
        *options: str,
        families: Sequence[str] | None = None,
        tool: str | None = "delete_file",
        zygote: bool = True,
        **settings: Any,
    ) -> AuditRun:
        """`settings` are profile keys (replicas, ttl_flag...); `command` replaces the stdio one.

        `zygote=False` starts every process with its own interpreter, as a profile without `zygote:` does.
        """
        command = settings.pop("command", None) or reference_command(*options)
        profile = Profile(command=command, tool=tool, call_timeout=10.0, **settings)
        profile = forked(profile) if zygote else scaled(profile)

        def select(spec: AttackSpec) -> bool:
            return families is None or spec.family in families

        return run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)

    return audit


@pytest.fixture(scope="session")
def audit_hostile(catalogue: Catalogue) -> AuditFn:
    """Audit the hostile reference server in one --mode: the careful server with one misbehaviour."""

    def audit(mode: str) -> AuditRun:
        command = shlex.join([sys.executable, str(HOSTILE_SERVER), "--root", "{root}", "--mode", mode])
        # Short: a reliable hang costs two timeouts, and one is enough to tell.
        profile = forked(Profile(command=command, tool="delete_file", call_timeout=2.0))
        return run_audit(profile, catalogue=catalogue, generation=MATRIX_GENERATION)

    return audit


# The README's command regenerating the checked-in review of mcp-confirm (the PyPI server the demo extra pins).
REGENERATE = "mcp-confirm-audit run --profile targets/mcp-confirm.yaml --report-dir reports/mcp-confirm"


@pytest.fixture(scope="session")
def readme_review(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding what REGENERATE, word for word, wrote (into `report/`), its exit code and its output.

    Made once per run (tests/once.py) for every test that reads it: test_checked_in_review.py compares it with
    the checked-in review, test_mcp_confirm.py asserts what the audit of mcp-confirm must find. Not under CI=true
    (a user's shell has no CI): the profile's own seed makes it deterministic.
    """
    from mcp_confirm_audit.profile.loader import beside_interpreter

    def make(folder: Path) -> None:
        words = REGENERATE.split()
        words[0] = beside_interpreter(words[0])
        words[-1] = str(folder / "report")
        env = {k: v for k, v in os.environ.items() if k != "CI"}
        done = subprocess.run(
            words, cwd=ROOT, env=env, capture_output=True, text=True, timeout=deadline(300), check=False
        )
        (folder / "returncode").write_text(str(done.returncode))
        (folder / "output").write_text(done.stdout[-2000:] + done.stderr[-2000:])

    return once(tmp_path_factory, "readme-review", make)
