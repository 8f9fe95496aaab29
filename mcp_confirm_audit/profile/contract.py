"""What every profile key is made of: a documented field, a strict model, and one line when it is wrong.

A key is declared once, with `key(...)`: what it is, the form it accepts and an
example. The same declaration types the loader's validation, describes the key
in the JSON Schema (`description`, `examples`) and gives the row of
`docs/profile.md`; when a value is wrong, the line the user reads is built from
it too:

    profile p.yaml: 'paths' must be one of auto, relative, absolute, got sideways; e.g. paths: auto
    profile p.yaml: confirmation: unknown key 'tokn'; did you mean 'token'? confirmation takes kind, ...

A model of keys is strict (a number is not a string, `yes` is not `true`) and
knows every key it takes. A new key is a field, and a new group of keys a model
of its own (e.g. `confirmation_keys`), used as the type of a field. A check that
needs more than one key is the model's own (a validator): it raises `Within`
when it is about one entry (the third step of a list), so the line names that
entry; a union of forms chosen by a discriminator that finds none says why with
the discriminator's `refusal(value)`.
"""

from __future__ import annotations

import difflib
import json
import re
import reprlib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Discriminator, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from ..errors import UsageError

_short = reprlib.Repr()
_short.maxstring = _short.maxother = 60
_SHOWN = 80


@dataclass(frozen=True, slots=True)
class Doc:
    """A key's documentation: what it is, the form it accepts, an example value.

    `secret`: the value may be a credential, so an error never shows it.
    Called by pydantic to write the key's `description` and `examples` into the JSON Schema.
    """

    what: str
    accepts: str
    example: Any
    secret: bool = False
    # The only values it takes, when its type alone cannot say so (a list kept in another module).
    choices: tuple[Any, ...] | None = None

    def __call__(self, schema: dict[str, Any]) -> None:
        schema["description"] = f"{self.what} Accepts {self.accepts}."
        schema["examples"] = [self.example]
        if self.choices is not None:
            schema["enum"] = list(self.choices)


def key(
    default: Any,
    what: str,
    *,
    accepts: str,
    example: Any,
    alias: str | None = None,
    secret: bool = False,
    gt: float | None = None,
    ge: float | None = None,
    le: float | None = None,
    min_length: int | None = None,
    pattern: str | None = None,
    choices: tuple[Any, ...] | None = None,
) -> Any:
    """A profile key: its default (`...`: required), what it is, the form it accepts and an example."""
    return Field(
        default,
        alias=alias,
        gt=gt,
        ge=ge,
        le=le,
        min_length=min_length,
        pattern=pattern,
        json_schema_extra=Doc(what, accepts, example, secret, choices),
    )


class Keys(BaseModel):
    """A mapping of profile keys: every key known, every value of its own type (no coercion)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    # Said after the known keys when a key is unknown, e.g. where anything else goes instead.
    unknown_hint: ClassVar[str] = ""


_M = TypeVar("_M", bound=Keys)


class Within(ValueError):
    """A model's own check that is about one of its keys or entries: `at` is its path below the check.

    Raised by a validator (of a model, or of a list), e.g. `Within("names {x}, ...", 2)` for the
    third entry of a list; the line the user reads names that entry: `human[2] names {x}, ...`.
    """

    def __init__(self, problem: str, *at: int | str) -> None:
        super().__init__(problem)
        self.at = at


def read(model: type[_M], raw: Mapping[str, Any], source: str) -> _M:
    """`raw` validated as `model`; a UsageError of one line (the first problem) when it is not."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise UsageError(one_line(exc, model, raw, source)) from None


def doc(info: FieldInfo) -> Doc | None:
    extra = info.json_schema_extra
    return extra if isinstance(extra, Doc) else None


def names(model: type[Keys]) -> list[str]:
    """The keys `model` takes, as a profile spells them, in declaration order."""
    return [info.alias or name for name, info in model.model_fields.items()]


def field(model: type[Keys], spelled: object) -> FieldInfo | None:
    """The field behind key `spelled` of `model`, or None if it takes no such key."""
    for name, info in model.model_fields.items():
        if (info.alias or name) == spelled:
            return info
    return None


