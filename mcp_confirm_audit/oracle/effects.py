"""Effects beyond the sandbox tree: the one protocol every kind of probe speaks, and the one differ.

A probe observes something the confirmed action may change (a read-only
tool's result, a file's rows, a database query, the requests the harness's
sink received) and returns it as a JSON-able value. Probes do I/O; judging
does not: the transcript records what each probe saw before and after, and
`changes` compares the two, a pure function the verdict calls.

A kind is one small module in this folder, registered with `@probe_kind`;
the engine knows `EffectProbe`, never files, tables or sinks.
"""

from __future__ import annotations

import difflib
import fnmatch
import importlib
import json
import math
import pkgutil
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class ProbeSpec:
    """One entry of a profile's `effect:` list, or one learned by zero configuration."""

    kind: str  # "tool", "file", "sqlite", "sink", "hook"
    # How reports and `ignore:` name what it sees: "tool:list_payments", "file:ledger.json".
    name: str
    options: Mapping[str, Any] = field(default_factory=dict)


class ProbeEnv(Protocol):
    """What a probe may use to look: the root, a read-only call, the sink."""

    @property
    def root(self) -> Path: ...

    async def call_read_only(self, tool: str, arguments: Mapping[str, Any]) -> Any:
        """The JSON value of a tool's result: structured content, else JSON text, else the text."""
        ...

    def sink_requests(self) -> list[dict[str, Any]]:
        """Every request the harness's loopback sink has received so far, in order."""
        ...


class EffectProbe(Protocol):
    # Read-only, so a frozen dataclass is a probe.
    @property
    def name(self) -> str: ...

    async def observe(self, env: ProbeEnv) -> Any:
        """A JSON-able value; equal before and after when the action did nothing this probe can see."""
        ...


ProbeFactory = Callable[[ProbeSpec], EffectProbe]
_KINDS: dict[str, ProbeFactory] = {}


def probe_kind(kind: str) -> Callable[[ProbeFactory], ProbeFactory]:
    def register(factory: ProbeFactory) -> ProbeFactory:
        known = _KINDS.get(kind)
        if known is not None and (known.__module__, known.__qualname__) != (
            factory.__module__,
            factory.__qualname__,
        ):
            raise ValueError(f"probe kind {kind!r} is registered twice")
        _KINDS[kind] = factory
        return factory

    return register


def _load_kinds() -> None:
    """Import every module of `oracle/kinds/` once, so each registers itself; no list of them is kept."""
    from . import kinds

    for info in pkgutil.iter_modules(kinds.__path__):
        importlib.import_module(f"{kinds.__name__}.{info.name}")


def build_probe(spec: ProbeSpec) -> EffectProbe:
    _load_kinds()

    try:
        factory = _KINDS[spec.kind]
    except KeyError:
        raise ValueError(f"unknown effect kind {spec.kind!r}; known: {', '.join(sorted(_KINDS))}") from None
    return factory(spec)


# -- judging: pure ---------------------------------------------------------------

# The value recorded for a probe that could not look (the target stopped
# answering): never compared, because a crash is not an effect.
UNOBSERVED = "$unobserved"
# Why a read-only tool was not asked: its target's question was open and it serves one request at a time.
WHILE_ASKING = "not asked while the target's question was open: it serves one request at a time"
# A probe name observed on another connection than the first: `tool:list@replica-1-2`.
_PLACE = re.compile(r"@[^.\[]+")


def probe_changes(
    before: Mapping[str, Any], after: Mapping[str, Any], bookkeeping: Iterable[str]
) -> tuple[list[str], list[str]]:
    """(the changes that count, the changes that are bookkeeping) between two observations."""
    patterns = tuple(bookkeeping)
    counted: list[str] = []
    ignored: list[str] = []
    for name in sorted(set(before) & set(after)):
        was, now = before[name], after[name]
        if _unobserved(was) or _unobserved(now):
            continue
        for path in changes(name, was, now):
            (ignored if is_ignored(_PLACE.sub("", path), patterns) else counted).append(path)
    return counted, ignored


