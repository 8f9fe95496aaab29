"""What a server's own refusal says its arguments must be: read, never guessed.

A business rule lives in the server's code, not its schema: "vent must be one
of north, south, roof", "angle must be between 15 and 75", "Unknown bed 'x'.
List beds first." The SDK's own validation errors are structured (pydantic
names the field on a line of its own, then the rule and its `[type=...]`).
Each becomes a `Constraint`: the argument it is about, the schema facets it
adds (`enum`, `minimum`, `maxLength`, `pattern`, `format`), or the thing the
server says must be listed (or made) first. Pure: text in, constraints out.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Constraint:
    """What one refusal says of one argument, and the server's words it was read from."""

    arg: str
    facets: Mapping[str, Any] = field(default_factory=dict)
    # The thing the server says is unknown or must be listed first ("bed"): a value it holds.
    listed: str | None = None
    said: str = ""


# The SDK's validation error: the field's location on its own line, then the rule and its type.
_PYDANTIC = re.compile(r"^(?P<loc>[A-Za-z_][\w.]*)\s*\n\s+(?P<msg>[^\n]*?)\s*\[type=(?P<type>\w+)", re.M)
_NUMBER = r"(-?\d+(?:\.\d+)?)"
_RANGE = (
    re.compile(rf"between\s+{_NUMBER}\s+and\s+{_NUMBER}", re.I),
    re.compile(rf"(?:range|from|within)\s*[:(\[]?\s*{_NUMBER}\s*(?:-|–|to|\.\.)\s*{_NUMBER}", re.I),
)
_BOUNDS = (
    (
        re.compile(
            rf"(?:greater than or equal to|at least|no less than|minimum(?: of| is)?|min)\s*:?\s*{_NUMBER}",
            re.I,
        ),
        "minimum",
    ),
    (
        re.compile(
            rf"(?:less than or equal to|at most|no more than|not exceed|up to|maximum(?: of| is)?|max)\s*:?\s*{_NUMBER}",
            re.I,
        ),
        "maximum",
    ),
    (re.compile(rf"(?:greater than|more than|above|over)\s+{_NUMBER}", re.I), "exclusiveMinimum"),
    (re.compile(rf"(?:less than|fewer than|below|under)\s+{_NUMBER}", re.I), "exclusiveMaximum"),
)
# "content is required for add", "missing content", "content must be given", "config proposals require `path`".
_REQUIRED = re.compile(
    r"\b(?:requires?|required|mandatory|missing)\b|\bmust be (?:given|provided|set|supplied)\b|\b(?:provide|supply|specify)\b",
    re.I,
)
_LENGTH = re.compile(r"characters?|chars?\b|long\b|length", re.I)
_ONE_OF = re.compile(
    r"(?:(?:one|any) of|(?<!one of )(?:must|should) be(?! (?:one|any) of)|expected|"
    r"valid(?: values| options| choices)?(?: are| is)?|allowed(?: values)?(?: are)?|choose from|options(?: are)?)"
    r"\s*:?\s*[\[({]?\s*(?P<list>[^.;\n\])}]+)",
    re.I,
)
_ITEM = re.compile(r"^['\"`]?([\w@+.:/-]{1,40})['\"`]?$")
_PATTERN = re.compile(r"(?:match(?:es)? (?:the )?pattern|pattern)\s*:?\s*['\"`](?P<p>[^'\"`]+)['\"`]", re.I)
_FORMATS = (
    (re.compile(r"phone|e\.?164|msisdn", re.I), "phone"),
    (re.compile(r"e-?mail", re.I), "email"),
    (re.compile(r"\buuid\b|guid", re.I), "uuid"),
    (re.compile(r"yyyy-mm-dd|iso[- ]?8601 date|\ba date\b", re.I), "date"),
    (re.compile(r"\burl\b|\buri\b", re.I), "uri"),
)
_UNKNOWN = re.compile(
    r"(?:unknown|no such|not found|no|invalid|unrecognised|unrecognized|missing)\s+(?P<thing>[a-z][\w-]*)",
    re.I,
)
_LIST_FIRST = re.compile(r"\b(?:list|call list_?|see|use list_?)\s*(?P<thing>[a-z][\w-]*)\s+first", re.I)
_NOT_FOUND = re.compile(
    r"(?P<thing>[a-z][\w-]*)\s+(?:['\"`][^'\"`]*['\"`]|[\w.:-]+)\s+(?:(?:was |is )?not found|does not exist|doesn't exist"
    # "recipient 'x' is not in the allowlist", "... is not allowlisted": a value the server holds a list of.
    r"|is not (?:in|on) (?:the |your )?(?:allow-?list|white-?list|list)|is not (?:allow|white)-?listed)",
    re.I,
)
# "eleven digits": a string of that many digits (a carrier's number, an account number).
_DIGITS = re.compile(
    r"\b(\d{1,2}|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen)\s+digits\b", re.I
)
_COUNTS = {
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
}
# A date the server wants later than the one sent ("due_date 2026-12-02 is in the past").
_FUTURE = re.compile(
    r"in the past|before today|must be (?:in the )?future|must be after today|already passed", re.I
)
_CLAUSE = re.compile(r"(?<=[.;!?])\s+|\n+")
_SDK_FRAME = re.compile(r"^\s*error executing tool [\w.-]+:\s*", re.I)
_NOISE = {"a", "an", "the", "this", "that", "such", "value", "argument", "field", "input"}


