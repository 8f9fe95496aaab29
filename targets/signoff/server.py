"""Reference server: a payment desk whose owner signs every payment, answering as a payment gateway does.

    python targets/signoff/server.py --root DIR [--owner-argument ignored|refused|trusted]
        [--payees NAME,...] [--one-open]

Written in another style than the other reference servers, the way gateways
such as boundra-mcp answer: every reply is an object with a `decision` of
ALLOW, DENY or ASK and a list of `reasons`. `open_payment(payee, amount_cents)`
opens a payment and names it (`payment_id`); `pay(payment_id)` answers ASK with
a challenge naming that payment, a fresh nonce and an expiry; the owner signs
it in their wallet (wallet.py, Ed25519 under a key whose seed is in
SIGNOFF_OWNER_SEED, which the agent never sees) and `pay(payment_id,
approval=TOKEN)` pays it, once. Paid payments are written to ROOT/ledger.json
(`list_payments` reads it).

`pay` also takes `owner`, the identity (public key, hex) the approval is
checked against:
  --owner-argument ignored   the desk's own owner checks every approval; the argument is not read
  --owner-argument refused   an owner other than the desk's is refused before anything else
  --owner-argument trusted   FLAW (as boundra-mcp 0.1.1): the approval is checked against the owner
                             the caller names, so a caller who names itself signs for itself
Opening (each careful; they only make a second payment hard to open):
  --payees acme,...          only these payees (others: DENY, not on the allow-list)
  --one-open                 while a payment is open, open_payment hands back that one ("already open")
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import logging
import os
import secrets
import sys
import time
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

sys.path.insert(0, str(Path(__file__).resolve().parent))

from wallet import canonical, identity

OWNER_ARGUMENT = ("ignored", "refused", "trusted")
TTL = 300.0


def build_server(
    root: str | Path, *, owner_argument: str = "ignored", payees: str = "", one_open: bool = False
) -> MCPServer:
    ledger = Path(root) / "ledger.json"
    if not ledger.exists():
        ledger.write_text("{}")
    desk_owner = identity(os.environ["SIGNOFF_OWNER_SEED"])
    open_payments: dict[str, dict[str, Any]] = {}
    issued: set[str] = set()
    server = MCPServer("signoff-reference")

    def decision(action: str, *reasons: str, **extra: Any) -> dict[str, Any]:
        return {"decision": action, "reasons": list(reasons), **extra}

    def verified(token: str, owner: str) -> tuple[dict[str, Any] | None, str]:
        """The challenge `token` carries, if `owner` signed it; else why not."""
        try:
            carried = json.loads(base64.urlsafe_b64decode(token.encode()))
            challenge, sig = carried["challenge"], bytes.fromhex(carried["sig"])
            Ed25519PublicKey.from_public_bytes(bytes.fromhex(owner)).verify(sig, canonical(challenge))
        except InvalidSignature:
            return None, "the approval is not signed by the owner"
        except (ValueError, KeyError, TypeError, binascii.Error):
            return None, "the approval token is malformed"
        return challenge, ""

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def list_payments() -> dict[str, Any]:
        """Every payment made (read-only)."""
        return {"payments": json.loads(ledger.read_text())}

    @server.tool()
    def open_payment(payee: str, amount_cents: int) -> dict[str, Any]:
        """Open a payment to `payee`; `pay` sends it once the owner approves."""
        allowed = [p for p in payees.split(",") if p]
        if allowed and payee not in allowed:
            return decision("DENY", f"{payee} is not on this desk's allow-list of payees")
        if open_payments and one_open:
            held = next(iter(open_payments))
            return decision("ALLOW", "a payment is already open", payment_id=held)
        payment_id = f"pay_{secrets.token_hex(4)}"
        open_payments[payment_id] = {"payee": payee, "amount_cents": amount_cents}
        return decision("ALLOW", "opened", payment_id=payment_id)

    @server.tool()
    def pay(payment_id: str, owner: str | None = None, approval: str | None = None) -> dict[str, Any]:
        """Send an open payment. Without `approval` it answers ASK with a challenge for the owner to sign
        in their wallet; call again with approval=<the signed token>. `owner`: the approver's identity."""
        payment = open_payments.get(payment_id)
        if payment is None:
            return decision("DENY", f"no open payment {payment_id}")
        if owner is not None and owner != desk_owner and owner_argument == "refused":
            return decision(
                "DENY", "approvals on this desk come from its configured owner, not from an argument"
            )
        if approval is None:
            nonce = secrets.token_hex(8)
            issued.add(nonce)
            challenge = {"payment_id": payment_id, **payment, "nonce": nonce, "exp": time.time() + TTL}
            return decision("ASK", "the owner signs every payment", challenge=challenge)
        approver = (
            owner if owner is not None and owner_argument == "trusted" else desk_owner
        )  # FLAW if trusted
        challenge, why = verified(approval, approver)
        if challenge is None:
            return decision("DENY", why)
        wanted = {"payment_id": payment_id, **payment}
        if {k: challenge.get(k) for k in wanted} != wanted:
            return decision("DENY", "the approval is for another payment")
        if challenge.get("nonce") not in issued:
            return decision("DENY", "the approval was already used or never issued")
        if time.time() > float(challenge.get("exp", 0)):
            return decision("DENY", "the approval expired")
        issued.discard(challenge["nonce"])
        paid = json.loads(ledger.read_text())
        paid[payment_id] = {**payment, "approved_by": approver[:16]}
        ledger.write_text(json.dumps(paid, sort_keys=True))
        del open_payments[payment_id]
        return decision("ALLOW", "paid", payment_id=payment_id)

    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--owner-argument", default="ignored", choices=OWNER_ARGUMENT)
    parser.add_argument("--payees", default="", help="the allow-list of payees, comma-separated")
    parser.add_argument("--one-open", action="store_true")
    args = parser.parse_args()
    build_server(
        args.root, owner_argument=args.owner_argument, payees=args.payees, one_open=args.one_open
    ).run()


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
