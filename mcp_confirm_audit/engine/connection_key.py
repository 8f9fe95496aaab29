"""Which connection to the target an audit means: a typed key, and the name it is known by.

A connection is the primary, another process, a replica, another client of a process, a
short-lived process, another principal; with the SDK's boundary removed or not (ablated), in
the profile's era or pinned to the legacy or the modern one, and declaring no elicitation or
URL mode only. The session opens connections by key and reads what to open from its fields;
the name (`ablated-legacy-client-declares-url`) is what evidence, process labels and logs show,
exactly as before the key existed, and nothing parses it back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

Era = Literal["legacy", "modern"]
Declares = Literal["none", "url"]


@dataclass(frozen=True, slots=True)
class ConnectionKey:
    # What the connection is to the audit: "primary", "other", "replica-1", "client-2",
    # "short-lived", "principal-mallory"; "" for a key that is only a prefix (`at` names the role).
    role: str = ""
    ablated: bool = False
    # Pinned to an era's handshake; None: the profile's `protocol:`.
    era: Era | None = None
    # The elicitation capability its client declares; None: form and URL, as a real client does.
    declares: Declares | None = None

    def at(self, role: str, *, declares: Declares | None = None) -> ConnectionKey:
        """The connection with this key's ablation and era, in `role`."""
        # Built, not `dataclasses.replace`d: every attack asks for its connections by key.
        return ConnectionKey(role, self.ablated, self.era, declares)

    def in_era(self, era: Era) -> ConnectionKey:
        return replace(self, era=era)

    @property
    def name(self) -> str:
        """How the connection is named in evidence and logs: `ablated-`, the era, the role, what it declares."""
        name = f"{'ablated-' if self.ablated else ''}{f'{self.era}-' if self.era else ''}{self.role}"
        if self.declares is not None:
            name += f"{'-' if self.role else ''}declares-{self.declares}"
        return name

    def __str__(self) -> str:
        return self.name


PRIMARY = ConnectionKey("primary")