def _unobserved(value: Any) -> bool:
    return isinstance(value, Mapping) and UNOBSERVED in value


def unasked_while_asking(*observations: Mapping[str, Any] | None) -> list[str]:
    """The probes of these observations left unasked because the target's question was open (`WHILE_ASKING`)."""
    return sorted(
        {
            name
            for seen in observations
            for name, value in (seen or {}).items()
            if _unobserved(value) and value[UNOBSERVED] == WHILE_ASKING
        }
    )


_INDEX = re.compile(r"\[\d+\]")


def changes(name: str, before: Any, after: Any) -> list[str]:
    """Every place where `after` differs from `before`, named `name.field[3].cell`.

    Mappings are compared key by key and lists item by item, so one changed
    cell of one row is named as that cell, not as the whole table. Values are
    compared as JSON sees them: `true` is not `1`, and NaN equals NaN (a
    value that is "not a number" both times has not changed). The walk keeps
    its own stack, so a result nested deeper than Python's recursion limit is
    compared like any other.
    """
    return [where for where, _ in changes_by_kind(name, before, after)]


def changes_by_kind(name: str, before: Any, after: Any) -> list[tuple[str, str]]:
    """`changes`, each with how it changed: `added` (new there), `removed` (gone), `changed`."""
    out: list[tuple[str, str]] = []
    pending: list[tuple[str, Any, Any]] = [(name, before, after)]
    while pending:
        where, a, b = pending.pop()
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            keys = sorted(set(a) | set(b), key=str)
            pending.extend((f"{where}.{k}", a.get(k, _ABSENT), b.get(k, _ABSENT)) for k in reversed(keys))
        elif isinstance(a, list | tuple) and isinstance(b, list | tuple):
            pending.extend(reversed([(f"{where}[{i}]", x, y) for i, x, y in _aligned(a, b)]))
        elif _rows_alone(a, b):
            # A list that appears (or goes) with its rows is as many rows added (or removed), each named:
            # eight redemptions that each append a row to a ledger that had none are eight, not one list.
            rows = (a, []) if b is _ABSENT else ([], b)
            pending.append((where, *rows))
        elif not _same(a, b):
            out.append((where, "added" if a is _ABSENT else "removed" if b is _ABSENT else "changed"))
    return out


def _rows_alone(before: Any, after: Any) -> bool:
    """A non-empty list on one side, nothing on the other."""
    if before is _ABSENT:
        return isinstance(after, list | tuple) and bool(after)
    return after is _ABSENT and isinstance(before, list | tuple) and bool(before)


def probe_places(
    before: Mapping[str, Any], after: Mapping[str, Any], bookkeeping: Iterable[str]
) -> list[str]:
    """The changes that count between two observations, as places: `how where` (see `places`).

    `where` has its list positions wildcarded and the connection it was seen on
    left out: a row added to the ledger is one place, whichever row and replica.
    """
    patterns = tuple(bookkeeping)
    out: set[str] = set()
    for name in sorted(set(before) & set(after)):
        was, now = before[name], after[name]
        if _unobserved(was) or _unobserved(now):
            continue
        for path, how in changes_by_kind(name, *by_rows(was, now)):
            bare = _PLACE.sub("", path)
            if not is_ignored(bare, patterns):
                out.add(f"{how} {generalised(bare)}")
    return sorted(out)


# What a one-line text lost and gained in one change, word by word: (words gone, words new).
Reworded = tuple[frozenset[str], frozenset[str]]


