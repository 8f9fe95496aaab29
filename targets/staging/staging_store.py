"""What the two staging servers and the approver's CLI share: files under one root.

    ROOT/staged/ID.json     an invoice the stage server staged (vendor, amount)
    ROOT/approvals/ID.json  the person's decision, with the digest of what they read
    ROOT/codes/ID           the approval code the stage server showed its operator (--codes)
    ROOT/posted/ID          made once, exclusively, when the post server posts ID
    ROOT/ledger.jsonl       one line per posted invoice (what list_posted shows)

Nothing else connects the servers: each is its own process, and the person's
approval reaches the post server only through the root.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from pathlib import Path
from typing import Any

__all__ = ["Store"]

_ID = re.compile(r"^inv_[0-9a-f]{16}$")


class Refused(Exception):
    """A request a server turns down; its text becomes the tool error."""


class Store:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        for folder in ("staged", "approvals", "posted", "codes"):
            (self.root / folder).mkdir(exist_ok=True)

    def stage(self, vendor: str, amount_cents: int) -> dict[str, Any]:
        invoice = {
            "invoice_id": "inv_" + secrets.token_hex(8),
            "vendor": vendor,
            "amount_cents": amount_cents,
        }
        (self.root / "staged" / f"{invoice['invoice_id']}.json").write_text(
            json.dumps(invoice, sort_keys=True)
        )
        return invoice

    def staged(self, invoice_id: str) -> dict[str, Any]:
        if not _ID.match(invoice_id):
            raise Refused("not an invoice id")
        path = self.root / "staged" / f"{invoice_id}.json"
        if not path.is_file():
            raise Refused(f"no staged invoice {invoice_id}")
        data: dict[str, Any] = json.loads(path.read_text())
        return data

    def edit(self, invoice_id: str, vendor: str | None, amount_cents: int | None) -> dict[str, Any]:
        """Change a staged invoice's business fields (those given); what it is now."""
        invoice = self.staged(invoice_id)
        if vendor is not None:
            invoice["vendor"] = vendor
        if amount_cents is not None:
            invoice["amount_cents"] = amount_cents
        (self.root / "staged" / f"{invoice_id}.json").write_text(json.dumps(invoice, sort_keys=True))
        return invoice

    def staged_all(self) -> list[dict[str, Any]]:
        return [json.loads(p.read_text()) for p in sorted((self.root / "staged").glob("*.json"))]

    @staticmethod
    def digest(invoice: dict[str, Any]) -> str:
        return hashlib.sha256(json.dumps(invoice, sort_keys=True).encode()).hexdigest()

    def decide(self, invoice_id: str, decision: str) -> None:
        invoice = self.staged(invoice_id)
        record = {"invoice_id": invoice_id, "decision": decision, "digest": self.digest(invoice)}
        (self.root / "approvals" / f"{invoice_id}.json").write_text(json.dumps(record))

    def new_code(self, invoice_id: str) -> str:
        """A fresh approval code for ID, kept under the root for the post server's approval route."""
        code = f"{secrets.randbelow(10**6):06d}"
        (self.root / "codes" / invoice_id).write_text(code)
        return code

    def code_matches(self, invoice_id: str, code: str) -> bool:
        path = self.root / "codes" / invoice_id
        return path.is_file() and hmac.compare_digest(path.read_text().encode(), code.encode())

    def decision(self, invoice_id: str) -> dict[str, Any] | None:
        path = self.root / "approvals" / f"{invoice_id}.json"
        return json.loads(path.read_text()) if path.is_file() else None

    def claim(self, invoice_id: str) -> bool:
        """Mark ID posted, once: of two claims, exactly one gets True (O_EXCL)."""
        try:
            os.close(os.open(self.root / "posted" / invoice_id, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        except FileExistsError:
            return False
        return True

    def post(self, invoice: dict[str, Any]) -> None:
        with (self.root / "ledger.jsonl").open("a") as ledger:
            ledger.write(json.dumps(invoice, sort_keys=True) + "\n")

    def posted(self) -> list[dict[str, Any]]:
        path = self.root / "ledger.jsonl"
        if not path.is_file():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
