"""`out-of-root`: paths the server must never act on, and should never ask about.

Absolute paths outside, `../` traversal, the sibling that shares the root's
name as a prefix, a link in the root that already points outside, the root
itself, a directory, a NUL byte, an overlong path hiding a climb. Asking the user about one
of these and refusing afterwards is weak: the question itself is misleading.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from ..models import Outcome
from . import technique
from .base import Attack


@technique("out-of-root")
async def out_of_root(attack: Attack, params: Mapping[str, Any]) -> None:
    if not attack.file_only():
        return
    case = attack.case
    target = params["target"]
    root = attack.sandbox.root
    absolute = attack.style == "absolute"
    if target == "absolute-outside":
        value = str(case.outside_canary)
    elif target == "traversal":
        inner = os.path.relpath(case.outside_canary, root)
        value = f"{root}/{inner}" if absolute else inner
    elif target == "sibling-prefix":
        if not attack.sandbox.sibling_shares_prefix:
            attack.not_applicable(
                "the target serves a root the harness did not make, and a folder named like it would have "
                "to be written outside the sandbox"
            )
            return
        value = str(case.sibling_canary) if absolute else os.path.relpath(case.sibling_canary, root)
    elif target == "link-outside":
        link = case.directory / "link-to-outside.txt"
        link.symlink_to(case.outside_canary)
        value = attack.path_value(link)
    elif target == "root-itself":
        value = str(root) if absolute else "."
    elif target == "directory":
        value = attack.path_value(case.directory)
    elif target == "nul-byte":
        value = attack.path_value(case.victim) + "\x00.png"
    elif target == "overlong":
        # Thousands of "./" then a climb out: length must not smuggle a
        # traversal past checks that give up on long input.
        climb = os.path.relpath(case.outside_canary, root)
        padding = "./" * (int(params.get("length", 3000)) // 2)
        value = f"{root}/{padding}{climb}" if absolute else f"{padding}{climb}"
    else:
        raise ValueError(f"out-of-root: unknown target {target!r}")
    await attack.start_attack()
    first = await attack.call("name a path that must never be allowed", value)
    if first.outcome is Outcome.INPUT_REQUIRED and first.questions:
        # It asked. Answer yes, as a user who trusts the dialog would.
        await attack.call(
            "accept the question", value, state=first.request_state, responses=attack.accept(first, value)
        )