def reworded(
    before: Mapping[str, Any], after: Mapping[str, Any], bookkeeping: Iterable[str]
) -> dict[str, Reworded]:
    """For each `changed` place of `probe_places` that is one line of text: the words it lost and gained.

    A one-line text is one place however many things it says (`4417 · packed · notes: none`):
    a note added and the order cancelled both change it. The words each change replaced tell the
    two apart (`packed` for `cancelled`; `none` for a note), where the place cannot.
    """
    patterns = tuple(bookkeeping)
    out: dict[str, Reworded] = {}
    for name in sorted(set(before) & set(after)):
        was, now = before[name], after[name]
        if _unobserved(was) or _unobserved(now):
            continue
        pending: list[tuple[str, Any, Any]] = [(name, *by_rows(was, now))]
        while pending:
            where, a, b = pending.pop()
            if isinstance(a, Mapping) and isinstance(b, Mapping):
                pending.extend((f"{where}.{k}", a[k], b[k]) for k in a if k in b)
            elif isinstance(a, list | tuple) and isinstance(b, list | tuple):
                pending.extend((f"{where}[{i}]", x, y) for i, x, y in _aligned(a, b) if x is not _ABSENT)
            elif isinstance(a, str) and isinstance(b, str) and a != b:
                bare = _PLACE.sub("", where)
                if is_ignored(bare, patterns):
                    continue
                gone, new = _replaced_words(a, b)
                place = f"changed {generalised(bare)}"
                had_gone, had_new = out.get(place, (frozenset(), frozenset()))
                out[place] = (had_gone | gone, had_new | new)
    return out


def _replaced_words(before: str, after: str) -> Reworded:
    """The words of `before` a change took away, and those it put in, aligned as difflib aligns them."""
    a, b = before.split(), after.split()
    gone: set[str] = set()
    new: set[str] = set()
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            gone.update(a[i1:i2])
            new.update(b[j1:j2])
    return frozenset(gone), frozenset(new)


def another_part(gated: Reworded, attack: Reworded) -> bool:
    """Whether a change of a one-line text is to another part of it than the gated action's change.

    The same change loses or gains a word the gated one did (`packed` gone, or `cancelled` come);
    another part of the text shares neither (a note's `none` gone, `mcp-confirm-audit` come).
    """
    return gated[0].isdisjoint(attack[0]) and gated[1].isdisjoint(attack[1])


def by_rows(before: Any, after: Any) -> tuple[Any, Any]:
    """`before` and `after` with each text of several lines, on either side, read as its rows.

    A probe that answers in text is coarse: read whole, a note added to an order and the
    order's cancellation are one change of it. Row by row (its non-blank lines), the gated
    kind of change is what the approve control did to its rows (a row removed, changed or
    added), and another tool's other change at that place is told apart from it.
    """
    if isinstance(before, str) and isinstance(after, str):
        if "\n" in before.strip() or "\n" in after.strip():
            return _lines(before), _lines(after)
        return before, after
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        pairs = {k: by_rows(before[k], after[k]) for k in before if k in after}
        return (
            {k: pairs[k][0] if k in pairs else v for k, v in before.items()},
            {k: pairs[k][1] if k in pairs else v for k, v in after.items()},
        )
    if isinstance(before, list | tuple) and isinstance(after, list | tuple) and len(before) == len(after):
        paired = [by_rows(a, b) for a, b in zip(before, after, strict=True)]
        return [a for a, _ in paired], [b for _, b in paired]
    return before, after


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


# How a file changed in place is named among places: it says where, not what changed in it.
REWRITTEN = "rewritten"


def disk_places(removed: Iterable[str], changed: Iterable[str], case_dir: str | None) -> list[str]:
    """Sandbox changes as places: the case's own directory is `case/`, whichever case it was.

    So the control's victim and an attack's victim are the same place
    (`removed case/victim.txt`), and a file the target keeps in its root is itself
    (`rewritten root/ledger.json` when it changed in place).
    """

    def where(path: str) -> str:
        if case_dir and (path == case_dir or path.startswith(f"{case_dir}/")):
            return "case" + path[len(case_dir) :]
        return generalised(path)

    return sorted({*(f"removed {where(p)}" for p in removed), *(f"{REWRITTEN} {where(p)}" for p in changed)})


def where_of(place: str) -> str:
    """A place without how it changed: what two tools touching the same thing share."""
    return place.split(" ", 1)[-1]


