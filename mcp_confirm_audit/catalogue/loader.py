"""The attack catalogue: YAML a reviewer can diff, checked against the code.

Each file in `attacks/` is one family: the technique it uses, defaults, and a
list of entries with stable ids (`MCA-<CODE>-<NNN>`). Loading fails loudly on
a duplicate id, an unknown technique, or a technique no entry uses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import techniques
from ..errors import UsageError
from ..models import OWASP_ITEMS, REQUIREMENT_ITEMS, SEVERITIES, AttackSpec, Layer, Verdict

_ID = re.compile(r"^MCA-([A-Z]+)-(\d{3})$")
_SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_SEVERITIES = SEVERITIES
_LEVELS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "DERIVED")


def default_directory() -> Path:
    """`attacks/` inside an installed wheel, else beside the package in a checkout."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "attacks", here.parent / "attacks"):
        if candidate.is_dir():
            return candidate
    raise UsageError("the attack catalogue is missing: reinstall mcp-confirm-audit")


@dataclass(frozen=True)
class Catalogue:
    attacks: tuple[AttackSpec, ...]
    techniques: Mapping[str, techniques.Technique]

    @property
    def active(self) -> tuple[AttackSpec, ...]:
        return tuple(a for a in self.attacks if a.status == "active")

    def by_id(self, attack_id: str) -> AttackSpec:
        for attack in self.attacks:
            if attack.id == attack_id:
                return attack
        raise UsageError(
            f"no attack {attack_id!r} in the catalogue; list them with 'mcp-confirm-audit catalogue'"
        )

    @property
    def families(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(a.family for a in self.attacks))


def load_catalogue(directory: Path | None = None) -> Catalogue:
    directory = directory or default_directory()
    registry = techniques.load()
    specs: list[AttackSpec] = []
    for path in sorted(directory.glob("*.yaml")):
        specs.extend(_load_family(path, registry))
    seen: dict[str, str] = {}
    for spec in specs:
        if spec.id in seen:
            raise UsageError(f"attack id {spec.id} is used twice ({seen[spec.id]} and {spec.family})")
        seen[spec.id] = spec.family
    unused = sorted(set(registry) - {s.technique for s in specs})
    if unused:
        raise UsageError(f"technique {unused[0]!r} is registered but no catalogue entry uses it")
    return Catalogue(tuple(specs), registry)


def _load_family(path: Path, registry: Mapping[str, Any]) -> list[AttackSpec]:
    def fail(message: str) -> UsageError:
        return UsageError(f"catalogue {path.name}: {message}")

    raw = _read(path)
    if not isinstance(raw, Mapping) or not isinstance(raw.get("attacks"), list):
        raise fail("must be a mapping with 'family', 'technique' and a list of 'attacks'")
    family, code = raw.get("family"), raw.get("code")
    if not isinstance(family, str) or not _SLUG.match(family) or not isinstance(code, str):
        raise fail("needs a kebab-case 'family' and an upper-case 'code'")
    if path.stem != family:
        # The plugin lists the families' markers from the file names alone.
        raise fail(f"family {family!r} must be in a file named {family}.yaml")
    specs = []
    for entry in raw["attacks"]:
        merged = {**{k: v for k, v in raw.items() if k not in ("attacks", "code", "family")}, **entry}
        attack_id = str(merged.get("id", ""))
        match = _ID.match(attack_id)
        if not match or match.group(1) != code:
            raise fail(f"id {attack_id!r} must look like MCA-{code}-NNN")
        technique = merged.get("technique")
        if technique not in registry:
            raise fail(
                f"{attack_id}: technique {technique!r} is not registered; known: {', '.join(sorted(registry))}"
            )
        slug = str(merged.get("slug", ""))
        if not _SLUG.match(slug):
            raise fail(f"{attack_id}: slug {slug!r} must be kebab-case")
        if merged.get("severity") not in _SEVERITIES or merged.get("level") not in _LEVELS:
            raise fail(f"{attack_id}: severity must be one of {_SEVERITIES} and level one of {_LEVELS}")
        try:
            refused_by = tuple(
                Layer(x) for x in merged.get("refused_by", ("sdk-boundary", "protocol", "tool"))
            )
        except ValueError as exc:
            raise fail(f"{attack_id}: {exc}") from None
        reported_success = merged.get("reported_success")
        if reported_success not in (None, "weak", "vulnerable"):
            raise fail(f"{attack_id}: reported_success must be weak or vulnerable, got {reported_success!r}")
        refusal = merged.get("refusal", "gate")
        if refusal not in ("gate", "any"):
            raise fail(f"{attack_id}: refusal must be gate or any, got {refusal!r}")
        remedy = merged.get("remedy")
        if not isinstance(remedy, str) or not remedy.strip():
            raise fail(
                f"{attack_id}: needs a 'remedy' (what the server's author should do), for its family or itself"
            )
        owasp = merged.get("owasp")
        if not isinstance(owasp, list) or any(item not in OWASP_ITEMS for item in owasp):
            raise fail(
                f"{attack_id}: 'owasp' must be a list of OWASP item ids (empty where none fits); "
                f"known: {', '.join(OWASP_ITEMS)}"
            )
        requirements = merged.get("requirements", [])
        if not isinstance(requirements, list) or any(item not in REQUIREMENT_ITEMS for item in requirements):
            raise fail(
                f"{attack_id}: 'requirements' must be a list of requirement ids; known: {', '.join(REQUIREMENT_ITEMS)}"
            )
        derived = merged.get("derived", "")
        if merged["level"] == "DERIVED" and (not isinstance(derived, str) or not derived.strip()):
            raise fail(f"{attack_id}: a DERIVED level needs 'derived': the sentence it follows from, and why")
        specs.append(
            AttackSpec(
                id=attack_id,
                slug=slug,
                family=family,
                title=str(merged.get("title", "")),
                severity=merged["severity"],
                level=merged["level"],
                technique=str(technique),
                params=dict(merged.get("params") or {}),
                refs=tuple(str(r) for r in merged.get("refs") or ()),
                legacy_refs=tuple(str(r) for r in merged.get("legacy_refs") or ()),
                refused_by=refused_by,
                refuse_before_asking=bool(merged.get("refuse_before_asking", False)),
                second_process=bool(merged.get("second_process", False)),
                reported_success=Verdict(reported_success) if reported_success else None,
                any_refusal=refusal == "any",
                status=str(merged.get("status", "active")),
                remedy=" ".join(remedy.split()),
                owasp=tuple(owasp),
                derived=" ".join(str(derived).split()),
                requirements=tuple(requirements),
            )
        )
    return specs


def _read(path: Path) -> Any:
    # Imported here, not at the top: the plugin imports this module's
    # neighbours in every pytest run, and YAML costs a run that audits nothing.
    import yaml

    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
