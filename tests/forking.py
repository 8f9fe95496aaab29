"""Python targets forked from a zygote of the SDK in the suite's in-process runs (tests/README.md).

Most of a Python server's start is its import of the SDK (about a second of CPU; a fork costs
milliseconds). An inner pytest run (`pytester.runpytest`) or a CLI command called in process
(`main([...])`) resolves its `--mcp-target` in the worker's own process: a test that takes the
`forked_targets` fixture (tests/conftest.py) gets each stdio target that is a script on this
interpreter with `zygote:` added, as the matrices' `forked()` does. Every process of the target is
still a real process, started, watched and stopped by the launcher; only the imports are shared.
Runs in a subprocess of their own (`runpytest_subprocess`, the CLI as a command) start their
targets as written: the hostile, docs and CLI-as-a-command tests keep proving that path.
"""

from __future__ import annotations

import dataclasses
import shlex
import sys

from mcp_confirm_audit.profile.loader import Profile

SDK_ZYGOTE = ("mcp.server.mcpserver",)


def with_zygote(profile: Profile) -> Profile:
    """`profile` with the SDK's zygote, when its target is a script on this interpreter over stdio."""
    stdio = not (profile.is_url or profile.is_in_process or profile.serves_http or profile.tty)
    script = shlex.split(profile.command)[:1] == [sys.executable]
    if not (stdio and script) or profile.zygote:
        return profile
    return dataclasses.replace(profile, zygote=SDK_ZYGOTE)