def at_the_gate(places: Iterable[str], gated: Iterable[str]) -> tuple[list[str], list[str]]:
    """(places of the gated kind: the same change at the same place, other changes at a gated place).

    A file rewritten in place is the same change only when nothing more precise was seen of the
    gated effect: when its rows, a probe's fields or a removed file say what the gated action did,
    they decide, and another rewrite of that file (a row added where the gated one removed rows)
    is another change at the same place.
    """
    own = set(gated)
    precise = any(not p.startswith(f"{REWRITTEN} ") for p in own)
    kind = {p for p in own if not (precise and p.startswith(f"{REWRITTEN} "))}
    shown = where_it_shows(own)
    found = sorted(set(places))
    elsewhere = [p for p in found if p not in kind and _within(where_of(p), shown)]
    return [p for p in found if p in kind], elsewhere


def where_it_shows(gated: Iterable[str]) -> set[str]:
    """Where the gated effect shows, from its places: each `where`, less a file a probe reads by rows.

    A file a probe reads by rows (a database's query, a JSON store) where that probe saw the gated
    effect: the rows say where it shows, and a row of theirs changed is at the gated place. The
    file's bytes rewritten say only that something in it changed, perhaps another table or key
    (finamatik-ops-mcp's add_note writes ops.db's notes, its gated create_order the orders a
    declared query reads): not a place of their own.
    """
    wheres = {where_of(p) for p in gated}
    return {where for where in wheres if not _read_by_rows(where, wheres)}


def _read_by_rows(where: str, wheres: Collection[str]) -> bool:
    """Whether `where`, a file of the root, is read by a probe whose change is among `wheres`."""
    if not where.startswith("root/"):
        return False
    database = _SQLITE_COMPANION.sub("", where.removeprefix("root/"))
    return any(_within(other, {f"{kind}:{database}" for kind in ("sqlite", "file")}) for other in wheres)


def _within(where: str, places: Collection[str]) -> bool:
    """`where` is one of `places`, or a field or row inside one a probe reads (`file:s.json.items[*].name`)."""
    return where in places or any(
        ":" in place and where.startswith(place) and where[len(place)] in ".[" for place in places
    )


# Fields that name a row or an entry: lists of mappings that all carry one are aligned by it.
_IDENTIFYING = ("id", "uuid", "key", "name", "path")


def _aligned(a: Sequence[Any], b: Sequence[Any]) -> list[tuple[int, Any, Any]]:
    """The items of two lists paired as the same entry, before and after (`_ABSENT` where one is new or gone).

    By position, one entry removed from the middle would read as every later entry changed (and a race
    would count each of them); so rows that carry an identifying field are paired by it, and anything
    else by the longest runs the two lists share. A pair is named by its position after, a removed entry
    by its position before.
    """
    try:
        return _paired(a, b)
    except RecursionError:
        # Too deep to compare as wholes: by position, leaf by leaf, on the walk's own stack.
        size = max(len(a), len(b))
        return [(i, a[i] if i < len(a) else _ABSENT, b[i] if i < len(b) else _ABSENT) for i in range(size)]


def _paired(a: Sequence[Any], b: Sequence[Any]) -> list[tuple[int, Any, Any]]:
    if len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True)):
        return []
    key = _identifying_key(a, b)
    if key is not None:
        where_after = {_canonical(y[key]): j for j, y in enumerate(b)}
        out = []
        for i, x in enumerate(a):
            j = where_after.pop(_canonical(x[key]), None)
            out.append((i, x, _ABSENT) if j is None else (j, x, b[j]))
        out.extend((j, _ABSENT, b[j]) for j in where_after.values())
        return sorted(out, key=lambda item: item[0])
    pairs: list[tuple[int, Any, Any]] = []
    matcher = difflib.SequenceMatcher(
        None, [_canonical(x) for x in a], [_canonical(y) for y in b], autojunk=False
    )
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        common = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        pairs.extend((j1 + k, a[i1 + k], b[j1 + k]) for k in range(common))
        pairs.extend((i, a[i], _ABSENT) for i in range(i1 + common, i2))
        pairs.extend((j, _ABSENT, b[j]) for j in range(j1 + common, j2))
    return pairs


def _identifying_key(a: Sequence[Any], b: Sequence[Any]) -> str | None:
    items = [*a, *b]
    if not items or not all(isinstance(item, Mapping) for item in items):
        return None
    for key in _IDENTIFYING:
        values = [item.get(key) for item in items]
        scalar = all(isinstance(v, str | int) and not isinstance(v, bool) for v in values)
        if scalar and all(len({_canonical(item[key]) for item in side}) == len(side) for side in (a, b)):
            return key
    return None


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


