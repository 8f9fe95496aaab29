"""What round 1 hands the client as `requestState`, and what round 2 makes of it.

Careful (`SealedState`): JSON naming the payment the payer was asked about and a
nonce. The SDK's `RequestStateBoundary` seals it on the wire, binds it to the tool
and every argument, and expires it; round 2 spends the nonce in the ledger (the
reference server's, by import), so one approval pays once.

FLAW unsealed-state (`UnsealedState`): the boundary is gone and the JSON travels as
it is. It still names the tool and the call's arguments (the SDK's binding, done by
hand), and the nonce is still spent, so what an edit buys is exactly what the seal
protected: the payment it names, which the server pays as written.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import ledger as ledgers
from payment_book import Order, Refused

__all__ = ["Call", "Scheme", "SealedState", "UnsealedState"]

_MALFORMED = "malformed confirmation state"
_SPENT = "this approval was already used or has expired; ask again"


@dataclass(frozen=True, slots=True)
class Call:
    """The tools/call being answered, its arguments as they came over the wire."""

    tool: str
    arguments: Mapping[str, Any]

    @property
    def canonical(self) -> str:
        return _canonical(self.arguments)


class Scheme(Protocol):
    async def mint(self, call: Call, order: Order) -> str: ...

    async def redeem(self, state: str, call: Call) -> Order:
        """The order the state names, its nonce spent; Refused if it cannot be honoured."""
        ...


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _parse(state: str) -> dict[str, Any]:
    try:
        data = json.loads(state)
    except ValueError:
        raise Refused(_MALFORMED) from None
    if not isinstance(data, dict) or not isinstance(data.get("nonce"), str):
        raise Refused(_MALFORMED)
    return data


def _order(data: Mapping[str, Any]) -> Order:
    payment = data.get("payment")
    transfer_id = data.get("transfer_id")
    if not isinstance(payment, Mapping) or not (transfer_id is None or isinstance(transfer_id, str)):
        raise Refused(_MALFORMED)
    recipient, amount, memo = payment.get("recipient"), payment.get("amount_cents"), payment.get("memo")
    if not (isinstance(recipient, str) and isinstance(memo, str)):
        raise Refused(_MALFORMED)
    if not isinstance(amount, int) or isinstance(amount, bool) or amount < 1:
        raise Refused(_MALFORMED)
    return Order(recipient, amount, memo, transfer_id)


async def _spend(ledger: ledgers.Ledger, nonce: str) -> None:
    if not await ledger.spend(nonce):
        raise Refused(_SPENT)


async def _new_nonce(ledger: ledgers.Ledger) -> str:
    nonce = secrets.token_urlsafe(16)
    await ledger.issue(nonce)
    return nonce


class SealedState:
    def __init__(self, ledger: ledgers.Ledger) -> None:
        self._ledger = ledger

    async def mint(self, call: Call, order: Order) -> str:
        nonce = await _new_nonce(self._ledger)
        return _canonical({"nonce": nonce, "payment": order.fields(), "transfer_id": order.transfer_id})

    async def redeem(self, state: str, call: Call) -> Order:
        data = _parse(state)
        order = _order(data)
        await _spend(self._ledger, data["nonce"])
        return order


class UnsealedState:
    """FLAW unsealed-state: readable, editable JSON, paid as written."""

    def __init__(self, ledger: ledgers.Ledger) -> None:
        self._ledger = ledger

    async def mint(self, call: Call, order: Order) -> str:
        nonce = await _new_nonce(self._ledger)
        return json.dumps(
            {
                "nonce": nonce,
                "tool": call.tool,
                "arguments": dict(call.arguments),
                "payment": order.fields(),
                "transfer_id": order.transfer_id,
            }
        )

    async def redeem(self, state: str, call: Call) -> Order:
        data = _parse(state)
        if data.get("tool") != call.tool or _canonical(data.get("arguments")) != call.canonical:
            raise Refused("the confirmation was for another call")
        order = _order(data)
        await _spend(self._ledger, data["nonce"])
        return order
