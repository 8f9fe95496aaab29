"""Where each `{NAME}` of a profile is filled, declared once: the loader's check and the key reference's table.

Every string of a profile may hold placeholders, and each key fills its own set:
`command:` the root, the port, the sink; a person's steps the pending id, the
target's URL and what a step before them saved. `PLACES` says it for every key
that takes one; `check` refuses, in one line, a `{NAME}` of the harness's that a key with a fixed
set would pass on literally (`{port}` in `env:` of a target started over stdio,
`{url}` in `command:`), naming the key and what it takes; a name that is none
of the harness's is the target's own text there and is left as written. A key whose names
are chosen by the profile (what `setup:` or a step saves) is checked where
they are known (`loader._check_placeholders`, `channels/human.steps_type`, the
`confirmation.pending.execute` check of `keys.ProfileKeys`). `{preview.NAME}`, a
field of a token flow's preview reply, is filled in `confirmation.token.into` (a
mapping) only: `check` refuses it in any other string, which would send it as written.
`{profile_dir}` is spelled out in every string when the file is read (`spelled_out`).
`${NAME}` is another thing: a variable of the harness's environment, read
where credentials are (`headers:`, `principals:`, `env:`).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError

# `{NAME}`, not the `{NAME}` of `${NAME}` (an environment variable).
PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")
# A field of the preview's reply (`{preview.change_id}`): filled in a token flow's `into:` mapping only.
_PREVIEW_FIELD = re.compile(r"\{preview\.[^{}]*\}")
_PREVIEW_FILLED = "confirmation.token.into."
PROFILE_DIR = "{profile_dir}"
# The keys whose strings are command lines: {profile_dir} is put in as one word, quoted.
_COMMAND_LINES = ("command", "servers", "confirmation", "approver")


@dataclass(frozen=True, slots=True)
class Place:
    """The keys of one row of the table, the names filled there, and when."""

    keys: str
    names: tuple[str, ...]
    also: str  # names the profile chooses that may stand there too ("" if none)
    when: str


PLACES = (
    Place(
        "command, servers.NAME",
        ("root", "port", "sink", "profile_dir"),
        "",
        "when the target starts ({port}: a free loopback port, and the target is then reached over HTTP)",
    ),
    Place(
        "env.NAME",
        ("root", "port", "sink", "profile_dir"),
        "",
        "when the target starts, as in its command ({port} only when the command has {port} too)",
    ),
    Place(
        "files.NAME", ("root", "sink", "profile_dir"), "", "when the root is made, before the target starts"
    ),
    Place("url", ("port",), "", "when the target starts"),
    Place("ttl_flag", ("ttl",), "", "for the expiry family's short-lived process"),
    Place(
        "setup[].args, args, drift.args",
        ("path", "root", "sink", "profile_dir"),
        "names saved by setup calls before it",
        "before every use of the action",
    ),
    Place(
        "answer, negative_answer",
        ("name", "path", "profile_dir"),
        "",
        "when the form is answered (its fields' strings; {root}, {sink}, {port} refused there: "
        "the person types the answer, and it names the subject only)",
    ),
    Place(
        "steps of confirmation's human: and decline:, approver.steps",
        ("root", "url", "id", "challenge", "token", "profile_dir"),
        "names saved by the steps before it",
        "when the person takes the step ({url}: the target's base URL, or the named server's; "
        "{challenge}, {token}: what the preview handed out, in a pending flow the pending id)",
    ),
    Place(
        "confirmation.mrtr.human, principals.NAME.steps",
        ("root", "url", "profile_dir"),
        "names saved by the steps before it",
        "when the person takes the step (no id, challenge or token: nothing hands one out there)",
    ),
    Place(
        "confirmation.pending.execute.args",
        ("id", "profile_dir"),
        "names the person's steps saved; names saved by setup that the action's args carry whole",
        "when the agent makes the call",
    ),
    Place("confirmation.pending.approve.args", ("id", "profile_dir"), "", "when the agent makes the call"),
    Place(
        "confirmation.token.into (a mapping)",
        ("challenge", "token", "id", "profile_dir"),
        "names the person's steps saved; `{preview.NAME}`, a field (or dotted path) of the preview's reply "
        "(a bare name is never one: it is what the steps saved; in any other key it is refused)",
        "when the agent makes the confirming call (`{preview.NAME}`: from the reply of the preview of the "
        "same use)",
    ),
    Place(
        "confirmation.token.preview.args",
        ("tool", "profile_dir"),
        "the gated call's arguments, by name",
        "when the preview is called",
    ),
)

_NOT_HERE = {
    "url": "{url} is the target's base URL, known to the person's steps only",
    "id": "{id} is the pending id, known to a pending flow's steps and calls only",
    "challenge": "{challenge} is what a preview handed out, known to the person's steps only",
    "ttl": "{ttl} goes in ttl_flag:, which the expiry family adds to the command",
    "path": "{path} is a case file, known to the action's args only",
    "root": "{root} is the sandbox root, known where the target starts, to the action's args and the person's steps",
    "sink": "{sink} is the loopback sink, known where the target starts and to the action's args",
    "port": "{port} is the target's port, known where it starts and in url:",
}


# The harness's own names: one of them where it is not filled would be passed on literally.
_OURS = frozenset({"root", "port", "sink", "url", "id", "challenge", "ttl", "path"})


def table() -> list[str]:
    """The key reference's table of placeholders, as Markdown lines."""
    out = ["| Keys | Placeholders | Also | Filled |", "| --- | --- | --- | --- |"]
    for place in PLACES:
        names = ", ".join(f"`{{{n}}}`" for n in place.names)
        out.append(f"| `{place.keys}` | {names} | {place.also or '-'} | {place.when} |")
    return out


