"""The outbound notice: one JSON POST per payment, to a loopback URL only.

The URL comes from `--webhook` or from `webhook_url:` in `config.yaml` (or
`config.json`) inside the root, so a profile's `files:` can point it at a sink.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import anyio.to_thread
import yaml
from payment_book import Payment

__all__ = ["TIMEOUT_SECONDS", "Webhook", "from_root"]

TIMEOUT_SECONDS = 3.0
log = logging.getLogger("mcp_payments_reference")


def _loopback(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if parts.scheme != "http" or not loopback:
        raise ValueError(f"the webhook must be an http:// URL on a loopback host, got {url!r}")
    return url


class Webhook:
    def __init__(self, url: str) -> None:
        self.url = _loopback(url)

    async def send(self, payment: Payment) -> None:
        """POST the payment; a failure is logged, never raised (the payment has happened)."""
        body = json.dumps({"event": "payment", **payment.as_json()}).encode()
        try:
            await anyio.to_thread.run_sync(self._post, body)
        except (OSError, urllib.error.URLError) as exc:
            log.warning("webhook %s failed: %s", self.url, exc)

    def _post(self, body: bytes) -> None:
        request = urllib.request.Request(
            self.url, data=body, method="POST", headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            response.read()


def from_root(root: Path) -> str | None:
    """`webhook_url` from ROOT/config.yaml or ROOT/config.json, if either sets one."""
    for name in ("config.yaml", "config.json"):
        path = root / name
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        try:
            data = json.loads(text) if name.endswith(".json") else yaml.safe_load(text)
        except (ValueError, yaml.YAMLError) as exc:
            raise ValueError(f"{path}: not valid {name.rsplit('.', 1)[1].upper()}: {exc}") from None
        url = data.get("webhook_url") if isinstance(data, dict) else None
        if url is not None and not isinstance(url, str):
            raise ValueError(f"{path}: webhook_url must be a string")
        if url:
            return url
    return None