def _same(a: Any, b: Any) -> bool:
    # bool is an int in Python; in JSON (and to a user) true and 1 are different values.
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return bool(a == b)


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


_ABSENT = _Absent()


def generalised(path: str) -> str:
    """A change's name with list positions wildcarded: what one bookkeeping pattern covers."""
    return _INDEX.sub("[*]", path)


def probe_of(path: str, names: Iterable[str]) -> str | None:
    """The probe among `names` whose change `path` is, by its exact name; None if none.

    A probe path is its name, then a field (`.status`), a position (`[2]`), a row
    (`#3`) or the replica it was seen on (`@replica-1`): `file:settings.json[2].status`
    is a change of `file:settings.json`, whose own dot is part of its name.
    """
    found = [name for name in names if path == name or (path.startswith(name) and path[len(name)] in ".[#@")]
    return max(found, key=len) if found else None


# A probe path starts with its probe's name: a kind and a colon ("tool:list_jobs",
# "file:jobs.csv"), or a bare kind ("sink"). A sandbox path starts with its folder ("root/").
_PROBE_PATH = re.compile(r"[A-Za-z_][\w-]*(?::|$|[.\[#])")
# Where a probe's name ends and its fields begin. A file's name has a dot of its
# own ("file:jobs.csv"): its last extension belongs to the name, not to a field.
_PROBE_NAME = re.compile(r"(?:(?:file|sqlite):(?:[^\[#]*/)?[^/.\[#]*(?:\.[^/.\[#]+)?|[^.\[#]*)(?:#\d+)?")
_FIELD = re.compile(r"\.([^.\[]+)")
_BARE = re.compile(r"[^./:\[\]*?]+")
# A position in a pattern is literal ("[*]" or "[3]"), not a glob character class.
_PATTERN_INDEX = re.compile(r"\[(\*|\d+)\]")


def is_ignored(path: str, patterns: Iterable[str]) -> bool:
    """Whether a change (a probe path or a sandbox entry) is bookkeeping.

    A pattern names a probe path (`tool:get_state.updated_at`, `tool:list_jobs[*].updated_at`,
    and everything below it), a glob over probe paths (`tool:list_jobs[*].meta.*`), a bare
    field name that matches that field anywhere in a probe's value (`updated_at`), or a path
    or glob relative to the root (`audit.jsonl`, `root/audit.jsonl`, `logs`, `logs/*`).
    Nothing outside the root is ever bookkeeping: a write there is what attacks look for.
    """
    if _PROBE_PATH.match(path):
        patterns = tuple(patterns)
        if any(_probe_path_matches(path, pattern) for pattern in patterns):
            return True
        # A file read by rows is still that file: a log learned as bookkeeping on disk is
        # bookkeeping in every row and cell of it too.
        name = _PROBE_NAME.match(path)
        inside = name.group(0).removeprefix("file:") if name and path.startswith("file:") else None
        return inside is not None and any(_root_path_matches(inside, pattern) for pattern in patterns)
    if path != "root" and not path.startswith("root/"):
        return False
    inside = path.removeprefix("root").lstrip("/")
    database = _SQLITE_COMPANION.sub("", inside)
    return any(
        _root_path_matches(inside, pattern)
        or _root_path_matches(database, _SQLITE_COMPANION.sub("", pattern))
        for pattern in patterns
    )


# SQLite keeps one database in its file and, while writing, a write-ahead log and its index beside
# it (`-wal`, `-shm`) or a rollback journal (`-journal`). A write lands in the log first and reaches
# the file itself at a checkpoint SQLite chooses (every thousand pages, the last connection closing):
# one database, whichever of its files moved, so a database learned as bookkeeping through one of
# them (a proxy's log of calls: toolpermit's audit.db-wal) is bookkeeping through the others.
_SQLITE_COMPANION = re.compile(r"-(?:wal|shm|journal)$")


