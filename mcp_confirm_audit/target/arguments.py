"""Zero configuration: argument values a real server accepts, and another one of the same shape.

A value comes from the schema first (`const`, `default`, `examples`, `enum`),
then from what another tool already returned under the argument's name (an id
a listing tool gave), then from what the value must look like (`format`, then
the argument's name: a phone is E.164, a date is today), then the smallest
value its type allows. A `pattern` is honoured last: a value that does not
match it is replaced by the shortest string that does. The harness's own
filler text never lands in a typed field (a phone, a date, an email, an id
with a pattern): a real server refuses it before it asks anything.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from collections.abc import Collection, Mapping
from typing import Any

FILLER = "mcp-confirm-audit"

# A fictional number in the range the North American plan keeps for examples (555-01xx).
E164 = "+12025550123"
EMAIL = "audit@example.com"
URL = "https://example.com/mcp-confirm-audit"


def _today() -> _dt.date:
    # The server runs on this machine: its "today" is this machine's local date.
    return _dt.date.today()


def _by_format(fmt: str) -> str | None:
    today = _today()
    return {
        "email": EMAIL,
        "idn-email": EMAIL,
        "uri": URL,
        "url": URL,
        "iri": URL,
        "uri-reference": URL,
        "date": today.isoformat(),
        "date-time": f"{today.isoformat()}T12:00:00Z",
        "time": "12:00:00",
        "duration": "PT1M",
        "uuid": "00000000-0000-4000-8000-000000000001",
        "ipv4": "127.0.0.1",
        "ipv6": "::1",
        "hostname": "localhost",
        "idn-hostname": "localhost",
        "phone": E164,
        "tel": E164,
        "e164": E164,
        "phone-number": E164,
    }.get(fmt)


# What an argument's name says its value looks like, for a string with no format.
_NAMED: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"phone|mobile|msisdn|(^|_)tel(ephone)?($|_)|cell(_?number)?$|whatsapp", re.I), "phone"),
    (re.compile(r"e_?mail", re.I), "email"),
    (re.compile(r"(^|_)(url|uri|link|webhook|endpoint|callback)($|_)", re.I), "uri"),
    (re.compile(r"(_at|_time|timestamp|datetime)$", re.I), "date-time"),
    (re.compile(r"(^|_)(date|day|deadline|due|when|until|since)($|_)|_on$", re.I), "date"),
    (re.compile(r"uuid|guid", re.I), "uuid"),
    (re.compile(r"(^|_)ip(_?addr(ess)?)?$", re.I), "ipv4"),
    (re.compile(r"(^|_)host(name)?$", re.I), "hostname"),
)
_WORDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"currency", re.I), "USD"),
    (re.compile(r"country", re.I), "US"),
    (re.compile(r"(^|_)(lang|language|locale)$", re.I), "en"),
    (re.compile(r"time_?zone|(^|_)tz$", re.I), "UTC"),
)


# An argument that holds a command line: named for one, or described as one in the tool's schema.
# Zero configuration gives such an argument a file action (`discovery.COMMAND_ACTION`); the
# chained-command family chains its value after a command the gate lets through.
COMMAND_LINE_NAME = re.compile(
    r"^(command|cmd|commands?[_-]?line|cmdline|script|shell|shell[_-]?(command|cmd|script)|bash([_-]?command)?)$",
    re.I,
)
COMMAND_LINE_DESCRIBED = re.compile(
    r"\b(shell|bash|terminal)\b|\bcommand[ -]?line\b|\bcommand\s+to\s+(run|execute)\b", re.I
)


def holds_command_line(name: str, prop: Any) -> bool:
    """Whether argument `name` (schema `prop`) holds a command line, by its name or its description."""
    described = str(prop.get("description") or "") if isinstance(prop, Mapping) else ""
    return COMMAND_LINE_NAME.match(name) is not None or COMMAND_LINE_DESCRIBED.search(described) is not None


# A boolean that carries the decision itself: host-terminal-mcp's `approve_command(command, approve)`.
DECISION_ARG = re.compile(r"^(approved?|approval|confirm(ed)?|allow(ed)?|accept(ed)?|grant(ed)?|yes)$", re.I)


def decides(name: str, prop: Any) -> bool:
    """Whether argument `name` is a boolean that says yes or no: `true` when the harness approves.

    `value_for` gives a boolean `false`, the smallest value; sent so to an approve step it says no, and
    the approval the harness meant to give never happens.
    """
    if not isinstance(prop, Mapping) or not DECISION_ARG.match(name):
        return False
    kinds = {prop.get("type"), *(o.get("type") for o in prop.get("anyOf") or () if isinstance(o, Mapping))}
    return "boolean" in kinds


def named_format(name: str) -> str | None:
    """The format an argument's name implies (`phone_number`: "phone"), if any."""
    return next((fmt for pattern, fmt in _NAMED if pattern.search(name)), None)


