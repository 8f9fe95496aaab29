"""Reference server whose confirmed action names no file and confirms without MRTR: a robot arm.

    python targets/robot_arm/server.py --root DIR --mechanism token|pending [--flaw NAME ...]

`move_joint(joint, degrees)` turns one joint of an arm kept in this process's
memory; `jog_joint` (a manual jog, confirmed the same way) does the same. The
effect is seen only through the read-only `arm_status`, which shows the joints,
every move made, and the moves waiting for approval:
- token: `dry_run: true` previews the move and returns a `confirm_token`, bound
  to the tool and its arguments and spent once; the call that carries it moves.
- pending: the call stages the move and returns a `pending_id` (listed as waiting
  in `arm_status`: bookkeeping, not a move); only the human's decision
  (targets/confirm_kinds/approve_cli.py, writing into `--inbox`) lets
  `execute_pending` move the arm.
`set_policy` is there for both: the agent may tighten it, never loosen it.
The gates and the flaw switches are the confirm-kinds server's (each `--flaw`
removes exactly one defence; see targets/confirm_kinds/kind_flaws.py), on an
action that is not a file: the same flaws must be found through a read-only
tool as through the disk.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

_HERE = Path(__file__).resolve().parent
_KINDS = _HERE.parent / "confirm_kinds"
if str(_KINDS) not in sys.path:
    sys.path.insert(0, str(_KINDS))

import approvals  # noqa: E402
import gates  # noqa: E402
import kind_flaws as flaw_switches  # noqa: E402
from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.server.request_state import RequestStateSecurity  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402
from pydantic import Field  # noqa: E402

__all__ = ["MECHANISMS", "build_server", "main"]

MECHANISMS = ("token", "pending")
# The confirm-kinds flaws that weaken a gate rather than a path.
ARM_FLAWS = frozenset(
    {
        "predictable-token",
        "predictable-issued-token",
        "pipe-joined-token",
        "deterministic-keyed-token",
        "reusable-token",
        "token-not-bound-to-args",
        "agent-approval",
        "loosening-policy-tool",
        "ungated-second-tool",
    }
)
_TOOLS = ("move_joint", "jog_joint")
Joint = Annotated[Literal["base", "shoulder", "elbow", "wrist"], Field(description="Which joint turns.")]
Degrees = Annotated[int, Field(ge=1, le=45, description="How far it turns, in degrees.")]
_MOVES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)


@dataclass
class Arm:
    """The arm's joints and every move made, as `arm_status` shows them."""

    joints: dict[str, int] = field(
        default_factory=lambda: dict.fromkeys(("base", "shoulder", "elbow", "wrist"), 0)
    )
    moves: list[dict[str, Any]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def move(self, tool: str, joint: str, degrees: int) -> dict[str, Any]:
        with self._lock:
            self.joints[joint] += degrees
            made = {"move": len(self.moves) + 1, "by": tool, "joint": joint, "degrees": degrees}
            self.moves.append(made)
        return {"moved": made, "joints": dict(self.joints)}


def build_server(
    root: str | Path, *, mechanism: str = "token", flaws: Collection[str] = (), inbox: str | None = None
) -> MCPServer:
    if mechanism not in MECHANISMS:
        raise ValueError(f"--mechanism must be one of {', '.join(MECHANISMS)}, got {mechanism!r}")
    active = flaw_switches.check(flaws, mechanism)
    if about_files := sorted(active - ARM_FLAWS):
        raise ValueError(f"flaw(s) {about_files} are about files; the arm has {', '.join(sorted(ARM_FLAWS))}")
    arm = Arm()
    rules = gates.Policy(active)
    server = MCPServer(f"robot-arm-{mechanism}", request_state_security=RequestStateSecurity.ephemeral())

    def ungated(tool: str) -> bool:
        return tool == "jog_joint" and "ungated-second-tool" in active  # FLAW ungated-second-tool

    waiting: dict[str, dict[str, Any]] = {}
    if mechanism == "token":
        _token_tools(server, gates.TokenStore(active), rules, arm, ungated)
    else:
        where = Path(inbox) if inbox else Path(root).resolve().parent / "approvals"
        _pending_tools(server, gates.PendingStore(where), rules, arm, ungated, active, waiting)

    def set_policy(auto_approve_under_degrees: int) -> str:
        """Set the move size under which the arm moves without confirmation (the confirmation threshold)."""
        try:
            return rules.set(auto_approve_under_degrees)
        except gates.Refused as exc:
            raise ToolError(str(exc)) from None

    server.add_tool(set_policy, name="set_policy", annotations=ToolAnnotations(read_only_hint=False))

    def arm_status() -> dict[str, Any]:
        """The joints, every move made, and the moves waiting for approval."""
        return {"joints": dict(arm.joints), "moves": list(arm.moves), "waiting": list(waiting.values())}

    server.add_tool(arm_status, name="arm_status", annotations=ToolAnnotations(read_only_hint=True))
    return server


def _token_tools(
    server: MCPServer, store: gates.TokenStore, rules: gates.Policy, arm: Arm, ungated: Any
) -> None:
    def make(_tool: str) -> Any:
        def handler(
            joint: Joint, degrees: Degrees, dry_run: bool = False, confirm_token: str | None = None
        ) -> dict[str, Any]:
            arguments = {"joint": joint, "degrees": degrees}
            if ungated(_tool):
                return arm.move(_tool, joint, degrees)
            if dry_run:
                token = store.issue(_tool, arguments)
                return {
                    "status": "preview",
                    "would_turn": joint,
                    "by_degrees": degrees,
                    "confirm_token": token,
                }
            if confirm_token is None:
                if rules.waives(degrees):
                    return arm.move(_tool, joint, degrees)
                raise ToolError(
                    "confirmation required: call with dry_run: true, then again with its confirm_token"
                )
            try:
                store.redeem(confirm_token, _tool, arguments)
            except gates.Refused as exc:
                raise ToolError(str(exc)) from None
            return arm.move(_tool, joint, degrees)

        return handler

    for tool in _TOOLS:
        _add(
            server,
            make(tool),
            tool,
            "Preview with dry_run: true, then confirm with the confirm_token it returns.",
        )


def _pending_tools(
    server: MCPServer,
    store: gates.PendingStore,
    rules: gates.Policy,
    arm: Arm,
    ungated: Any,
    active: frozenset[str],
    waiting: dict[str, dict[str, Any]],
) -> None:
    def make(_tool: str) -> Any:
        def handler(joint: Joint, degrees: Degrees) -> dict[str, Any]:
            if ungated(_tool) or rules.waives(degrees):
                return arm.move(_tool, joint, degrees)
            # The store keeps one string per staged action: here the move, as JSON.
            pending_id = store.stage(_tool, json.dumps({"joint": joint, "degrees": degrees}))
            waiting[pending_id] = {"pending_id": pending_id, "by": _tool, "joint": joint, "degrees": degrees}
            return {
                "status": "pending_approval",
                "pending_id": pending_id,
                "message": "Awaiting your approval.",
                "next_steps": "A human approves it on the approval channel; then call execute_pending.",
            }

        return handler

    for tool in _TOOLS:
        _add(server, make(tool), tool, "Stages the move; a human approves it, then execute_pending moves.")

    def execute_pending(pending_id: str) -> dict[str, Any]:
        try:
            tool, staged = store.release(pending_id)
        except gates.Refused as exc:
            raise ToolError(str(exc)) from None
        waiting.pop(pending_id, None)
        move = json.loads(staged)
        return arm.move(tool, move["joint"], move["degrees"])

    server.add_tool(execute_pending, name="execute_pending", annotations=_MOVES)
    if "agent-approval" in active:
        approvals.add_agent_approve_tool(server, store)


def _add(server: MCPServer, handler: Any, name: str, how: str) -> None:
    what = "Turns" if name == "move_joint" else "Jogs"
    server.add_tool(handler, name=name, description=f"{what} one joint of the arm. {how}", annotations=_MOVES)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", required=True, metavar="DIR")
    parser.add_argument("--mechanism", default="token", choices=MECHANISMS)
    parser.add_argument("--inbox", metavar="DIR", help="pending: where the human's decisions are written")
    names = sorted(ARM_FLAWS)
    parser.add_argument("--flaw", action="append", default=[], choices=names, metavar="NAME", help=f"{names}")
    args = parser.parse_args(argv)
    try:
        server = build_server(args.root, mechanism=args.mechanism, flaws=args.flaw, inbox=args.inbox)
    except ValueError as exc:
        parser.error(str(exc))
    server.run(transport="stdio")


if __name__ == "__main__":
    main()
