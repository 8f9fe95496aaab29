"""The contract of `attacks/*.yaml`, declared once: pydantic models the loader validates with.

A file is one family: its technique, keys every entry shares (defaults), and the entries. The
file's model is chosen by its `technique:` (a discriminated union), and each entry's `params:`
is that technique's own model (`@technique(name, params=...)`), so a misspelled key anywhere, or
a value of the wrong type, is refused at load in one line naming the entry and the key. The same
models generate `schemas/attacks.schema.json`. What needs the family's keys and the entry's
together (a remedy from either, a DERIVED level's sentence) is checked on the merged entry
(`Resolved`).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
)

from ..models import OWASP_ITEMS, REQUIREMENT_ITEMS, SEVERITIES, Layer

SLUG = r"^[a-z0-9]+(-[a-z0-9]+)*$"
ID = r"^MCA-([A-Z]+)-(\d{3})$"
LEVELS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "DERIVED")


def _owasp(items: list[str]) -> list[str]:
    if any(item not in OWASP_ITEMS for item in items):
        raise ValueError(
            f"must be a list of OWASP item ids (empty where none fits); known: {', '.join(OWASP_ITEMS)}"
        )
    return items


def _requirements(items: list[str]) -> list[str]:
    if any(item not in REQUIREMENT_ITEMS for item in items):
        raise ValueError(f"must be a list of requirement ids; known: {', '.join(REQUIREMENT_ITEMS)}")
    return items


def _layers(items: list[str]) -> list[str]:
    if any(item not in _LAYERS for item in items):
        raise ValueError(f"must be a list of layers; known: {', '.join(_LAYERS)}")
    return items


def _severity(value: str) -> str:
    if value not in SEVERITIES:
        raise ValueError(f"must be one of {', '.join(SEVERITIES)}")
    return value


def _level(value: str) -> str:
    if value not in LEVELS:
        raise ValueError(f"must be one of {', '.join(LEVELS)}")
    return value


def _one_of(values: Sequence[str]) -> WithJsonSchema:
    return WithJsonSchema({"enum": list(values)})


def _list_of(values: Sequence[str]) -> WithJsonSchema:
    return WithJsonSchema({"type": "array", "items": {"enum": list(values)}})


_LAYERS = [layer.value for layer in Layer]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Shared(_Strict):
    """Keys a family may give every entry, and an entry may override."""

    title: str | None = Field(None, description="what the attack does, in one line")
    severity: Annotated[str, AfterValidator(_severity), _one_of(SEVERITIES)] | None = Field(
        None, description="one of SEVERITIES"
    )
    level: Annotated[str, AfterValidator(_level), _one_of(LEVELS)] | None = Field(
        None, description="the requirement level: MUST, MUST NOT, SHOULD, SHOULD NOT or DERIVED"
    )
    refs: list[str] | None = Field(None, description="the spec sections and CWEs it checks")
    legacy_refs: list[str] | None = Field(None, description="cited instead of refs over a legacy era")
    refused_by: Annotated[list[str], AfterValidator(_layers), _list_of(_LAYERS)] | None = Field(
        None, description="the layers whose refusal is the pass (default: sdk-boundary, protocol, tool)"
    )
    refuse_before_asking: bool | None = Field(
        None, description="a refusal after the person was asked is weak"
    )
    second_process: bool | None = Field(None, description="the attack needs a second process of the target")
    reported_success: Literal["weak", "vulnerable"] | None = Field(
        None, description="what a normal result means when nothing changed"
    )
    refusal: Literal["gate", "any"] | None = Field(
        None, description="whose refusal counts: the gate's, or any"
    )
    status: Literal["active", "retired"] | None = Field(None, description="a retired attack keeps its id")
    remedy: str | None = Field(None, description="what the server's author should do")
    owasp: Annotated[list[str], AfterValidator(_owasp), _list_of(list(OWASP_ITEMS))] | None = Field(
        None, description="OWASP item ids"
    )
    derived: str | None = Field(
        None, description="for a DERIVED level: the sentence it follows from, and why"
    )
    requirements: (
        Annotated[list[str], AfterValidator(_requirements), _list_of(list(REQUIREMENT_ITEMS))] | None
    ) = Field(None, description="other requirement ids it also checks")


class Entry(Shared):
    """One attack: a stable id, a slug, and its technique's params."""

    id: str = Field(pattern=ID, description="MCA-<CODE>-<NNN>, never reused")
    slug: str = Field(pattern=SLUG, description="kebab-case")
    # Checked against its technique's own model (`check_params`).
    params: dict[str, Any] | None = Field(None, description="the technique's params (typed by its technique)")


class Family(Shared):
    """One file of `attacks/`: a family, its code, its technique, and its entries."""

    family: str = Field(pattern=SLUG, description="kebab-case; the file is named after it")
    code: str = Field(pattern=r"^[A-Z]+$", description="the upper-case code of its ids")
    technique: str
    attacks: list[Entry]