def value_for(name: str, prop: Mapping[str, Any], listed: Mapping[str, Any] | None = None) -> Any:
    """A value for argument `name` with schema `prop`; `listed`: values other tools returned, by field."""
    for key in ("const", "default"):
        if key in prop:
            return prop[key]
    for key in ("examples", "enum"):
        if isinstance(prop.get(key), list) and prop[key]:
            return prop[key][0]
    for union in ("anyOf", "oneOf"):
        options = [o for o in prop.get(union) or () if isinstance(o, Mapping) and o.get("type") != "null"]
        if options:
            return value_for(name, options[0], listed)
    kind = prop.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    seen = (listed or {}).get(name)
    if seen is not None and _fits(seen, kind, prop):
        return seen
    if kind in ("integer", "number"):
        return _number(prop, integer=kind == "integer")
    if kind == "boolean":
        return False
    if kind == "array":
        if isinstance(seen, list) and seen and _items_fit(seen, prop):
            return list(seen)  # what the target itself reported (the arm's current joints, say)
        items = prop.get("items")
        item: Mapping[str, Any] = items if isinstance(items, Mapping) else {}
        singular = name[:-1] if name.endswith("s") else name
        # A list an action requires holds one item at least: an empty one is refused before it asks.
        return [value_for(singular, item, listed) for _ in range(max(1, int(prop.get("minItems") or 0)))]
    if kind == "object":
        props = prop.get("properties") or {}
        return {k: value_for(k, props.get(k) or {}, listed) for k in prop.get("required") or ()}
    return _text(name, prop)


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (Mapping,),
}


def takes(prop: Mapping[str, Any], value: Any) -> bool:
    """Whether a schema property's type admits `value` at all (its type, or one of a union's)."""
    options = [o for o in (prop.get("anyOf") or prop.get("oneOf") or ()) if isinstance(o, Mapping)]
    if options:
        return any(takes(o, value) for o in options)
    kind = prop.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    if None in kinds:
        return True  # no type said: anything goes
    if value is None:
        return "null" in kinds
    if isinstance(value, bool):
        return "boolean" in kinds
    return any(isinstance(value, _JSON_TYPES.get(str(k), ())) for k in kinds)


def typed(prop: Mapping[str, Any]) -> bool:
    """Whether a schema property says its type (itself or in a union), not a bare `$ref` or nothing."""
    options = [o for o in (prop.get("anyOf") or prop.get("oneOf") or ()) if isinstance(o, Mapping)]
    return "type" in prop or any(typed(o) for o in options)


def _items_fit(values: list[Any], prop: Mapping[str, Any]) -> bool:
    least, most = prop.get("minItems"), prop.get("maxItems")
    if (isinstance(least, int) and len(values) < least) or (isinstance(most, int) and len(values) > most):
        return False
    items = prop.get("items")
    kind = items.get("type") if isinstance(items, Mapping) else None
    return all(_fits(v, kind, items if isinstance(items, Mapping) else {}) for v in values)


