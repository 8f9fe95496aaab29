"""Write a baseline from an audit.json: every finding accepted, every refusing layer pinned.

The reasons it writes only say when and what was found: a person should
replace them with why the finding is accepted before the file is committed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Set
from typing import Any

import yaml

from ..engine.baseline import CONTROL_PREFIX, CONTROLS

_FINDINGS = ("vulnerable", "weak")
_REFUSING = ("sdk-boundary", "protocol", "tool")


_UNEXCUSABLE = ("inconclusive",)


def left_out(document: Mapping[str, Any]) -> list[str]:
    """The results a baseline cannot excuse (not judged), one line each: `ID on tool: reason`."""
    return [
        " ".join(f"{r['id']} on {r['tool']}: {r['verdict']}, {str(r.get('reason', ''))[:120]}".split())
        for r in document.get("results", ())
        if r.get("verdict") in _UNEXCUSABLE
    ]


def stale_entries(document: Mapping[str, Any]) -> set[tuple[str, str]]:
    """(id, tool) of every baseline entry an audit.json, run with that baseline, found stale."""
    stale = {
        (r["id"], r["tool"])
        for r in document.get("results", ())
        if (r.get("baseline") or {}).get("status") == "stale"
    }
    for line in (document.get("baseline") or {}).get("unmatched") or ():
        if found := re.match(r"^(MCA-[A-Z]+-\d{3}) on (.+?): ", line):
            stale.add((found.group(1), found.group(2)))
    return stale


def pruned(raw: Mapping[str, Any], stale: Set[tuple[str, str]], source: str) -> tuple[str, int]:
    """The baseline without its stale findings (YAML), and how many entries went."""
    findings = list(raw.get("findings") or ())
    kept = [f for f in findings if (f.get("id"), f.get("tool")) not in stale]
    head = f"# mcp-confirm-audit baseline, pruned of the entries {source} found stale.\n"
    body = yaml.safe_dump({**raw, "findings": kept}, sort_keys=False, allow_unicode=True, width=110)
    return head + body, len(findings) - len(kept)


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
    for control in document.get("controls", ()):
        # A control that fails says the gate acts on a "no": accepted by its id, as a finding is.
        if control["name"] in CONTROLS and control.get("applicable", True) and not control["passed"]:
            findings.append(
                {
                    "id": CONTROL_PREFIX + control["name"],
                    "tool": control["tool"],
                    "reason": f"TODO say why this is accepted (failed {found_on}: {control['detail'][:160]})",
                }
            )
    head = [
        f"# mcp-confirm-audit baseline, written from {source}.",
        "# findings: accepted findings; each passes (xfail) while it is still found and fails the run as",
        "#   stale once it is not. Replace each TODO with the reason it is accepted: the gate refuses a",
        "#   TODO (or an empty) reason.",
        "# layers: the layer that refused each attack; another layer is layer drift (a warning, or a",
        "#   failure under --mcp-strict).",
    ]
    body = yaml.safe_dump(
        {"version": 1, "findings": findings}, sort_keys=False, allow_unicode=True, width=110
    )
    if unjudged := left_out(document):
        head.append("# Left out, because a baseline cannot excuse what was not judged (see review.md's")
        head.append("#   'Not testable here' for the next step, or exclude: the attack in the profile):")
        head += [f"#   {line}" for line in unjudged]
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
