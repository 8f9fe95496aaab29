"""The container image (Dockerfile) audits a URL target: `docker run IMAGE --mcp-target URL ...`.

Its entry point is `mcp-confirm-audit run --`, so what follows the image name
goes to pytest; the first test runs exactly those words without a container,
everywhere. The smoke test builds the image and runs it against a reference
server on the host's loopback: it needs a running container runtime and a
base image it can pull, and says which is missing when it skips.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from deadline import deadline

REPO = Path(__file__).resolve().parents[2]
SERVER = REPO / "targets" / "reference" / "server.py"
IMAGE = "mcp-confirm-audit:smoke-test"
SELECTED = ["-k", "control or MCA-REPLAY-001", "-p", "no:cacheprovider"]


def _entry_point() -> list[str]:
    for line in (REPO / "Dockerfile").read_text().splitlines():
        if line.startswith("ENTRYPOINT "):
            return list(json.loads(line.removeprefix("ENTRYPOINT ")))
    raise AssertionError("the Dockerfile has no ENTRYPOINT")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A careful reference server over HTTP on loopback, serving a directory of its own."""
    root = tmp_path / "served"
    root.mkdir()
    os.chmod(root, 0o777)  # the image's unprivileged user writes its cases here
    port = _free_port()
    command = [sys.executable, str(SERVER), "--root", str(root), "--transport", "http", "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        until = time.monotonic() + deadline(20)
        while True:
            assert process.poll() is None, "the reference server exited before it listened"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                assert time.monotonic() < until, "the reference server did not listen"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp", root
    finally:
        process.terminate()
        process.wait(timeout=10)


def _audit_words(url: str, root: Path, out: Path) -> list[str]:
    return ["--mcp-target", url, "--mcp-root", str(root), "--mcp-report-dir", str(out), *SELECTED]


def test_the_images_entry_point_audits_a_url_target_with_the_words_docker_run_passes(
    served: tuple[str, Path], tmp_path: Path
) -> None:
    url, root = served
    program, *fixed = _entry_point()
    assert (program, fixed) == ("mcp-confirm-audit", ["run", "--"])
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mcp_confirm_audit.cli.main",
            *fixed,
            *_audit_words(url, root, tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        timeout=deadline(300),
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads((tmp_path / "out" / "audit.json").read_text())
    assert [(r["id"], r["verdict"]) for r in report["results"]] == [("MCA-REPLAY-001", "refused")]


def _runtime_or_skip() -> str:
    docker = shutil.which("docker")
    if docker is None:
        pytest.skip("no container runtime: docker is not on PATH (the image is not smoke-tested here)")
    info = subprocess.run([docker, "info"], capture_output=True, text=True, timeout=deadline(60))
    if info.returncode != 0:
        said = (info.stderr.strip().splitlines() or ["docker info failed"])[-1]
        pytest.skip(f"the container runtime is not usable here: {said}")
    return docker


def test_the_image_builds_and_audits_a_url_target_on_the_hosts_loopback(
    served: tuple[str, Path], tmp_path: Path
) -> None:
    docker = _runtime_or_skip()
    build = subprocess.run(
        [docker, "build", "-t", IMAGE, str(REPO)], capture_output=True, text=True, timeout=900
    )
    if build.returncode != 0:
        said = "\n".join(build.stderr.strip().splitlines()[-5:])
        if any(
            word in said
            for word in (
                "pull access denied",
                "failed to resolve",
                "dial tcp",
                "TLS handshake",
                "no such host",
            )
        ):
            pytest.skip(f"the base image (FROM in the Dockerfile) cannot be pulled here: {said}")
        pytest.fail(f"docker build failed:\n{said}")
    url, root = served
    out = tmp_path / "out"
    out.mkdir()
    os.chmod(out, 0o777)
    try:
        mounts = ["-v", f"{root}:{root}", "-v", f"{out}:/out"]
        audit = ["--mcp-target", url, "--mcp-root", str(root), "--mcp-report-dir", "/out", *SELECTED]
        run = subprocess.run(
            [docker, "run", "--rm", "--network", "host", *mounts, IMAGE, *audit],
            capture_output=True,
            text=True,
            timeout=deadline(600),
        )
    finally:
        subprocess.run([docker, "image", "rm", "-f", IMAGE], capture_output=True, timeout=deadline(120))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    report = json.loads((out / "audit.json").read_text())
    assert [(r["id"], r["verdict"]) for r in report["results"]] == [("MCA-REPLAY-001", "refused")]
