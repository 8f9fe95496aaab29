"""A server on the old SDK (`mcp<2`, FastMCP), audited as PyPI's servers are: from an environment of its own.

The harness stays an mcp 2.3 client; the target runs under another interpreter
whose `mcp` predates 2026-07-28 and knows only the handshake, so zero
configuration must find that era and the back-channel questions by itself. The
interpreter is a venv this test builds once and keeps under its own folder
(`tests/matrix/.old-sdk/`, ignored by git); a venv that cannot be built fails
the test, it is never skipped. On CI the folder is always new, so the venv is
built small: no pip of its own, the old `mcp` and the few packages it needs that
the harness's environment lacks installed from the registry without their
dependencies, and the harness's site-packages behind them (a `.pth` file) for
the rest (pydantic, starlette, anyio, ... at the versions installed here).
"""

from __future__ import annotations

import fcntl
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from conftest import MATRIX_GENERATION
from deadline import deadline

from mcp_confirm_audit.catalogue.loader import Catalogue
from mcp_confirm_audit.engine.session import run_audit
from mcp_confirm_audit.models import AttackSpec, Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping

LEGACY_SERVER = Path(__file__).resolve().parents[2] / "targets" / "legacy" / "server.py"
CACHE = Path(__file__).resolve().parent / ".old-sdk"
# Elicitation came to the Python SDK in 1.9; the last 1.x is what PyPI's servers pin today.
# The rest: what mcp 1.x needs that mcp 2's environment does not have (httpx, not httpx2; its
# settings). Everything else it needs (regex for the reference servers' question sanitiser too)
# comes from the harness's site-packages.
REQUIREMENTS = (
    "mcp>=1.10,<2",
    "httpx>=0.27,<1",
    "httpcore>=1,<2",
    "httpx-sse>=0.4",
    "pydantic-settings>=2.5.2",
    "python-dotenv>=1",
)
BUILD_TIMEOUT = 600


def _old_sdk_python() -> Path:
    """The cached venv's interpreter, built under a lock (pytest-xdist workers may ask at once)."""
    CACHE.mkdir(exist_ok=True)
    venv = CACHE / "venv"
    python = venv / "bin" / "python"
    ready = CACHE / "ready"
    with (CACHE / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if python.exists() and ready.exists() and ready.read_text() == " ".join(REQUIREMENTS):
            return python
        try:
            subprocess.run(
                [sys.executable, "-m", "venv", "--clear", "--without-pip", str(venv)],
                check=True,
                timeout=deadline(120),
            )
            own = Path(
                subprocess.run(
                    [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                    check=True,
                    capture_output=True,
                    text=True,
                    timeout=deadline(60),
                ).stdout.strip()
            )
            # After its own site-packages: the old mcp shadows the harness's mcp 2.
            (own / "harness.pth").write_text(sysconfig.get_path("purelib") + "\n")
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "install",
                    "-q",
                    "--no-deps",
                    "--target",
                    str(own),
                    *REQUIREMENTS,
                ],
                check=True,
                timeout=BUILD_TIMEOUT,
                capture_output=True,
                text=True,
            )
        except (subprocess.SubprocessError, OSError) as exc:
            detail = getattr(exc, "stderr", "") or str(exc)
            pytest.fail(
                f"could not build the {' '.join(REQUIREMENTS)} venv in {CACHE}: {detail.strip()[-600:]}"
            )
        ready.write_text(" ".join(REQUIREMENTS))
    return python


@pytest.fixture(scope="module")
def old_sdk() -> Path:
    python = _old_sdk_python()
    version = subprocess.run(
        # FastMCP imports what a server of that era needs (pydantic-settings, starlette, uvicorn, httpx).
        [str(python), "-c", "import importlib.metadata as m, mcp.server.fastmcp; print(m.version('mcp'))"],
        check=True,
        capture_output=True,
        text=True,
        timeout=deadline(60),
    ).stdout.strip()
    assert version.startswith("1."), f"the old SDK venv has mcp {version}"
    return python


@pytest.mark.parametrize("flaw", [None, "decline-as-accept"])
def test_zero_configuration_audits_an_old_sdk_server_over_the_handshake(
    catalogue: Catalogue, old_sdk: Path, flaw: str | None
) -> None:
    words = [str(old_sdk), str(LEGACY_SERVER), "--root", "{root}", *(["--flaw", flaw] if flaw else [])]
    profile = profile_from_mapping({"command": shlex.join(words), "call_timeout": 6.0}, source="test")

    def select(spec: AttackSpec) -> bool:
        return spec.family in ("consent", "symlink-swap", "protocol-downgrade")

    run = run_audit(profile, catalogue=catalogue, select=select, generation=MATRIX_GENERATION)
    assert all(c.passed for c in run.controls if c.name == "approve"), run.controls
    results = run.by_id()
    assert {(r.mechanism, r.era) for r in run.results} == {("elicitation", "2025-11-25")}
    # The old server speaks no 2026-07-28: the downgrade between eras cannot be tried, and says so.
    assert {r.verdict for r in run.results if r.family == "protocol-downgrade"} == {Verdict.NOT_APPLICABLE}
    assert results["MCA-SYMLINK-001"].verdict is Verdict.REFUSED
    declined = results["MCA-CONSENT-001"].verdict
    assert declined is (Verdict.VULNERABLE if flaw else Verdict.REFUSED)
    if flaw is None:
        assert not [r.id for r in run.results if r.verdict in (Verdict.VULNERABLE, Verdict.WEAK)]