def flow(value: Any, limit: int | None = _SHOWN) -> str:
    """`value` as YAML's flow style writes it on one line, as a profile would say it (cut at `limit`)."""
    try:
        text = yaml.safe_dump(
            value, default_flow_style=True, width=10_000, allow_unicode=True, sort_keys=False
        )
    except yaml.YAMLError:
        return _short.repr(value)
    text = text.strip().removesuffix("\n...").removesuffix("...").strip()
    if "\n" in text:
        # A string with a line break: JSON's escapes keep it on one line, and JSON is YAML too.
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError):
            text = _short.repr(value)
    return text if limit is None or len(text) <= limit else text[: limit - 3] + "..."


# -- where an error is, in the profile's own terms ----------------------------------


@dataclass(frozen=True, slots=True)
class _Spot:
    """The deepest key an error's location passes through."""

    parent: str  # the address of the mapping that holds it ("" at the top)
    key: str
    doc: Doc | None
    value: Any  # what the profile says there (`_ABSENT` if nothing)


@dataclass(frozen=True, slots=True)
class _Walk:
    spot: _Spot | None
    # The last model the walk reached, and its address: where an unknown or missing key is.
    holder: type[Keys]
    holder_address: str
    # Every segment of the location was followed, and it ends on a mapping of keys (a model's own check).
    ends_on_model: bool
    address: str  # where the location ends
    annotation: Any  # the type found there


_ABSENT = object()


