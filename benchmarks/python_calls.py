"""The in-process audit against its floor, counted in Python calls rather than timed.

    python benchmarks/python_calls.py [py:FILE:factory]

Wall and CPU time on a shared two-core machine move by tens of percent from one run to the
next; the number of Python-level calls (functions and builtins, every thread) an audit makes
does not. This runs one audit and one floor (`bench`'s: the audit's own requests again) after
a warm-up, counts the calls of each with a profile hook, and splits them into those made inside
the SDK's round trips (client and in-process server together: the work the floor pays as well)
and the rest (the harness's own). The floor is counted from its clock's start to its end, as
`bench` times it: the files its requests name are made before. A count is no time (a builtin
call can cost more than a Python one), but the ratio moves with what the harness does and
nothing else, so a cut that removes calls shows here whatever the machine's load.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

from mcp.client.session import ClientSession

from mcp_confirm_audit.catalogue.loader import load_catalogue
from mcp_confirm_audit.cli import bench
from mcp_confirm_audit.profile.loader import resolve_profile

_ROUND_TRIPS = ("call_tool", "send_request", "list_tools")


class Counter:
    def __init__(self) -> None:
        self.inside = self.outside = 0
        self._in_sdk = threading.local()

    def hook(self, frame: FrameType, event: str, arg: Any) -> None:
        if event in ("call", "c_call"):
            if getattr(self._in_sdk, "depth", 0):
                self.inside += 1
            else:
                self.outside += 1

    def around(self, method: Any) -> Any:
        @functools.wraps(method)
        async def counted(*args: Any, **kwargs: Any) -> Any:
            self._in_sdk.depth = getattr(self._in_sdk, "depth", 0) + 1
            try:
                return await method(*args, **kwargs)
            finally:
                self._in_sdk.depth -= 1

        return counted

    def start(self) -> None:
        threading.setprofile(self.hook)  # any thread the session starts (a world started ahead, a retiring one)
        sys.setprofile(self.hook)

    def stop(self) -> None:
        sys.setprofile(None)
        threading.setprofile(None)


def main(target: str) -> None:
    os.environ.setdefault("CI", "true")  # the generators' seeds fixed, as bench's runs are
    profile = replace(resolve_profile(None, target, None), ablation=False)
    catalogue = load_catalogue()
    selected = list(catalogue.active)
    counter = Counter()
    for name in _ROUND_TRIPS:
        setattr(ClientSession, name, counter.around(getattr(ClientSession, name)))
    floor = bench._floor

    async def counted_floor(*args: Any) -> None:
        counter.start()
        try:
            await floor(*args)
        finally:
            counter.stop()

    bench._floor = counted_floor  # type: ignore[assignment]
    with bench._quiet_in_process(profile):
        cost = bench.audit_once(profile, catalogue, selected)  # the warm-up: imports, caches
        bench.floor_timed(profile, cost, cost.processes_started)
        counter.inside = counter.outside = 0
        bench.floor_timed(profile, cost, cost.processes_started)
        floor_calls = (counter.inside, counter.outside)
        counter.inside = counter.outside = 0
        counter.start()
        try:
            bench.audit_once(profile, catalogue, selected)
        finally:
            counter.stop()
        audit_calls = (counter.inside, counter.outside)
    for name, (inside, outside) in (("audit", audit_calls), ("floor", floor_calls)):
        print(f"{name}: {inside + outside} calls, {inside} in its round trips, {outside} outside them")
    audit, floor_total = sum(audit_calls), sum(floor_calls)
    print(f"ratio: {audit / floor_total:.2f}x (round trips {audit_calls[0] / floor_calls[0]:.3f}x)")


if __name__ == "__main__":
    default = f"py:{Path(__file__).resolve().parent.parent}/targets/reference/server.py:build_server"
    main(sys.argv[1] if len(sys.argv) > 1 else default)
