"""The action's first step: install mcp-confirm-audit beside the server the job installed.

A composite action, not a container: the server under audit is installed in
the job's own Python, and the audit must start it from there. `version` is a
PyPI release (`0.1.0`); empty, the action's own checkout is installed, so a
workflow pinned to a commit of the action audits with that commit.

Inputs arrive only through the environment (MCA_VERSION, GITHUB_ACTION_PATH),
never interpolated into a shell line.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence

# A release number, nothing a shell or pip would read as an option, a path or a URL.
_RELEASE = re.compile(r"^[0-9]+(\.[0-9]+)*([ab]|rc|\.post|\.dev)?[0-9]*$")


def requirement(environ: Mapping[str, str]) -> str:
    version = environ.get("MCA_VERSION", "").strip()
    if not version:
        return environ["GITHUB_ACTION_PATH"]
    if not _RELEASE.match(version):
        raise SystemExit(
            f"mcp-confirm-audit action: version {version!r} must be a release number, e.g. 0.1.0"
        )
    return f"mcp-confirm-audit=={version}"


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    wanted = requirement(os.environ if environ is None else environ)
    return subprocess.call([sys.executable, "-m", "pip", "install", "--quiet", wanted])


if __name__ == "__main__":
    sys.exit(main())