def read(text: str, args: Mapping[str, Any], properties: Mapping[str, Any] | None = None) -> list[Constraint]:
    """The constraints `text` (a refusal) states about `args` (what was sent) or the tool's `properties`."""
    names = [*args, *(k for k in properties or {} if k not in args)]
    found = _structured(text, names)
    if found:
        return found
    body = _SDK_FRAME.sub("", text)
    merged: dict[str, Constraint] = {}
    for clause in (c.strip() for c in _CLAUSE.split(body)):
        if not clause:
            continue
        for arg in concerns(clause, args, names):
            kind = (properties or {}).get(arg) or {}
            kind = kind if isinstance(kind, Mapping) else {}
            if kind.get("type") == "array" and isinstance(kind.get("items"), Mapping):
                kind = kind["items"]  # "invalid email: x" of a list of recipients is about each item
            got = _business(clause, arg, kind)
            if got is None:
                continue
            was = merged.get(arg)
            merged[arg] = (
                got
                if was is None
                else Constraint(
                    arg, {**was.facets, **got.facets}, was.listed or got.listed, f"{was.said} {got.said}"
                )
            )
    return list(merged.values())


def _structured(text: str, names: list[str]) -> list[Constraint]:
    """Pydantic's errors, as the SDK passes them on: each names its field."""
    found = []
    for match in _PYDANTIC.finditer(text):
        loc = match["loc"]
        arg = loc if loc in names else loc.split(".")[0]  # a field of an object argument: `note.store`
        if arg not in names:
            continue
        msg, kind = match["msg"], match["type"]
        facets: dict[str, Any] = {}
        if kind in ("literal_error", "enum"):
            facets["enum"] = _items(msg.split("should be", 1)[-1])
        elif kind in ("int_parsing", "int_type", "int_from_float"):
            facets["type"] = "integer"
        elif kind in ("float_parsing", "float_type"):
            facets["type"] = "number"
        elif kind == "string_pattern_mismatch" and (p := _PATTERN.search(msg)):
            facets["pattern"] = p["p"]
        else:
            got = _business(msg, arg, {"type": "string" if kind.startswith("string") else "number"})
            facets.update(got.facets if got else {})
        if facets.get("enum") == []:
            facets.pop("enum")
        found.append(Constraint(arg, facets, None, f"{match['loc']}: {msg}"))
    return found


def _business(clause: str, arg: str, prop: Mapping[str, Any]) -> Constraint | None:
    """One clause's rule for `arg`: a range, bounds, a length, a choice, a pattern, a format, or a thing to list."""
    facets: dict[str, Any] = {}
    text = prop.get("type") == "string" or bool(_LENGTH.search(clause))
    for pattern in _RANGE:
        if m := pattern.search(clause):
            low, high = sorted((_num(m[1]), _num(m[2])))
            facets.update(
                {"minLength": int(low), "maxLength": int(high)} if text else {"minimum": low, "maximum": high}
            )
            break
    else:
        for pattern, facet in _BOUNDS:
            if m := pattern.search(clause):
                if text:
                    facets["minLength" if facet in ("minimum", "exclusiveMinimum") else "maxLength"] = int(
                        _num(m[1])
                    )
                else:
                    facets[facet] = _num(m[1])
    if p := _PATTERN.search(clause):
        facets["pattern"] = p["p"]
    # "must be one of a, b", or the things themselves listed: "tanks: rain, well", "vents are a, b".
    one = stem(arg).removesuffix("s")  # `crops` lists as "crops are ...", like `tank` as "tanks: ..."
    listing = re.compile(rf"\b{re.escape(one)}s\s*(?:are|:)\s*(?P<list>[^.;\n\])}}]+)", re.I)
    for m in (*_choices(clause), listing.search(clause)):
        if not facets and m is not None and len(items := _items(m["list"])) >= 2:
            facets["enum"] = items
    if not facets and (digits := _DIGITS.search(clause)) and prop.get("type") in (None, "string"):
        word = digits[1].lower()
        count = int(word) if word.isdigit() else _COUNTS[word]
        facets["pattern"] = f"^[1-9][0-9]{{{count - 1}}}$"
    if not facets and _FUTURE.search(clause):
        facets["format"] = prop.get("format") or "date"
        facets["x-days-ahead"] = 7
    if not facets:
        fmt = next((f for pattern, f in _FORMATS if pattern.search(clause)), None)
        if fmt is not None and (prop.get("type") in (None, "string")):
            facets["format"] = fmt
    listed = _thing(clause)
    if not facets and _REQUIRED.search(clause):
        facets["x-required"] = True  # an argument the schema left optional that this call needs
    if not facets and listed is None:
        return None
    return Constraint(arg, facets, listed, clause[:200])