class Resolved(BaseModel):
    """An entry with its family's keys: what every attack must say, whoever says it."""

    model_config = ConfigDict(frozen=True)

    severity: str
    level: str
    remedy: str = Field(min_length=1, pattern=r"\S")
    owasp: list[str]
    derived: str = ""
    params: Any = None


# What the one-line error says for a key that is missing or wrong on the merged entry.
_NEEDS = {
    "severity": f"severity must be one of {SEVERITIES}",
    "level": f"level must be one of {LEVELS}",
    "remedy": "needs a 'remedy' (what the server's author should do), for its family or itself",
    "owasp": "'owasp' must be a list of OWASP item ids (empty where none fits); known: "
    + ", ".join(OWASP_ITEMS),
}


def check_params(model: type[BaseModel], params: Any) -> str | None:
    """What is wrong with an entry's `params:` for its technique's model, in one line; None if nothing."""
    if params is None:
        if any(field.is_required() for field in model.model_fields.values()):
            return f"'params' is missing; its technique takes {', '.join(model.model_fields)}"
        return None
    try:
        model.model_validate(params)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(["params", *(str(part) for part in first["loc"])])
        return describe(first, key, sorted(model.model_fields))
    return None


def schema(params: Mapping[str, type[BaseModel]]) -> dict[str, Any]:
    """The JSON Schema of one file of `attacks/`, from the same models the loader validates with.

    The family's model, its `technique:` one of the registered names, and for each technique the
    type of its entries' `params:` (that technique's model), chosen on `technique:`.
    """
    generated = Family.model_json_schema()
    defs = generated.setdefault("$defs", {})
    generated["properties"]["technique"] = {"enum": sorted(params), "description": "the registered technique"}
    choices = []
    for name, model in sorted(params.items()):
        ref = f"{model.__name__}"
        model_schema = model.model_json_schema()
        defs.update(model_schema.pop("$defs", {}))
        defs[ref] = model_schema
        typed: dict[str, Any] = {"$ref": f"#/$defs/{ref}"}
        if not any(field.is_required() for field in model.model_fields.values()):
            typed = {"anyOf": [typed, {"type": "null"}]}
        entry: dict[str, Any] = {"properties": {"params": typed}}
        if typed.get("$ref"):
            entry["required"] = ["params"]
        choices.append(
            {
                "if": {"properties": {"technique": {"const": name}}},
                "then": {"properties": {"attacks": {"items": entry}}},
            }
        )
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://mcp-confirm-audit.dev/schemas/attacks.schema.json",
        "title": "mcp-confirm-audit attack catalogue family (attacks/*.yaml)",
        **generated,
        "allOf": choices,
    }


def schema_text(params: Mapping[str, type[BaseModel]]) -> str:
    return json.dumps(schema(params), indent=2, ensure_ascii=False) + "\n"


SCHEMA_COMMAND = "mcp-confirm-audit schema attacks -o schemas/attacks.schema.json"


def catalogue_schema_text() -> str:
    """`schemas/attacks.schema.json`: the registered techniques' params, every one."""
    from .. import techniques

    return schema_text(techniques.params_models())


def one_line(error: ValidationError, raw: Mapping[str, Any]) -> str:
    """Pydantic's first error as one line: the entry's id (or the family's key), the key, what is wrong."""
    first = error.errors()[0]
    loc: Sequence[Any] = first["loc"]
    where = ""
    if len(loc) >= 2 and loc[0] == "attacks" and isinstance(loc[1], int):
        entries = raw.get("attacks") or []
        entry = entries[loc[1]] if loc[1] < len(entries) else {}
        where = f"{entry.get('id') or f'attacks[{loc[1]}]'}: " if isinstance(entry, Mapping) else ""
        loc = loc[2:]
    key = ".".join(str(part) for part in loc) or "the entry"
    return where + describe(first, key, _fields_at(loc))


def describe(first: Mapping[str, Any], key: str, known: Sequence[str] = ()) -> str:
    kind = first["type"]
    if kind == "extra_forbidden":
        name = key.rsplit(".", 1)[-1]
        close = difflib.get_close_matches(name.replace("-", "_"), known, n=1, cutoff=0.6)
        hint = f" (did you mean '{close[0]}'?)" if close else f"; known: {', '.join(known)}" if known else ""
        return f"unknown key '{key}'{hint}"
    if kind == "missing":
        return f"'{key}' is missing"
    message = str(first["msg"]).removeprefix("Value error, ").removeprefix("Input ")
    return f"'{key}' {message[0].lower()}{message[1:]}, got {first.get('input')!r}"


def _fields_at(loc: Sequence[Any]) -> list[str]:
    """The keys allowed where an unknown one was found: an entry's, or a family's."""
    return sorted({*Entry.model_fields, *Family.model_fields} - {"attacks"}) if len(loc) == 1 else []


def needs(key: str) -> str:
    return _NEEDS.get(key, f"'{key}' is wrong")
