"""The profile contract as a JSON Schema and as `docs/profile.md`, both generated from `keys.ProfileKeys`.

`schemas/profile.schema.json` is what a shipped profile's first line points an
editor at (`# yaml-language-server: $schema=../schemas/profile.schema.json`);
tests hold both files equal to what this module writes, so they cannot drift
from what the loader accepts.
"""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterator
from typing import Any

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from . import placeholders
from .contract import Keys, doc, flow, required
from .keys import ProfileKeys

SCHEMA_COMMAND = "mcp-confirm-audit schema profile -o schemas/profile.schema.json"
DOCS_COMMAND = "mcp-confirm-audit schema profile --markdown -o docs/profile.md"
SCHEMA_LINE = "# yaml-language-server: $schema=../schemas/profile.schema.json"
_DIALECT = "https://json-schema.org/draft/2020-12/schema"


class _Generator(GenerateJsonSchema):
    def dict_schema(self, schema: core_schema.DictSchema) -> JsonSchemaValue:
        # pydantic says a key pattern with patternProperties, which lets any other key through with any
        # value; propertyNames holds every key to the pattern, as the loader does.
        out = super().dict_schema(schema)
        patterns = out.pop("patternProperties", None)
        if patterns:
            ((pattern, value),) = patterns.items()
            out["propertyNames"] = {"pattern": pattern}
            out["additionalProperties"] = value
        return out


def schema() -> dict[str, Any]:
    """The JSON Schema every profile is checked against (draft 2020-12)."""
    body = ProfileKeys.model_json_schema(by_alias=True, schema_generator=_Generator)
    body["title"] = "mcp-confirm-audit target profile"
    return {"$schema": _DIALECT, **body}


def schema_text() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


def _submodels(annotation: Any, address: str) -> Iterator[tuple[str, type[Keys]]]:
    """The models of keys a field's type holds, each with the address its keys have under the field."""
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, Keys):
        yield address, annotation
    elif origin is typing.Annotated:
        yield from _submodels(typing.get_args(annotation)[0], address)
    elif origin in (typing.Union, types.UnionType):
        for member in typing.get_args(annotation):
            yield from _submodels(member, address)
    elif origin is list:
        yield from _submodels(typing.get_args(annotation)[0], f"{address}[]")
    elif origin is dict:
        yield from _submodels(typing.get_args(annotation)[1], f"{address}.NAME")


def rows(model: type[Keys] = ProfileKeys, prefix: str = "") -> Iterator[tuple[str, str, str, str]]:
    """(key, accepts, default, what it is) for every key, a group's keys right after the key that holds them.

    A group of keys met again (the steps of every `human:` list, a call's keys) is listed once, where
    it is first met; a later key says where its keys are listed.
    """
    yield from _rows(model, prefix, {}, set())


def _rows(
    model: type[Keys], prefix: str, listed: dict[type[Keys], str], said: set[str]
) -> Iterator[tuple[str, str, str, str]]:
    for name, info in model.model_fields.items():
        doc_ = doc(info)
        assert doc_ is not None, f"{model.__name__}.{name} is declared without key()"
        address = f"{prefix}{info.alias or name}"
        default = (
            "required"
            if required(info)
            else ("unset" if info.default is None else f"`{flow(info.default, None)}`")
        )
        fresh: list[tuple[str, type[Keys]]] = []
        elsewhere: list[str] = []
        for inner, sub in _submodels(info.rebuild_annotation(), address):
            if sub not in listed:
                listed[sub] = inner
                fresh.append((inner, sub))
            elif listed[sub] != inner and f"`{listed[sub]}`" not in elsewhere:
                elsewhere.append(f"`{listed[sub]}`")
        more = "more of its keys" if fresh else "its keys"
        what = doc_.what + (f" For {more}, see {', '.join(elsewhere)}." if elsewhere else "")
        if address not in said:
            said.add(address)
            yield address, f"{doc_.accepts}, e.g. `{flow(doc_.example, None)}`", default, what
        for inner, sub in fresh:
            yield from _rows(sub, f"{inner}.", listed, said)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown() -> str:
    out = [
        "# Target profile keys",
        "",
        f"Generated from `mcp_confirm_audit/profile/keys.py` by `{DOCS_COMMAND}`; do not edit.",
        "The same models check every profile the loader reads and write `schemas/profile.schema.json`",
        f"(`{SCHEMA_COMMAND}`), which a profile names on its first line so that an editor",
        "completes and checks it:",
        "",
        "```yaml",
        SCHEMA_LINE,
        "name: my-server",
        "command: my-server --root {root}",
        "```",
        "",
        "Every key is optional. A wrong value is one line naming the key, what was found and the",
        "accepted form with an example; an unknown key names the nearest known one. `NAME` stands for a",
        "name the profile chooses, `[]` for each entry of a list.",
        "",
        "| Key | Accepts | Default | What it is |",
        "| --- | --- | --- | --- |",
    ]
    for address, accepts, default, what in rows():
        out.append(f"| `{address}` | {_cell(accepts)} | {_cell(default)} | {_cell(what)} |")
    out += [
        "",
        "## Placeholders",
        "",
        "A `{NAME}` in a string is filled where the table says, and nowhere else. One of the harness's",
        "own names where it is not filled (`{url}` in `command`, `{port}` in `env` of a target that does",
        "not serve HTTP) is refused by the loader with the reason; any other `{NAME}` in `command`, `env`",
        "or `files` is the target's own text and is left as written. `{profile_dir}` (the profile's",
        "folder, one quoted word in a command line) is spelled out in every string when the file is read.",
        "`${NAME}` is a variable of the harness's environment, read in `headers`, `principals`, `env` and",
        "the person's `headers`.",
        "",
        *placeholders.table(),
    ]
    return "\n".join(out) + "\n"
