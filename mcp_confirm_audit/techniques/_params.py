"""The type of a technique's `params:` in the catalogue: one strict model per technique.

A technique declares its model where it is registered (`@technique(name, params=...)`); the
catalogue loader validates every entry's `params:` with it, so a misspelled key or a value of the
wrong type is refused at load, naming the entry, and the schema of `attacks/*.yaml` is generated
from the same models. The technique still receives the entry's params as the mapping written.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Params(BaseModel):
    """Base of every technique's params: strict, every key declared."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class NoParams(Params):
    """A technique that takes no params."""