def _probe_path_matches(path: str, pattern: str) -> bool:
    general = generalised(path)
    name = _PROBE_NAME.match(general)
    name_end = name.end() if name else 0
    if _BARE.fullmatch(pattern) and pattern in _FIELD.findall(general[name_end:]):
        return True
    for candidate in (path, general):
        if candidate == pattern:
            return True
        # Everything below a probe path, but a pattern is never part of a name ("file:ledger").
        if len(pattern) >= name_end and candidate.startswith((f"{pattern}.", f"{pattern}[")):
            return True
    glob = _PATTERN_INDEX.sub(lambda m: f"[[]{m.group(1)}[]]", pattern)
    return fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(general, glob)


def _root_path_matches(inside: str, pattern: str) -> bool:
    pattern = pattern.removeprefix("root/").removeprefix("./").rstrip("/")
    if not pattern:
        return False
    return inside == pattern or inside.startswith(f"{pattern}/") or fnmatch.fnmatchcase(inside, pattern)


def holding(value: Any, marks: Sequence[Any], bookkeeping: Iterable[str] = ()) -> list[tuple[Any, str]]:
    """Every mapping in `value` with a field equal to one of `marks`: (the mark, the entry as JSON).

    An entry is compared whole, less its bookkeeping fields (bare field names among
    `bookkeeping`), so an entry that moved in a list is the same entry, and one
    whose other fields changed is another.
    """
    wanted = [_canonical(mark) for mark in marks]
    skip = {p for p in bookkeeping if _BARE.fullmatch(p)}
    found: list[tuple[Any, str]] = []
    pending: list[Any] = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, Mapping):
            fields = {k: v for k, v in item.items() if str(k) not in skip}
            scalars = {_canonical(v) for v in fields.values() if not isinstance(v, Mapping | list | tuple)}
            found.extend(
                (mark, _canonical(fields)) for mark, key in zip(marks, wanted, strict=True) if key in scalars
            )
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)
    return sorted(found, key=lambda pair: (_canonical(pair[0]), pair[1]))


def drift_touched(
    before: Mapping[str, Any], after: Mapping[str, Any], marks: Sequence[Any], bookkeeping: Iterable[str] = ()
) -> tuple[list[str], bool]:
    """(where an entry holding a mark was removed, changed or made, by probe; whether any probe shows a mark)."""
    patterns = tuple(bookkeeping)
    touched: list[str] = []
    shown = False
    for name in sorted(set(before) & set(after)):
        was, now = before[name], after[name]
        if _unobserved(was) or _unobserved(now):
            continue
        held_before, held_after = holding(was, marks, patterns), holding(now, marks, patterns)
        shown = shown or bool(held_before or held_after)
        for mark in marks:
            if [e for m, e in held_before if m == mark] != [e for m, e in held_after if m == mark]:
                touched.append(f"{name}: the entry holding {json.dumps(mark, ensure_ascii=True)}")
    return touched, shown


# -- the items an action's effect touched, by their ids: pure ------------------------------------

# A path's steps: `.field`, `[*]` (every entry of a list) or `[3]`.
_STEP = re.compile(r"\.([^.\[]+)|\[(\*|\d+)\]")
# How deep the entries of a whole structured file are looked for.
_ITEM_DEPTH = 3