def _fits(value: Any, kind: Any, prop: Mapping[str, Any]) -> bool:
    if kind in ("integer", "number"):
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind in (None, "string"):
        if not isinstance(value, str) or not value:
            return False
        pattern = prop.get("pattern")
        return not isinstance(pattern, str) or _matches(pattern, value)
    return False


def _text(name: str, prop: Mapping[str, Any]) -> str:
    fmt = prop.get("format")
    text = _by_format(str(fmt)) if fmt else None
    if text is None and (implied := named_format(name)) is not None:
        text = _by_format(implied)
    if text is None:
        text = next((word for pattern, word in _WORDS if pattern.search(name)), FILLER)
    least, most = int(prop.get("minLength") or 0), prop.get("maxLength")
    if text is FILLER or text == FILLER:
        text = text.ljust(least, "x")
        text = text[: int(most)] if isinstance(most, int) and most >= least else text
    pattern = prop.get("pattern")
    if isinstance(pattern, str) and not _matches(pattern, text):
        text = matching(pattern, least, most if isinstance(most, int) else None) or text
    return text


# What an action writes, by the last word of the argument's name (`content`, `new_value`, `noteBody`):
# a name, a key or an id names the subject instead, and the place its effect shows with it.
_WRITTEN = frozenset(
    {
        "body",
        "caption",
        "comment",
        "content",
        "contents",
        "description",
        "html",
        "label",
        "markdown",
        "memo",
        "message",
        "payload",
        "summary",
        "text",
        "value",
    }
)
# The harness's filler as a use of an action is given it: plain, varied (`-2`), marked as one use's (` #7`).
_MADE_UP = re.compile(re.escape(FILLER) + r"(?:-\d+)?(?: #\d+)?")


def made_up(value: Any) -> bool:
    """Whether `value` is the harness's own filler, as it gives it to a use of an action (never a value it
    derived to name nothing, `mcp-confirm-audit0000`)."""
    return isinstance(value, str) and _MADE_UP.fullmatch(value) is not None