def _choices(clause: str) -> list[re.Match[str]]:
    """Every place a clause may list choices, overlapping: "not valid in partition 'dev' (valid: a, b)"."""
    found, at = [], 0
    while (m := _ONE_OF.search(clause, at)) is not None:
        found.append(m)
        at = m.start() + 1
    return found


def _thing(clause: str) -> str | None:
    """What the server says it does not know, or says to list first ("bed"), singular."""
    for pattern in (_LIST_FIRST, _NOT_FOUND, _UNKNOWN):
        if (m := pattern.search(clause)) and m["thing"].lower() not in _NOISE:
            return singular(m["thing"].lower())
    return None


def singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _items(listing: str) -> list[str]:
    parts = re.split(r"\s*(?:,|\bor\b|\||/(?=\s)|\band\b)\s*", listing.strip())
    items: list[str] = []
    for part in parts:
        m = _ITEM.match(part.strip())
        if m is None:
            return items if len(items) >= 2 else []
        items.append(m[1])
    return items


def _num(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() else value


def stem(arg: str) -> str:
    """What an argument names (`bed_id`: "bed", `vent`: "vent")."""
    return re.sub(r"_?(id|ids|key|ref|handle|uuid|name)$", "", arg, flags=re.I).lower() or arg.lower()


def concerns(clause: str, args: Mapping[str, Any], names: list[str] | None = None) -> list[str]:
    """The arguments a clause is about: by name, by what they name, by the value quoted back, else the only one."""
    low = clause.lower()
    pool = names or list(args)

    def says(word: str) -> bool:
        return bool(word) and re.search(rf"\b{re.escape(word)}s?\b", low) is not None

    def field(arg: str) -> str:
        return arg.lower().rsplit(".", 1)[-1]  # a field of an object argument is said by its own name

    named = [a for a in pool if says(field(a)) or says(field(a).replace("_", " "))]
    if not named:
        named = [a for a in pool if len(stem(a)) > 2 and says(stem(a))]
    if not named:
        # The value quoted back ('x'), or after a colon at the end ("invalid email: x"); a list's items too.
        named = [
            a
            for a, v in args.items()
            for item in (v if isinstance(v, list) else [v])
            if isinstance(item, str | int)
            and not isinstance(item, bool)
            and re.search(rf"['\"`]{re.escape(str(item))}['\"`]|:\s*{re.escape(str(item))}\s*$", clause)
        ]
        named = list(dict.fromkeys(named))
    # A value quoted back names one argument: when several were sent the same, the first is meant.
    named = named[:1] if named and not any(says(field(a)) or says(stem(field(a))) for a in named) else named
    if not named and len(args) == 1:
        named = list(args)
    return named


def value(prop: Mapping[str, Any], facets: Mapping[str, Any]) -> Any | None:
    """The value a range asks for (its middle, never an edge a server may exclude), a date ahead of
    today when the server said the one sent has passed; None: `arguments` chooses."""
    if isinstance(ahead := facets.get("x-days-ahead"), int):
        day = _dt.date.today() + _dt.timedelta(days=ahead)
        return f"{day.isoformat()}T12:00:00Z" if facets.get("format") == "date-time" else day.isoformat()
    low = facets.get("minimum", facets.get("exclusiveMinimum"))
    high = facets.get("maximum", facets.get("exclusiveMaximum"))
    if low is None or high is None or "enum" in facets:
        return None
    middle = (low + high) / 2
    integer = prop.get("type") == "integer" or (
        isinstance(low, int) and isinstance(high, int) and prop.get("type") != "number"
    )
    return int(middle) if integer else middle