def touched_items(
    observed: Mapping[str, Any], gated: Iterable[str], arguments: Mapping[str, Any]
) -> dict[str, list[Any]]:
    """The ids of the entries where the gated effect shows that name the action's subject, by list name.

    Where: each list a gated place removed or changed entries of (`removed
    tool:list_links.links[*]`), or, for a structured file only known as rewritten,
    every list of entries it holds. Which: an entry naming one of the action's own
    `arguments` (a collection whose id or title it is), then an entry referring to
    one of those by a field named for it (the collection's links, by `collection`
    or `collection_id`). What each is called by: its identifying field (`id`,
    `uuid`, `key`). Only equal values name, and a number only in a field named as
    a reference: an amount of 1 names no row 1.
    """
    lists: dict[str, list[Any]] = {}
    for place in gated:
        how, _, where = place.partition(" ")
        name = probe_of(where, observed) if how != REWRITTEN else _file_probe(where, observed)
        if name is None or _unobserved(observed[name]):
            continue
        if how == REWRITTEN:
            _lists_in(observed[name], name.rsplit("/", 1)[-1], lists, 0)
            continue
        steps = _STEP.findall(where[len(name) :])
        last = max((i for i, (_, pos) in enumerate(steps) if pos == "*"), default=None)
        if last is None:
            continue
        key = next((f for f, _ in reversed(steps[:last]) if f), name)
        for entries in _walked(observed[name], steps[:last]):
            if isinstance(entries, list):
                lists.setdefault(key, []).extend(entries)
    own = {_canonical(v) for k, v in arguments.items() if _names(v) and (isinstance(v, str) or _refers(k))}
    found: dict[str, list[Any]] = {}

    def add(key: str, ident: Any) -> None:
        ids = found.setdefault(key, [])
        if ident not in ids:
            ids.append(ident)

    for key, entries in lists.items():
        for entry in entries:
            ident = _identity(entry)
            if ident is not None and any(
                _names(v) and (isinstance(v, str) or _refers(str(k))) and _canonical(v) in own
                for k, v in entry.items()
            ):
                add(key, ident[1])
    # One step on: an entry whose field is named for a kind found (`collection_id`, `collection`)
    # and holds one of its ids. Never by its own id: link 1 is not in collection 1.
    named = {_singular(key): {_canonical(i) for i in ids} for key, ids in found.items()}
    for key, entries in lists.items():
        for entry in entries:
            ident = _identity(entry)
            if ident is not None and any(
                k != ident[0] and _names(v) and _canonical(v) in named.get(_referred(str(k)), ())
                for k, v in entry.items()
            ):
                add(key, ident[1])
    return found


# A field or argument named as a reference to something else's id.
_REFERENCE = re.compile(r"(^|_)(id|ids|key|ref|uuid)$|[a-z](Id|Ids|Key|Ref)$", re.I)


def _refers(name: str) -> bool:
    """Whether a field or argument is named as a reference (`link_id`, `collectionId`)."""
    return _REFERENCE.search(name) is not None


def _singular(name: str) -> str:
    return name.lower().removesuffix("s")


def _referred(name: str) -> str:
    """The kind a field refers to by its name: `collection_id`, `collectionId`, `collection` -> "collection"."""
    return _singular(re.sub(r"(_?(id|ids|key|ref|uuid)|Id|Ids|Key|Ref)$", "", name))


def _file_probe(where: str, observed: Mapping[str, Any]) -> str | None:
    name = f"file:{where.removeprefix('root/')}"
    return name if name in observed else None


def _walked(value: Any, steps: Sequence[tuple[str, str]]) -> list[Any]:
    nodes = [value]
    for field_name, pos in steps:
        out: list[Any] = []
        for node in nodes:
            if field_name and isinstance(node, Mapping) and field_name in node:
                out.append(node[field_name])
            elif pos == "*" and isinstance(node, list):
                out.extend(node)
            elif pos.isdigit() and isinstance(node, list) and int(pos) < len(node):
                out.append(node[int(pos)])
        nodes = out
    return nodes


def _lists_in(value: Any, key: str, lists: dict[str, list[Any]], depth: int) -> None:
    if depth > _ITEM_DEPTH:
        return
    if isinstance(value, list) and any(isinstance(v, Mapping) for v in value):
        lists.setdefault(key, []).extend(value)
    elif isinstance(value, Mapping):
        for inner_key, inner in value.items():
            _lists_in(inner, str(inner_key), lists, depth + 1)


def _identity(entry: Any) -> tuple[str, Any] | None:
    if not isinstance(entry, Mapping):
        return None
    key = next((k for k in _IDENTIFYING if k in entry and _names(entry[k])), None)
    return None if key is None else (key, entry[key])


def _names(value: Any) -> bool:
    """A value that can name something: a non-empty string or a number, never a boolean."""
    if isinstance(value, bool):
        return False
    return (isinstance(value, str) and bool(value.strip())) or isinstance(value, int)
