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

from pydantic import ValidationError

from .. import techniques
from ..errors import UsageError
from ..models import AttackSpec, Layer, Verdict
from . import entries

_ID = re.compile(entries.ID)


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
    technique = raw.get("technique")
    if technique not in registry:
        raise fail(f"technique {technique!r} is not registered; known: {', '.join(sorted(registry))}")
    try:
        family = entries.Family.model_validate(raw)
    except ValidationError as exc:
        raise fail(entries.one_line(exc, raw)) from None
    model = techniques.params_models()[family.technique]
    if path.stem != family.family:
        # The plugin lists the families' markers from the file names alone.
        raise fail(f"family {family.family!r} must be in a file named {family.family}.yaml")
    shared = family.model_dump(exclude_unset=True, exclude={"family", "code", "technique", "attacks"})
    specs = []
    for entry in family.attacks:
        match = _ID.match(entry.id)
        if not match or match.group(1) != family.code:
            raise fail(f"id {entry.id!r} must look like MCA-{family.code}-NNN")
        merged = {**shared, **entry.model_dump(exclude_unset=True)}
        try:
            resolved = entries.Resolved.model_validate(merged)
        except ValidationError as exc:
            raise fail(f"{entry.id}: {entries.needs(str(exc.errors()[0]['loc'][0]))}") from None
        if resolved.level == "DERIVED" and not resolved.derived.strip():
            raise fail(f"{entry.id}: a DERIVED level needs 'derived': the sentence it follows from, and why")
        if (wrong := entries.check_params(model, entry.params)) is not None:
            raise fail(f"{entry.id}: {wrong}")
        reported_success = merged.get("reported_success")
        specs.append(
            AttackSpec(
                id=entry.id,
                slug=entry.slug,
                family=family.family,
                title=merged.get("title") or "",
                severity=resolved.severity,
                level=resolved.level,
                technique=family.technique,
                # As written: the technique reads the keys the entry gave, its model's defaults its own.
                params=dict(entry.params or {}),
                refs=tuple(merged.get("refs") or ()),
                legacy_refs=tuple(merged.get("legacy_refs") or ()),
                refused_by=tuple(
                    Layer(x) for x in merged.get("refused_by", ("sdk-boundary", "protocol", "tool"))
                ),
                refuse_before_asking=bool(merged.get("refuse_before_asking", False)),
                second_process=bool(merged.get("second_process", False)),
                reported_success=Verdict(reported_success) if reported_success else None,
                any_refusal=merged.get("refusal", "gate") == "any",
                status=merged.get("status") or "active",
                remedy=" ".join(resolved.remedy.split()),
                owasp=tuple(resolved.owasp),
                derived=" ".join(resolved.derived.split()),
                requirements=tuple(merged.get("requirements") or ()),
            )
        )
    return specs


def _read(path: Path) -> Any:
    # Imported here, not at the top: the plugin imports this module's
    # neighbours in every pytest run, and YAML costs a run that audits nothing.
    import yaml

    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