def _bare(annotation: Any) -> Any:
    """`annotation` without `X | None` and without metadata that does not choose between forms."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            if _is_tagged_union(annotation):
                return annotation
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            kept = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(kept) != 1:
                return annotation
            annotation = kept[0]
        else:
            return annotation


def _is_tagged_union(annotation: Any) -> bool:
    if typing.get_origin(annotation) is not typing.Annotated:
        return False
    inner = typing.get_args(annotation)[0]
    return typing.get_origin(inner) in (typing.Union, types.UnionType)


def _tagged_member(annotation: Any, tag: object) -> Any:
    """The form of a union of forms (pydantic `Tag`s) that `tag` names, or None."""
    union = typing.get_args(annotation)[0] if _is_tagged_union(annotation) else annotation
    for member in typing.get_args(union):
        for meta in getattr(member, "__metadata__", ()):
            if getattr(meta, "tag", None) == tag:
                return member
    return None


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, Keys)


def _walk(model: type[Keys], raw: Any, loc: tuple[int | str, ...]) -> _Walk:
    annotation: Any = model
    value: Any = raw
    address = ""
    spot = None
    holder, holder_address = model, ""
    followed = 0
    for segment in loc:
        annotation = _bare(annotation)
        origin = typing.get_origin(annotation)
        if _is_model(annotation):
            holder, holder_address = annotation, address
            info = field(annotation, segment)
            if info is None:
                break
            value = value.get(segment, _ABSENT) if isinstance(value, Mapping) else _ABSENT
            spot = _Spot(address, str(segment), doc(info), value)
            address = f"{address}.{segment}" if address else str(segment)
            annotation = info.rebuild_annotation()
        elif origin in (list, tuple) and isinstance(segment, int):
            value = value[segment] if isinstance(value, list) and segment < len(value) else _ABSENT
            address = f"{address}[{segment}]"
            annotation = typing.get_args(annotation)[0]
        elif origin is dict and segment != "[key]":
            value = value.get(segment, _ABSENT) if isinstance(value, Mapping) else _ABSENT
            address = f"{address}.{segment}"
            annotation = typing.get_args(annotation)[1]
        elif (member := _tagged_member(annotation, segment)) is not None:
            annotation = member
        else:
            break
        followed += 1
    ends_on_model = followed == len(loc) and _is_model(_bare(annotation))
    return _Walk(spot, holder, holder_address, ends_on_model, address, annotation)


def _refusal(annotation: Any, value: Any) -> str | None:
    """Why no form of a union fits `value`, when its discriminator can say (`refusal`)."""
    annotation = _bare(annotation)
    if not _is_tagged_union(annotation):
        return None
    for meta in typing.get_args(annotation)[1:]:
        refusal = getattr(meta.discriminator, "refusal", None) if isinstance(meta, Discriminator) else None
        if callable(refusal):
            return str(refusal(value))
    return None


def one_line(exc: ValidationError, model: type[Keys], raw: Any, source: str) -> str:
    """The first problem pydantic found, said as the key, what was found, and the accepted form with an example."""
    # An unknown key first: a typo in a key's name also makes the key it meant look missing.
    errors = sorted(exc.errors(include_url=False), key=lambda e: e["type"] != "extra_forbidden")
    error = errors[0]
    loc, kind = tuple(error["loc"]), error["type"]
    walk = _walk(model, raw, loc)
    head = f"profile {source}: "
    cause = error.get("ctx", {}).get("error")
    if isinstance(cause, Within):
        # A check about one entry: its address, then what is wrong with it.
        return head + f"{_walk(model, raw, loc + cause.at).address or 'the profile'} {cause}"
    if kind in ("union_tag_not_found", "union_tag_invalid") and (
        refusal := _refusal(walk.annotation, error.get("input"))
    ):
        return head + f"{walk.address or 'the profile'} {refusal}"
    if kind == "extra_forbidden":
        return head + _unknown(walk.holder, walk.holder_address, loc[-1])
    if kind == "missing":
        return head + _missing(walk.holder, walk.holder_address, loc[-1])
    problem = str(error.get("ctx", {}).get("error", error["msg"]))
    if walk.ends_on_model and kind in ("value_error", "assertion_error"):
        # A check of the mapping as a whole: its message says it all, with its example.
        # A model's own check says what the mapping must do ("needs ...", "takes ..."), after its address.
        return head + f"{walk.address or 'the profile'} {problem}"
    spot = walk.spot
    if spot is None or spot.doc is None:
        return head + f"{'.'.join(map(str, loc)) or 'the profile'}: {error['msg']}"
    where = f"{spot.parent}: " if spot.parent else ""
    found = _found(spot.value, spot.doc.secret)
    why = f" ({problem})" if kind == "value_error" else ""
    if "[key]" in loc:
        why = f" (the name {_short.repr(loc[loc.index('[key]') - 1])} does not fit)"
    return (
        f"{head}{where}{spot.key!r} must be {spot.doc.accepts}, got {found}{why}; "
        f"e.g. {spot.key}: {flow(spot.doc.example)}"
    )


def _unknown(holder: type[Keys], address: str, unknown: object) -> str:
    known = names(holder)
    close = difflib.get_close_matches(str(unknown), known, n=1, cutoff=0.6)
    guess = f"; did you mean {close[0]!r}?" if close else ";"
    takes = f"{address or 'a profile'} takes {', '.join(known)}"
    hint = f" ({holder.unknown_hint})" if holder.unknown_hint else ""
    where = f"{address}: " if address else ""
    return f"{where}unknown key {_short.repr(unknown)}{guess} {takes}{hint}"


def _missing(holder: type[Keys], address: str, missing: object) -> str:
    info = field(holder, missing)
    said = doc(info) if info is not None else None
    if said is None:
        return f"{address or 'the profile'} needs {missing!r}"
    return (
        f"{address or 'the profile'} needs {missing!r}, {said.accepts}; e.g. {missing}: {flow(said.example)}"
    )


def _found(value: Any, secret: bool) -> str:
    if value is _ABSENT:
        return "nothing"
    if secret:
        # A credential typed in the wrong place: say its shape, never the value.
        if isinstance(value, Mapping):
            entries = "1 entry" if len(value) == 1 else f"{len(value)} entries"
            return f"a mapping of {entries} (values not shown: they may be credentials)" if value else "{}"
        return f"a {type(value).__name__} (not shown: it may be a credential)"
    return flow(value)


def required(info: FieldInfo) -> bool:
    return info.default is PydanticUndefined and info.default_factory is None


# A reason that only promises one: what `baseline` writes for a person to replace, and its kin.
_PLACEHOLDER = re.compile(r"^\W*(todo|tbd|fixme|xxx|n/?a|none|later|placeholder)\b|^\W*$", re.IGNORECASE)


def says_nothing(reason: str) -> bool:
    """True for an empty reason, or a placeholder ('TODO say why', 'tbd', '-'): not a reason."""
    return bool(_PLACEHOLDER.match(reason.strip()))
