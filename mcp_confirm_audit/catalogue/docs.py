"""`docs/attacks.md`, generated from the catalogue so it cannot drift from it.

A family's description is the comment at the top of its YAML file: the same
words a reviewer reads when diffing the catalogue.
"""

from __future__ import annotations

from pathlib import Path

from ..models import OWASP_ITEMS, REQUIREMENT_ITEMS, AttackSpec
from .loader import Catalogue, default_directory

COMMAND = "mcp-confirm-audit catalogue --markdown -o docs/attacks.md"


def family_notes(directory: Path) -> dict[str, str]:
    """The leading comment of each family file, keyed by the file's family."""
    import yaml

    notes = {}
    for path in sorted(directory.glob("*.yaml")):
        text = path.read_text()
        lines = []
        for line in text.splitlines():
            if not line.startswith("#"):
                break
            lines.append(line.lstrip("#").strip())
        family = (yaml.safe_load(text) or {}).get("family")
        if isinstance(family, str):
            notes[family] = " ".join(lines)
    return notes


def markdown(catalogue: Catalogue, directory: Path | None = None) -> str:
    notes = family_notes(directory or default_directory())
    active = catalogue.active
    out = [
        "# Attack catalogue",
        "",
        f"Generated from `attacks/*.yaml` by `{COMMAND}`; a test fails when it is stale: do not edit it.",
        "",
        f"{len(active)} active attacks in {len(catalogue.families)} families. Each id is a pytest item id: "
        "`pytest --mcp-target CMD -k MCA-REPLAY-001` runs one attack.",
        "",
        "A finding is filed under the entry's severity, but at most `medium` for a SHOULD-level entry and at "
        "most `low` when its verdict is `weak`. `DERIVED` means no sentence of the spec states the check "
        "literally; each such family says the sentence it follows from, and why.",
    ]
    for family in catalogue.families:
        specs = [s for s in catalogue.attacks if s.family == family]
        out += ["", f"## {family}", ""]
        if notes.get(family):
            out += [notes[family], ""]
        out.append(f"Technique: `{specs[0].technique}`. The requirements it rests on:")
        out.append("")
        refs = dict.fromkeys(ref for s in specs for ref in s.refs)
        out += [f"- {ref}" for ref in refs]
        legacy = dict.fromkeys(ref for s in specs for ref in s.legacy_refs)
        if legacy:
            out += ["", "On a 2025-06-18 or 2025-11-25 connection (elicitation/create), that era's own:", ""]
            out += [f"- {ref}" for ref in legacy]
        derived = dict.fromkeys(s.derived for s in specs if s.level == "DERIVED" and s.derived)
        out += [f"\nDERIVED (no sentence states it literally): {text}" for text in derived]
        remedies = dict.fromkeys(s.remedy for s in specs)
        out += ["", *(f"Remedy: {remedy}" for remedy in remedies)]
        owasp = dict.fromkeys(item for s in specs for item in s.owasp)
        out += ["", "OWASP: " + (", ".join(f"{item} {OWASP_ITEMS[item]}" for item in owasp) or "none fits")]
        required = dict.fromkeys(item for s in specs for item in s.requirements)
        if required:
            out.append("Requirements: " + ", ".join(f"{item} {REQUIREMENT_ITEMS[item]}" for item in required))
        out += [
            "",
            "| id | variant | title | severity | level | refused by | status |",
            "|---|---|---|---|---|---|---|",
        ]
        out += [_row(s) for s in specs]
    return "\n".join(out) + "\n"


def _row(spec: AttackSpec) -> str:
    layers = ", ".join(layer.value for layer in spec.refused_by)
    if spec.refuse_before_asking:
        layers += ", before asking"
    cells = [spec.id, spec.slug, spec.title, spec.severity, spec.level, layers, spec.status]
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def listing(catalogue: Catalogue) -> str:
    """One line per attack, for a terminal."""
    rows = [
        (s.id, s.family, s.severity, s.level, s.title + ("" if s.status == "active" else f" ({s.status})"))
        for s in catalogue.attacks
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    return (
        "\n".join("  ".join([*(c.ljust(w) for c, w in zip(r[:4], widths, strict=True)), r[4]]) for r in rows)
        + "\n"
    )
