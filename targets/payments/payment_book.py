"""The server's books: staged transfers and sent payments, in this process's memory only.

A fresh process starts with empty books. Payments are seen only through the
read-only tools (and the webhook, if one is set). No method awaits, so on one event
loop each is atomic: of two executions of one staged transfer, exactly one finds it.
"""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass

from payment_question import inline

__all__ = ["Book", "Order", "Payment", "Refused"]


class Refused(Exception):
    """A request the server turns down; its text becomes the tool error."""


@dataclass(frozen=True, slots=True)
class Order:
    """What a payment will do: what the payer is asked about, and what is paid."""

    recipient: str
    amount_cents: int
    memo: str
    transfer_id: str | None = None  # the staged transfer it executes (handle shape)

    def fields(self) -> dict[str, str | int]:
        return {"recipient": self.recipient, "amount_cents": self.amount_cents, "memo": self.memo}


@dataclass(frozen=True, slots=True)
class Payment:
    id: str
    recipient: str
    amount_cents: int
    memo: str

    def as_json(self) -> dict[str, str | int]:
        return asdict(self)


class Book:
    def __init__(self) -> None:
        self._payments: list[Payment] = []
        self._drafts: dict[str, Order] = {}
        self._executed: set[str] = set()

    @property
    def payments(self) -> list[Payment]:
        return list(self._payments)

    @property
    def drafts(self) -> list[Order]:
        return list(self._drafts.values())

    def pay(self, order: Order) -> Payment:
        return self._record(f"pay-{len(self._payments) + 1:04d}", order)

    def stage(self, recipient: str, amount_cents: int, memo: str) -> str:
        transfer_id = "tr_" + secrets.token_hex(8)
        self._drafts[transfer_id] = Order(recipient, amount_cents, memo, transfer_id)
        return transfer_id

    def draft(self, transfer_id: str) -> Order:
        found = self._drafts.get(transfer_id)
        if found is None:
            raise Refused(self._why_not(transfer_id))
        return found

    def execute(self, transfer_id: str, order: Order) -> Payment:
        """Move the staged transfer into the payments, paying `order` (what the payer approved)."""
        if self._drafts.pop(transfer_id, None) is None:
            raise Refused(self._why_not(transfer_id))
        self._executed.add(transfer_id)
        return self._record(transfer_id, order)

    def _record(self, payment_id: str, order: Order) -> Payment:
        payment = Payment(payment_id, order.recipient, order.amount_cents, order.memo)
        self._payments.append(payment)
        return payment

    def _why_not(self, transfer_id: str) -> str:
        shown = inline(transfer_id)  # the id came from the client
        if transfer_id in self._executed:
            return f"transfer '{shown}' was already executed"
        return f"unknown transfer id '{shown}'"
