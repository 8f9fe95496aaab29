"""Reference server whose confirmed action names no file and confirms without MRTR: a robot arm.

    python targets/robot_arm/server.py --root DIR --mechanism token|pending [--flaw NAME ...] [--pose-file NAME]

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
With `--pose-file NAME` the arm also keeps its pose in a plain-text file under the
root, written in the arm controller's own style: a line per joint, rewritten in
place, and a line per move appended. One move changes two lines of it: a race is
counted in moves, not in lines (another style of careful server, not a flaw).
The gates and the flaw switches are the confirm-kinds server's (each `--flaw`
removes exactly one defence; see targets/confirm_kinds/kind_flaws.py), on an
action that is not a file: the same flaws must be found through a read-only
tool as through the disk. Two switches are the arm's own (ARM_ONLY_FLAWS):
`emergency-stop-tool` adds a tool beside the careful gate (not a flaw of the gate:
nothing may be found because of it), `loosening-own-operator` lets each operator
loosen its own rules.
"""

from __future__ import annotations

import argparse
import json
import logging
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
        "wrong-guess-burns",
        "gate-off",
    }
)
# The arm's own switches (not the confirm-kinds server's): what each adds or removes.
ARM_ONLY_FLAWS: dict[str, str] = {
    "emergency-stop-tool": "an emergency_stop tool beside the careful gate: it stops the arm, recorded in "
    "arm_status, and changes no rule of the gate (nothing may be found because of it)",
    "loosening-own-operator": "moves name their operator, and set_policy loosens the rules of the operator it "
    "names (its own): '*' is a name like any other, not every operator",
}
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
    # Emergency stops, when the arm has the tool (emergency-stop-tool).
    stops: list[dict[str, Any]] | None = None
    # Where the pose is also written as text (`--pose-file`), if anywhere.
    pose_file: Path | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def move(self, tool: str, joint: str, degrees: int) -> dict[str, Any]:
        with self._lock:
            self.joints[joint] += degrees
            made = {"move": len(self.moves) + 1, "by": tool, "joint": joint, "degrees": degrees}
            self.moves.append(made)
            self.write_pose()
        return {"moved": made, "joints": dict(self.joints)}

    def write_pose(self) -> None:
        if self.pose_file is None:
            return
        lines = [f"{joint} {angle}" for joint, angle in self.joints.items()]
        lines += [f"move {m['move']}: {m['by']} {m['joint']} +{m['degrees']}" for m in self.moves]
        self.pose_file.write_text("\n".join(lines) + "\n")


def build_server(
    root: str | Path,
    *,
    mechanism: str = "token",
    flaws: Collection[str] = (),
    inbox: str | None = None,
    pose_file: str | None = None,
) -> MCPServer:
    if mechanism not in MECHANISMS:
        raise ValueError(f"--mechanism must be one of {', '.join(MECHANISMS)}, got {mechanism!r}")
    own = frozenset(flaws) & ARM_ONLY_FLAWS.keys()
    active = flaw_switches.check(set(flaws) - own, mechanism)
    if about_files := sorted(active - ARM_FLAWS):
        raise ValueError(f"flaw(s) {about_files} are about files; the arm has {', '.join(sorted(ARM_FLAWS))}")
    if "loosening-own-operator" in own and mechanism != "token":
        raise ValueError("loosening-own-operator is a flaw of the token mechanism")
    arm = Arm(
        stops=[] if "emergency-stop-tool" in own else None,
        pose_file=Path(root).resolve() / pose_file if pose_file else None,
    )
    arm.write_pose()
    rules: gates.Policy | _PerOperator = gates.Policy(active)
    if "loosening-own-operator" in own:
        rules = _PerOperator()
    server = MCPServer(f"robot-arm-{mechanism}", request_state_security=RequestStateSecurity.ephemeral())

    def ungated(tool: str) -> bool:
        return tool == "jog_joint" and "ungated-second-tool" in active  # FLAW ungated-second-tool

    waiting: dict[str, dict[str, Any]] = {}
    if mechanism == "token":
        _token_tools(server, gates.TokenStore(active), rules, arm, ungated, "loosening-own-operator" in own)
    else:
        where = Path(inbox) if inbox else Path(root).resolve().parent / "approvals"
        assert isinstance(rules, gates.Policy)  # loosening-own-operator is the token mechanism's alone
        _pending_tools(
            server,
            gates.PendingStore(where, burns_on_wrong_id="wrong-guess-burns" in active),
            rules,
            arm,
            ungated,
            active,
            waiting,
        )

    def set_policy(auto_approve_under_degrees: int) -> str:
        """Set the move size under which the arm moves without confirmation (the confirmation threshold)."""
        try:
            return rules.set(auto_approve_under_degrees)
        except gates.Refused as exc:
            raise ToolError(str(exc)) from None

    def set_operator_policy(operator: Operator, auto_approve_under_degrees: int) -> str:
        """Set, for one operator, the move size under which the arm moves without confirmation."""
        assert isinstance(rules, _PerOperator)
        return rules.set_for(operator, auto_approve_under_degrees)  # FLAW loosening-own-operator

    loosen_own = "loosening-own-operator" in own
    server.add_tool(
        set_operator_policy if loosen_own else set_policy,
        name="set_policy",
        annotations=ToolAnnotations(read_only_hint=False),
    )

    def emergency_stop(reason: Annotated[str, Field(description="Why the arm is stopped.")]) -> str:
        """Safety policy: stop the arm at once, whatever the limits and rules of motion would allow."""
        assert arm.stops is not None
        arm.stops.append({"stop": len(arm.stops) + 1, "reason": reason})
        return "Emergency stop: the arm is halted (new moves are still confirmed as usual)."

    if arm.stops is not None:
        server.add_tool(
            emergency_stop, name="emergency_stop", annotations=ToolAnnotations(read_only_hint=False)
        )

    def arm_status() -> dict[str, Any]:
        """The joints, every move made, and the moves waiting for approval."""
        status = {"joints": dict(arm.joints), "moves": list(arm.moves), "waiting": list(waiting.values())}
        return status if arm.stops is None else {**status, "stops": list(arm.stops)}

    server.add_tool(arm_status, name="arm_status", annotations=ToolAnnotations(read_only_hint=True))
    return server