def writes(name: str) -> bool:
    """Whether an argument, by its name, holds what the action writes rather than what it is written to."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower().replace("-", "_").split("_")
    return words[-1] in _WRITTEN or (len(words) > 1 and words[0] == "new")


def for_use(
    arguments: Mapping[str, Any],
    mark: str,
    schema: Mapping[str, Any] | None = None,
    fixed: Collection[str] = (),
) -> dict[str, Any]:
    """`arguments` with the filler of each argument that holds what the action writes marked as this use's.

    Two uses that write the same thing are one change asked for twice: a server that compares
    what it would write with what is there refuses the second, "nothing to change" (mcp-changeset's
    notes), and an attack on it then judges nothing. Marked (`mcp-confirm-audit #7`), each use
    writes its own, still the harness's filler and harmless; its subject (a name, a key) is left
    alone, so its effect shows where the controls saw it. A marked value the argument's lengths or
    pattern would refuse is not made; `fixed`: arguments the profile spelled out, never changed.
    """
    props = (schema or {}).get("properties") or {}
    out = dict(arguments)
    for name, value in arguments.items():
        if not mark or name in fixed or not made_up(value) or not writes(name) or " #" in value:
            continue
        prop = props.get(name) or {}
        own = f"{value} #{mark}"
        most, pattern = prop.get("maxLength"), prop.get("pattern")
        if (isinstance(most, int) and len(own) > most) or (
            isinstance(pattern, str) and not _matches(pattern, own)
        ):
            continue
        out[name] = own
    return out


def _matches(pattern: str, value: str) -> bool:
    try:
        return re.search(pattern, value) is not None
    except re.error:
        return True  # a pattern Python cannot read is the server's to enforce, not ours to guess


@functools.lru_cache(maxsize=256)
def matching(pattern: str, least: int = 0, most: int | None = None) -> str | None:
    """The shortest, simplest string the JSON Schema `pattern` matches (within the lengths), or None.

    hypothesis's `from_regex` understands the whole regular-expression syntax
    (classes, repetition, anchors, lookaround) and `find` shrinks what it drew
    to the simplest match, so the value is the same on every run.
    """
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis import strategies as st
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    def fits(text: str) -> bool:
        return len(text) >= least and (most is None or len(text) <= most) and "\n" not in text

    try:
        strategy = st.from_regex(pattern)
        quiet = settings(
            database=None,
            derandomize=True,
            max_examples=200,
            phases=(Phase.generate, Phase.shrink),
            suppress_health_check=list(HealthCheck),
        )
        return str(find(strategy, fits, settings=quiet))
    except (NoSuchExample, Unsatisfiable, re.error, ValueError, TypeError):
        return None


def _number(prop: Mapping[str, Any], *, integer: bool) -> int | float:
    value: float = 1
    if isinstance(prop.get("minimum"), int | float):
        value = max(value, prop["minimum"])
    if isinstance(prop.get("exclusiveMinimum"), int | float) and value <= prop["exclusiveMinimum"]:
        value = prop["exclusiveMinimum"] + 1
    if isinstance(prop.get("maximum"), int | float) and value > prop["maximum"]:
        value = prop["maximum"]
    if isinstance(step := prop.get("multipleOf"), int | float) and step > 0 and value % step:
        value = (value // step + 1) * step
    return int(value) if integer else float(value)


_E164 = re.compile(r"\+[1-9]\d{6,14}")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_DATETIME = re.compile(r"(\d{4}-\d{2}-\d{2})(T.*)")
_EMAIL = re.compile(r"([^@\s]+)@([^@\s]+)")


def another(value: str, variant: int, name: str = "", prop: Mapping[str, Any] | None = None) -> str | None:
    """Another valid value of the same shape (a phone, a date, an id), or None for plain text.

    What makes the decoy of a phone number another phone number, not
    `+12025550123-1` or `15559990001-1`, which no server would take as one. The
    shape comes from the value (E.164, an ISO date, an email, trailing digits:
    `15559990001`, `S-102`, `pay-0005` count on), checked against what the
    argument must look like (its `pattern`, lengths, its `format` or its name);
    a `pattern` the counted value breaks gives another string that matches it.
    """
    if variant == 0:
        return value
    prop = prop or {}
    for candidate in (_shaped(value, variant), _counted_on(value, variant)):
        if candidate is not None and candidate != value and _valid(candidate, name, prop):
            return candidate
    pattern = prop.get("pattern")
    if isinstance(pattern, str):
        least, most = int(prop.get("minLength") or 0), prop.get("maxLength")
        return _other_match(pattern, value, variant, least, most if isinstance(most, int) else None)
    return None


def _shaped(value: str, variant: int) -> str | None:
    if _E164.fullmatch(value):
        return value[:-2] + f"{(int(value[-2:]) + variant) % 100:02d}"
    if _ISO_DATE.fullmatch(value):
        try:
            return (_dt.date.fromisoformat(value) + _dt.timedelta(days=variant)).isoformat()
        except ValueError:
            return None
    if (timed := _ISO_DATETIME.fullmatch(value)) is not None:
        later = _shaped(timed.group(1), variant)
        return None if later is None else later + timed.group(2)
    if (mail := _EMAIL.fullmatch(value)) is not None:
        return f"{mail.group(1)}+{variant}@{mail.group(2)}"
    return None


_TRAILING_DIGITS = re.compile(r"(\d+)$")


def _counted_on(value: str, variant: int) -> str | None:
    """`S-102` -> `S-103`, `15559990001` -> `15559990002`: the trailing number counted on, its width kept."""
    found = _TRAILING_DIGITS.search(value)
    if found is None:
        return None
    digits = found.group(1)
    counted = str((int(digits) + variant) % 10 ** len(digits)).zfill(len(digits))
    return value[: found.start()] + counted


def _valid(value: str, name: str, prop: Mapping[str, Any]) -> bool:
    least, most = prop.get("minLength"), prop.get("maxLength")
    if (isinstance(least, int) and len(value) < least) or (isinstance(most, int) and len(value) > most):
        return False
    pattern = prop.get("pattern")
    if isinstance(pattern, str) and not _matches(pattern, value):
        return False
    fmt = prop.get("format") or named_format(name)
    if fmt in ("phone", "tel", "e164", "phone-number"):
        return re.fullmatch(r"\+?[1-9]\d{6,14}", value) is not None
    if fmt == "date":
        return _ISO_DATE.fullmatch(value) is not None
    if fmt == "email":
        return _EMAIL.fullmatch(value) is not None
    return True


def _other_match(pattern: str, value: str, variant: int, least: int, most: int | None) -> str | None:
    """A string `pattern` matches that is not `value`: the simplest one, or another for a later variant."""
    from hypothesis import HealthCheck, Phase, find, settings
    from hypothesis import strategies as st
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    seen: list[str] = []

    def fits(text: str) -> bool:
        ok = len(text) >= least and (most is None or len(text) <= most) and "\n" not in text
        return ok and text != value and text not in seen

    quiet = settings(
        database=None,
        derandomize=True,
        max_examples=300,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
    )
    try:
        strategy = st.from_regex(pattern)
        for _ in range(max(1, variant)):
            seen.append(str(find(strategy, fits, settings=quiet)))
    except (NoSuchExample, Unsatisfiable, re.error, ValueError, TypeError):
        return None
    return seen[-1]


# An argument that takes ids of things (`link_ids`, `linkIds`, `ids`) or one id (`link_id`).
_ID_ARGUMENT = (
    re.compile(r"^(?:(?P<stem>.+)_)?(ids?|uuids?)$", re.I),
    re.compile(r"^(?P<stem>.+)_(keys?)$", re.I),
    re.compile(r"^(?P<stem>.*[a-z])(Ids?|Keys?|Uuids?)$"),
)


def ids_for(
    properties: Mapping[str, Any], touched: Mapping[str, list[Any]], skip: Collection[str] = ()
) -> dict[str, Any]:
    """Id arguments filled with the ids of the entries the action touched, by what the argument is of.

    `link_ids` takes the ids listed under `links` (a list, all of them), `link_id`
    one of them; a bare `ids` only when one kind of entry was touched. Each id
    must fit the argument's type (a list of integers takes no "l4"). `skip`: the
    arguments the action's own values fill already.
    """
    out: dict[str, Any] = {}
    for name, prop in properties.items():
        found = next((m for pattern in _ID_ARGUMENT if (m := pattern.match(name)) is not None), None)
        if name in skip or found is None or not isinstance(prop, Mapping):
            continue
        stem = (found.group("stem") or "").lower()
        kinds = [k for k in touched if stem and str(k).lower().rstrip("s") == stem.rstrip("s")]
        if not stem and len(touched) == 1:
            kinds = list(touched)
        ids = [i for k in kinds for i in touched[k]]
        array = _array_of(prop)
        if array is not None:
            fit = [i for i in ids if takes(array, i)]
            if fit:
                out[name] = fit
        elif fit := [i for i in ids if takes(prop, i) and not isinstance(i, list)]:
            out[name] = fit[0]
    return out


def _array_of(prop: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The item schema of an array argument (of a union's array option too); None if it takes no list."""
    options = [o for o in (prop.get("anyOf") or prop.get("oneOf") or ()) if isinstance(o, Mapping)]
    for option in (prop, *options):
        kind = option.get("type")
        if kind == "array" or (isinstance(kind, list) and "array" in kind):
            items = option.get("items")
            return items if isinstance(items, Mapping) else {}
    return None
