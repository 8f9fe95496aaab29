"""What the read-only tools and create_transfer return: structured content (and its JSON text).

In a module of their own, imported by name, so pydantic resolves them however
server.py itself was loaded (as a script, or by file path without a module entry).
"""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["PaymentOut", "Payments", "Staged", "TransferOut", "Transfers"]


class PaymentOut(BaseModel):
    id: str
    recipient: str
    amount_cents: int
    memo: str


class Payments(BaseModel):
    payments: list[PaymentOut]


class TransferOut(BaseModel):
    transfer_id: str
    recipient: str
    amount_cents: int
    memo: str


class Transfers(BaseModel):
    transfers: list[TransferOut]


class Staged(BaseModel):
    transfer_id: str
