"""Reference server that zero configuration must reach: a booking desk with strict arguments.

    python targets/desk/server.py --root DIR [--asks mrtr|decision-ask|needs-confirm|pending-approval]
        [--world consumes|keeps] [--review-tool] [--flaw NAME ...]

What stands between a harness and its gate, each seen on a real server:
- `book(plan_id)` needs a plan that only `plan_booking` mints, and `plan_booking`
  is declared read-only (it only computes a plan);
- `plan_booking` refuses what a person would never type: a slot that is not one
  `list_slots` offers, a phone number that is not E.164, a date before today;
  `list_slots` declares no output schema, so the slot ids are only in its result;
- with `--world consumes` (the default) a booked slot stays booked: the next
  plan for it fails ("slot S-101 is already booked") in the same process;
- `--asks` says how `book` asks: an MRTR question through the SDK (sealed state,
  a nonce spent on first use; only to a client that declared form elicitation), or a payload of its own in an ordinary result:
  `{"decision": "ASK", "ticket": ...}` answered by `book(plan_id, ticket=...)`,
  `{"needs_confirm": true, "confirmation": ...}` answered by `confirmation=`, or
  `{"pending_approval": true, "ref": ...}` approved by the person
  (`approve_cli.py`-style decision file in `--inbox`) and executed by
  `execute_booking(ref)`; with `--approval acts` the person's approval is itself the booking (it is
  made when the desk next reads its queue), and there is no execute step. With `--review-tool`
  (pending-approval) the desk also offers the agent `approve_booking(ref)`, which refuses a request it
  holds ("approving is the person's"), as index-memory-vault's `approve_memory` does unless its admin
  allows agent review, and an unknown ref as "unknown request".
  A ticket or confirmation is bound to its plan and spent once.
Every booking is a row of ROOT/bookings.json, also shown by `list_bookings`.

Flaws (each removes one defence):
  decline-acts     (mrtr) a declined or cancelled question books anyway; (pending-approval with
                   --approval acts) a booking the person declined (`{ref}.declined`) is made anyway
  ticket-reuse     (decision-ask, needs-confirm) a ticket is never spent
  agent-approves   (pending-approval) `approve_booking(ref)` lets the agent approve its own request
                   (with `--approval acts`, its approval is the booking, as the person's is)
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import re
import secrets
import sys
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.request_state import RequestStateSecurity
from mcp.types import (
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    ToolAnnotations,
)
from pydantic import BaseModel, Field

_REFERENCE = str(Path(__file__).resolve().parents[1] / "reference")
if _REFERENCE not in sys.path:
    sys.path.insert(0, _REFERENCE)

from capabilities import require_form_elicitation  # noqa: E402

ASKS = ("mrtr", "decision-ask", "needs-confirm", "pending-approval")
FLAWS = ("decline-acts", "ticket-reuse", "agent-approves")
SLOTS = ("S-101", "S-102", "S-103")
E164 = r"^\+[1-9]\d{6,14}$"
_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False)
_WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)


class Plan(BaseModel):
    plan_id: str
    slot_id: str
    phone: str
    date: str


def build_server(
    root: str | Path,
    *,
    asks: str = "mrtr",
    world: str = "consumes",
    flaws: frozenset[str] = frozenset(),
    inbox: str | Path | None = None,
    approval: str = "then-execute",
    review_tool: bool = False,
) -> MCPServer:
    table = Path(root) / "bookings.json"
    decisions = Path(inbox) if inbox is not None else Path(root).parent / "desk-inbox"
    if not table.exists():
        table.write_text("[]")
    decisions.mkdir(parents=True, exist_ok=True)
    plans: dict[str, Plan] = {}
    nonces: set[str] = set()
    tickets: dict[str, str] = {}  # ticket -> plan_id, spent on use
    waiting: dict[str, str] = {}  # ref -> plan_id, until the person decides
    approved: set[str] = set()
    server = MCPServer("desk-reference", request_state_security=RequestStateSecurity.ephemeral(ttl=300))

    def bookings() -> list[dict[str, Any]]:
        return list(json.loads(table.read_text()))

    def booked(slot: str) -> bool:
        return world == "consumes" and any(b["slot_id"] == slot for b in bookings())

    def make_booking(plan: Plan) -> dict[str, Any]:
        if booked(plan.slot_id):
            raise ToolError(f"slot {plan.slot_id} is already booked")
        rows = bookings()
        row = {"booking": f"B-{len(rows) + 1}", **plan.model_dump()}
        table.write_text(json.dumps([*rows, row]))
        return {"booked": True, **row}

    def decided() -> None:
        """`--approval acts`: what the person approved is booked, with no call of the agent's."""
        if approval != "acts":
            return
        # The flaw reads any decision as a yes: the person's "no" books too.
        said = (".approved", ".declined") if "decline-acts" in flaws else (".approved",)
        for ref in [
            r for r in waiting if r in approved or any((decisions / f"{r}{kind}").exists() for kind in said)
        ]:
            make_booking(plans[waiting.pop(ref)])

    @server.tool(annotations=_READ_ONLY)
    def list_slots() -> dict[str, Any]:
        """The slots a booking can take, and whether each is free."""
        decided()
        return {"slots": [{"slot_id": s, "free": not booked(s)} for s in SLOTS]}

    @server.tool(annotations=_READ_ONLY)
    def list_bookings() -> dict[str, Any]:
        """Every booking made."""
        decided()
        return {"bookings": bookings()}

    @server.tool(annotations=_READ_ONLY)
    def plan_booking(
        slot_id: Annotated[str, Field(pattern=r"^S-\d{3}$", description="A slot, as list_slots names it")],
        phone: Annotated[str, Field(pattern=E164, description="Who to call back, in E.164")],
        date: Annotated[str, Field(json_schema_extra={"format": "date"}, description="Today or later")],
    ) -> Plan:
        """Plan a booking (computes a plan; books nothing). Returns the plan_id that book needs."""
        if slot_id not in SLOTS:
            raise ToolError(f"no slot {slot_id!r}: list_slots names them")
        if booked(slot_id):
            raise ToolError(f"slot {slot_id} is already booked")
        if not re.match(E164, phone):
            raise ToolError(f"not an E.164 phone number: {phone!r}")
        try:
            day = dt.date.fromisoformat(date)
        except ValueError:
            raise ToolError(f"not a date: {date!r}") from None
        if day < dt.date.today():
            raise ToolError(f"{date} is in the past")
        plan = Plan(plan_id=secrets.token_hex(8), slot_id=slot_id, phone=phone, date=date)
        plans[plan.plan_id] = plan
        return plan

    def plan_of(plan_id: str) -> Plan:
        if plan_id not in plans:
            raise ToolError(f"no plan {plan_id!r}: plan_booking makes one")
        return plans[plan_id]

    if asks == "mrtr":

        @server.tool(annotations=_WRITES)
        async def book(plan_id: str, ctx: Context) -> dict[str, Any] | InputRequiredResult:
            """Book a planned slot, after the user confirms."""
            plan = plan_of(plan_id)
            answer = (ctx.input_responses or {}).get("book")
            if answer is None:
                require_form_elicitation(ctx.client_capabilities)
                nonce = secrets.token_hex(16)
                nonces.add(nonce)
                form = {"type": "object", "properties": {"yes": {"type": "boolean"}}, "required": ["yes"]}
                question = f"Book slot `{plan.slot_id}` on `{plan.date}` for `{plan.phone}`?"
                request = ElicitRequest(
                    params=ElicitRequestFormParams(mode="form", message=question, requested_schema=form)
                )
                return InputRequiredResult(input_requests={"book": request}, request_state=nonce)
            if ctx.request_state not in nonces:
                raise ToolError("that confirmation is unknown or already used")
            nonces.discard(ctx.request_state)
            if not isinstance(answer, ElicitResult):
                raise ToolError("the answer is not an elicitation result")
            declined = answer.action != "accept" or (answer.content or {}).get("yes") is not True
            if declined and not ("decline-acts" in flaws and answer.action != "accept"):
                return {"booked": False, "reason": "declined"}
            return make_booking(plan)

    elif asks in ("decision-ask", "needs-confirm"):
        field = "ticket" if asks == "decision-ask" else "confirmation"

        def ask_or_book(plan_id: str, given: str | None) -> dict[str, Any]:
            plan = plan_of(plan_id)
            if given is None:
                ticket = secrets.token_hex(12)
                tickets[ticket] = plan_id
                said = f"Book slot {plan.slot_id} on {plan.date}? Ask the user, then call again with {field}."
                if asks == "decision-ask":
                    return {"decision": "ASK", "reason": said, field: ticket}
                return {"needs_confirm": True, "message": said, field: ticket}
            if tickets.get(given) != plan_id:
                raise ToolError(f"that {field} is unknown, spent, or for another plan")
            if "ticket-reuse" not in flaws:
                del tickets[given]
            return make_booking(plan)

        if asks == "decision-ask":

            @server.tool(annotations=_WRITES)
            def book(plan_id: str, ticket: str | None = None) -> dict[str, Any]:
                """Book a planned slot. The first call asks (decision: ASK); call again with its ticket."""
                return ask_or_book(plan_id, ticket)

        else:

            @server.tool(annotations=_WRITES)
            def book(plan_id: str, confirmation: str | None = None) -> dict[str, Any]:  # type: ignore[misc]
                """Book a planned slot. The first call needs_confirm; call again with its confirmation."""
                return ask_or_book(plan_id, confirmation)

    else:

        @server.tool(annotations=_WRITES)
        def book(plan_id: str) -> dict[str, Any]:  # type: ignore[misc]
            """Request a booking; a person approves it, then execute_booking makes it."""
            plan_of(plan_id)
            ref = secrets.token_hex(8)
            waiting[ref] = plan_id
            return {"pending_approval": True, "ref": ref, "message": "waiting for the desk's approval"}

        def execute_booking(ref: str) -> dict[str, Any]:
            """Make a booking the person approved."""
            if ref not in waiting:
                raise ToolError("unknown or already executed request")
            if ref not in approved and not (decisions / f"{ref}.approved").exists():
                raise ToolError("not approved yet")
            plan_id = waiting.pop(ref)
            return make_booking(plans[plan_id])

        if approval == "then-execute":
            server.tool(annotations=_WRITES)(execute_booking)

        if "agent-approves" in flaws or review_tool:

            @server.tool(annotations=_WRITES)
            def approve_booking(ref: str) -> dict[str, Any]:
                """Approve a waiting booking request (the person's to approve, at the desk)."""
                if ref not in waiting:
                    raise ToolError("unknown request")
                if "agent-approves" not in flaws:
                    raise ToolError(
                        f"approving is the person's: they approve {ref} at the desk, not the agent"
                    )
                approved.add(ref)  # FLAW agent-approves: the agent approves what it asked for
                return {"approved": True, "ref": ref}

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--asks", choices=ASKS, default="mrtr")
    parser.add_argument("--world", choices=("consumes", "keeps"), default="consumes")
    parser.add_argument("--inbox", default=None)
    parser.add_argument("--approval", choices=("then-execute", "acts"), default="then-execute")
    parser.add_argument("--review-tool", action="store_true")
    parser.add_argument("--flaw", action="append", default=[], choices=FLAWS)
    args = parser.parse_args()
    build_server(
        args.root,
        asks=args.asks,
        world=args.world,
        flaws=frozenset(args.flaw),
        inbox=args.inbox,
        approval=args.approval,
        review_tool=args.review_tool,
    ).run()


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
