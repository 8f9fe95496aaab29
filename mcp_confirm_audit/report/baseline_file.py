"""Write a baseline from an audit.json: every finding accepted, every refusing layer pinned.

The reasons it writes only say when and what was found: a person should
replace them with why the finding is accepted before the file is committed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

_FINDINGS = ("vulnerable", "weak")
_REFUSING = ("sdk-boundary", "protocol", "tool")


def baseline_from_audit(document: Mapping[str, Any], source: str, *, layers: bool = True) -> str:
    found_on = str(document.get("generated", ""))[:10]
    findings, pinned = [], []
    for result in document.get("results", ()):
        if result["verdict"] in _FINDINGS:
            findings.append(
                {
                    "id": result["id"],
                    "tool": result["tool"],
                    "variant": result["variant"],
                    "verdict": result["verdict"],
                    "reason": f"TODO say why this is accepted (found {found_on}: {result['reason'][:160]})",
                }
            )
        elif layers and result["verdict"] == "refused" and result.get("layer") in _REFUSING:
            pinned.append({"id": result["id"], "tool": result["tool"], "layer": result["layer"]})
    head = [
        f"# mcp-confirm-audit baseline, written from {source}.",
        "# findings: accepted findings; each passes (xfail) while it is still found and fails the run as",
        "#   stale once it is not. Replace each TODO with the reason it is accepted.",
        "# layers: the layer that refused each attack; another layer is layer drift (a warning, or a",
        "#   failure under --mcp-strict).",
    ]
    body = yaml.safe_dump(
        {"version": 1, "findings": findings}, sort_keys=False, allow_unicode=True, width=110
    )
    text = "\n".join(head) + "\n" + body
    if layers:
        text += (
            "layers:\n"
            + "".join(
                f"- {{id: {p['id']}, tool: {_scalar(p['tool'])}, layer: {p['layer']}}}\n" for p in pinned
            )
            if pinned
            else "layers: []\n"
        )
    return text


def _scalar(value: str) -> str:
    return yaml.safe_dump(value, default_style=None).removesuffix("\n...\n").strip()