def spelled_out(raw: Mapping[str, Any], profile_dir: str) -> dict[str, Any]:
    """Every string of `raw` with `{profile_dir}` spelled out: one quoted word in a command line."""
    quoted = shlex.quote(profile_dir)
    out: dict[str, Any] = {}
    for name, value in raw.items():
        if name == "command" and isinstance(value, str) and value.startswith("py:"):
            out[name] = value.replace(PROFILE_DIR, profile_dir)
        else:
            out[name] = _beside(value, quoted if name in _COMMAND_LINES else profile_dir)
    return out


def written_through(raw: Mapping[str, Any]) -> tuple[frozenset[str], dict[int, frozenset[str]]]:
    """The arguments of `args:` and of each `setup:` call (by index) whose value holds `{profile_dir}`.

    Spelled out at load, such a value is plain text after it: this is what remembers that it is the
    operator's environment (a folder the server insists on), never part of the action to vary.
    """
    setup = raw.get("setup")
    steps = setup if isinstance(setup, list) else []
    by_step = {
        number: _through(step.get("args"))
        for number, step in enumerate(steps)
        if isinstance(step, Mapping) and _through(step.get("args"))
    }
    return _through(raw.get("args")), by_step


def _through(args: Any) -> frozenset[str]:
    if not isinstance(args, Mapping):
        return frozenset()
    return frozenset(str(k) for k, v in args.items() if PROFILE_DIR in repr(v))


def _beside(value: Any, here: str) -> Any:
    if isinstance(value, str):
        return value.replace(PROFILE_DIR, here)
    if isinstance(value, Mapping):
        return {k: _beside(v, here) for k, v in value.items()}
    if isinstance(value, list):
        return [_beside(v, here) for v in value]
    return value


def _strings(raw: Mapping[str, Any]) -> Iterator[tuple[str, str, Place]]:
    """(address, text, its place) of every string of a key whose names are fixed."""
    by_key = {"command": PLACES[0], "url": PLACES[3], "ttl_flag": PLACES[4]}
    for name, place in by_key.items():
        if isinstance(text := raw.get(name), str):
            yield name, text, place
    for name in ("answer", "negative_answer"):  # the form's fields: only their own strings are filled
        fields = raw.get(name)
        if isinstance(fields, Mapping):
            for field, value in fields.items():
                if isinstance(value, str):
                    yield f"{name}.{field}", value, PLACES[6]
    for key, place in (("servers", PLACES[0]), ("env", PLACES[1]), ("files", PLACES[2])):
        entries = raw.get(key)
        if not isinstance(entries, Mapping):
            continue
        for entry, value in entries.items():
            if isinstance(value, Mapping):
                value = value.get("value")
            if isinstance(value, str):
                yield f"{key}.{entry}", value, place


def _every_string(value: Any, address: str) -> Iterator[tuple[str, str]]:
    """(address, text) of every string in `value`: `setup[0].args.bed`, `confirmation.token.into.change_id`."""
    if isinstance(value, str):
        yield address, value
    elif isinstance(value, Mapping):
        for name, inner in value.items():
            yield from _every_string(inner, f"{address}.{name}" if address else str(name))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _every_string(inner, f"{address}[{index}]")


def _preview_fields_unfilled(raw: Mapping[str, Any], source: str) -> None:
    """One line for a `{preview.NAME}` where nothing fills it: it would be sent as written, braces and all.

    Only the confirming call of a token flow has a preview's reply to read it from.
    """
    for address, text in _every_string(raw, ""):
        if (named := _PREVIEW_FIELD.search(text)) is None or address.startswith(_PREVIEW_FILLED):
            continue
        raise UsageError(
            f"profile {source}: {address} names {named.group()}, which is not filled there: a field of the "
            "preview's reply is filled only in confirmation.token.into, a mapping of the confirming call's "
            "arguments (into: {change_id: '{preview.change_id}', confirmation_token: '{token}'})"
        )


def check(raw: Mapping[str, Any], source: str) -> None:
    """One line for a `{NAME}` a key with a fixed set of names would pass on unfilled, or a `{preview.NAME}`."""
    _preview_fields_unfilled(raw, source)
    commands = [raw.get("command"), *(raw.get("servers") or {}).values()]
    serves_http = any(isinstance(c, str) and "{port}" in c for c in commands)
    for address, text, place in _strings(raw):
        for name in PLACEHOLDER.findall(text):
            if name in place.names and not (
                name == "port" and address.startswith("env.") and not serves_http
            ):
                continue
            if name not in _OURS:
                continue  # not one of ours: the target's own text (a template of its own), left as written
            takes = ", ".join(f"{{{n}}}" for n in place.names)
            if name == "port" and name in place.names:
                why = "{port} is filled only for a target served over HTTP: put {port} in its command too"
            else:
                why = _NOT_HERE.get(name, "nothing fills it there")
            label = "negative_answer" if address.startswith("negative_") else place.keys.split(",")[0]
            raise UsageError(
                f"profile {source}: {address} names {{{name}}}, which is not filled there ({why}); "
                f"{label} takes {takes}"
            )
