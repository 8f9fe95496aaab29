"""HTTP headers the harness sends on every request of a connection, and how they are never shown.

A header's value is a credential more often than not (`Authorization: Bearer …`,
a gateway's principal header). It is read once, from the profile or
`--mcp-header`, with `${NAME}` taken from the environment, and it goes to the
HTTP client and nowhere else: what reaches a message, a transcript or a report
is `Header.redacted` (`Authorization: Bearer ***`), and text the harness did
not write (a target's stderr) is `scrub`bed of every value before it is kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from enum import Enum
from typing import Any, TypeVar

from ..errors import UsageError

# RFC 9110 field names are tokens; anything else is a typo, or a value in the wrong place.
NAME_PATTERN = r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"
_NAME = re.compile(NAME_PATTERN)
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# The first word of an Authorization value names its scheme (Bearer, Basic); the scheme is no secret.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9._~+-]{0,19}) +\S")
MASK = "***"
# Too short to scrub from free text without mangling it; such a value is no credential anyway.
_SCRUB_AT_LEAST = 4
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Header:
    name: str
    # Never in a repr: a Profile (and so this) may end up in a traceback or an assertion message.
    value: str = field(repr=False)

    @property
    def redacted(self) -> str:
        """`Name: Scheme ***`, or `Name: ***`: what a report or the terminal may show."""
        scheme = _SCHEME.match(self.value)
        return f"{self.name}: {scheme.group(1)} {MASK}" if scheme else f"{self.name}: {MASK}"


def parse(text: str, *, source: str, environ: Mapping[str, str] | None = None) -> Header:
    """`Name: value`, as curl writes it; `${NAME}` in the value comes from `environ`."""
    name, colon, value = text.partition(":")
    if not colon:
        raise UsageError(f"{source}: a header is 'Name: value', got {_shape(text)}")
    return make(name.strip(), value.strip(), source=source, environ=environ)


def from_mapping(raw: object, *, source: str, environ: Mapping[str, str]) -> tuple[Header, ...]:
    """A profile's `headers:` mapping, each value with its `${NAME}`s filled in."""
    if not isinstance(raw, Mapping) or not all(isinstance(v, str) for v in raw.values()):
        raise UsageError(f"{source}: 'headers' must be a mapping of header names to strings")
    return tuple(make(str(k), v, source=source, environ=environ) for k, v in raw.items())


def make(name: str, value: str, *, source: str, environ: Mapping[str, str] | None = None) -> Header:
    if not _NAME.match(name):
        raise UsageError(f"{source}: {name!r} is not a header name (letters, digits and -)")
    if environ is not None:
        value = expand(value, name=name, source=source, environ=environ)
    if not value or "\n" in value or "\r" in value:
        raise UsageError(f"{source}: header {name} must have a value on one line")
    return Header(name, value)


def expand(value: str, *, name: str, source: str, environ: Mapping[str, str]) -> str:
    """`${NAME}` replaced by that environment variable; one not set is a usage error naming it."""
    for variable in _VARIABLE.findall(value):
        if not environ.get(variable):
            raise UsageError(
                f"{source}: header {name} names ${{{variable}}}, which is not set in the environment; "
                f"export {variable} before the run"
            )
    return _VARIABLE.sub(lambda m: environ[m.group(1)], value)


def overlay(base: Iterable[Header], over: Iterable[Header]) -> tuple[Header, ...]:
    """`base` with every header `over` names replaced (names compare without case, as HTTP's do)."""
    over = tuple(over)
    replaced = {h.name.lower() for h in over}
    return (*(h for h in base if h.name.lower() not in replaced), *over)


def as_dict(headers: Iterable[Header]) -> dict[str, str]:
    return {h.name: h.value for h in headers}


def scrub(text: str, headers: Iterable[Header]) -> str:
    """`text` with every header value (and its credential, without the scheme) masked."""
    return scrub_values(text, secret_values(headers))


def scrub_values(text: str, secrets: Iterable[str]) -> str:
    """`text` with every secret masked, the longest first (a token inside its header's value)."""
    for secret in sorted({s for s in secrets if len(s) >= _SCRUB_AT_LEAST}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def secret_values(headers: Iterable[Header]) -> tuple[str, ...]:
    """Each header's value, and its credential alone (without the scheme): what must never be shown."""
    found = set()
    for header in headers:
        found.add(header.value)
        if scheme := _SCHEME.match(header.value):
            found.add(header.value[len(scheme.group(1)) :].strip())
    return tuple(sorted(s for s in found if len(s) >= _SCRUB_AT_LEAST))


def _shape(text: str) -> str:
    # The text may be a credential typed without its name: say what is wrong, never echo it.
    return f"{len(text)} characters without a ':'"


def scrub_all(value: _T, secrets: Iterable[str]) -> _T:
    """`value` (a result, a report, any nesting of dataclasses, mappings and sequences) with every
    string in it scrubbed of `secrets`: what leaves the harness holds no credential, wherever the
    target (or its command line) put one."""
    secrets = tuple(secrets)
    return _scrubbed(value, secrets) if secrets else value


def _scrubbed(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, Enum):
        return value  # a verdict or a layer (a str enum): the harness's word, no secret
    if isinstance(value, str):
        return scrub_values(value, secrets)
    if is_dataclass(value) and not isinstance(value, type):
        changed = {f.name: _scrubbed(getattr(value, f.name), secrets) for f in fields(value) if f.init}
        return replace(value, **changed)
    if isinstance(value, Mapping):
        return {k: _scrubbed(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple) and not hasattr(value, "_fields"):
        return type(value)(_scrubbed(v, secrets) for v in value)
    return value
