"""`url_elicitation:`, who opens a URL-mode elicitation's page: the person, and someone else.

    url_elicitation:
      person: {headers: {Cookie: "session=${ALICE_SESSION}"}}        # the person who started the call
      other_person: {headers: {Cookie: "session=${BOB_SESSION}"}}   # another user of the same server

A page the server sends is opened by a browser: these are the headers it carries
(a session cookie, a bearer token), filled from the environment and never shown,
like every other credential. Without `person`, the person's browser carries none.
The agent never carries any: what it can complete with the URL alone, anyone can.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from . import headers as http_headers
from .headers import Header

KEYS = ("person", "other_person")
_EXAMPLE = "e.g. 'url_elicitation: {person: {headers: {Cookie: \"session=${ALICE_SESSION}\"}}}'"


@dataclass(frozen=True, slots=True)
class UrlPeople:
    """The headers of the person's browser, and of another person's (None: nobody else is known)."""

    person: tuple[Header, ...] = ()
    other_person: tuple[Header, ...] | None = None

    def every_header(self) -> Iterator[Header]:
        yield from self.person
        yield from self.other_person or ()


def url_people(value: Any, source: str) -> UrlPeople:
    """`url_elicitation:` read from a profile; a UsageError in one line on anything else."""
    where = f"profile {source}: url_elicitation"
    if not isinstance(value, Mapping) or not value or set(value) - set(KEYS):
        raise UsageError(f"{where} takes {' and '.join(KEYS)}, {_EXAMPLE}")
    found: dict[str, tuple[Header, ...]] = {}
    for key, spec in value.items():
        if not isinstance(spec, Mapping) or set(spec) != {"headers"}:
            raise UsageError(f"{where}: {key} takes exactly one key, 'headers', {_EXAMPLE}")
        found[key] = http_headers.from_mapping(spec["headers"], source=f"{where}.{key}", environ=os.environ)
        if not found[key]:
            raise UsageError(f"{where}: {key} has no headers; say what that person's browser carries")
    if "other_person" in found and found["other_person"] == found.get("person", ()):
        raise UsageError(
            f"{where}: other_person carries the same headers as person; it would be the same one"
        )
    return UrlPeople(found.get("person", ()), found.get("other_person"))