@dataclass
class _PerOperator:
    """FLAW loosening-own-operator: each operator's own threshold, which that operator may raise."""

    under: dict[str, int] = field(default_factory=dict)

    def set(self, auto_approve_under_degrees: int) -> str:
        raise gates.Refused("name the operator whose policy this is")

    def set_for(self, operator: str, auto_approve_under_degrees: int) -> str:
        self.under[operator] = auto_approve_under_degrees
        return f"auto_approve_under_degrees is now {auto_approve_under_degrees} for {operator}"

    def waives(self, degrees: int, operator: str = "") -> bool:
        return degrees < self.under.get(operator, 0)


Operator = Annotated[str, Field(description="Who moves the arm (the operator's name).")]


def _token_tools(
    server: MCPServer,
    store: gates.TokenStore,
    rules: gates.Policy | _PerOperator,
    arm: Arm,
    ungated: Any,
    per_operator: bool = False,
) -> None:
    def make(_tool: str) -> Any:
        def core(
            joint: str, degrees: int, dry_run: bool, confirm_token: str | None, operator: str | None
        ) -> dict[str, Any]:
            arguments: dict[str, Any] = {"joint": joint, "degrees": degrees}
            if operator is not None:
                arguments["operator"] = operator
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
                waived = (
                    rules.waives(degrees, operator or "")
                    if isinstance(rules, _PerOperator)
                    else rules.waives(degrees)
                )
                if waived:
                    return arm.move(_tool, joint, degrees)
                raise ToolError(
                    "confirmation required: call with dry_run: true, then again with its confirm_token"
                )
            try:
                store.redeem(confirm_token, _tool, arguments)
            except gates.Refused as exc:
                raise ToolError(str(exc)) from None
            return arm.move(_tool, joint, degrees)

        def handler(
            joint: Joint, degrees: Degrees, dry_run: bool = False, confirm_token: str | None = None
        ) -> dict[str, Any]:
            return core(joint, degrees, dry_run, confirm_token, None)

        def by_operator(
            joint: Joint,
            degrees: Degrees,
            operator: Operator,
            dry_run: bool = False,
            confirm_token: str | None = None,
        ) -> dict[str, Any]:
            return core(joint, degrees, dry_run, confirm_token, operator)

        return by_operator if per_operator else handler

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
    parser.add_argument(
        "--pose-file", metavar="NAME", help="also keep the pose as text in this file under the root"
    )
    names = sorted(ARM_FLAWS | ARM_ONLY_FLAWS.keys())
    parser.add_argument("--flaw", action="append", default=[], choices=names, metavar="NAME", help=f"{names}")
    args = parser.parse_args(argv)
    try:
        server = build_server(
            args.root, mechanism=args.mechanism, flaws=args.flaw, inbox=args.inbox, pose_file=args.pose_file
        )
    except ValueError as exc:
        parser.error(str(exc))
    server.run(transport="stdio")


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
