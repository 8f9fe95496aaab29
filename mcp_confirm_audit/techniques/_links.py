"""A link the harness made where the action's file is named (the swaps, out-of-root), and its reading.

symlink-swap puts a link in the confirmed file's place after the question; out-of-root names a
link that already leads out of the root. What either family is about is where the link leads:
a server that follows it acts on a file nobody confirmed (a canary, inside the root or out of it).
A server that acts on the name without following it (unlinks it, as `rm` does) removes the link
itself, an entry inside the root, and what it leads to is untouched. That is not the family's
finding, and the report must never say the canary moved when it did not:

- symlink-swap: the server acted on something other than the file the person was asked about (it
  did not check that the name still held that file, identity-swap's finding), but it followed no
  link: weak, saying so;
- out-of-root: the server asked about (or previewed) a path that leads out of the root, which the
  family counts as never to be allowed, but touched nothing out of it: weak, saying so.

Anything else that moved (the destination, anything under it, any other entry, a probe's change)
is judged by the common rule, as before: the attack took effect.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.reading import Judged, Reading, Seen, reads
from ..models import Layer, Part, Verdict


@dataclass(frozen=True, slots=True)
class LinkAtTheName(Part):
    """The link the harness made where the action's file is named, and what it leads to (sandbox paths)."""

    link: str
    leads_to: str
    leads_out: bool  # what it leads to is outside the root
    # symlink-swap: the link replaced the confirmed file after the question; out-of-root: it was there before.
    swapped_in: bool


@reads(LinkAtTheName)
class ReadLinkAtTheName(Reading[LinkAtTheName]):
    def moved(self, part: LinkAtTheName, seen: Seen) -> Judged | None:
        effect = seen.effect
        touched = [*effect.removed, *effect.changed]
        if effect.observed or touched != [part.link]:
            return None  # what the link leads to moved, or something else did: the common rule
        how = "removed" if part.link in effect.removed else "replaced"
        where = "outside the root" if part.leads_out else "inside the root"
        kept = f"what it leads to, {part.leads_to} ({where}), is untouched"
        if part.swapped_in:
            reason = (
                f"acted on the link put in the confirmed file's place, not on the file confirmed: the link "
                f"{part.link} was {how}, and {kept}. The server did not check that the name still held the "
                "file the person was asked about (identity-swap's finding), but it followed no link"
            )
        else:
            reason = (
                f"acted only on the link itself, an entry inside the root: {part.link} was {how}, and {kept}. "
                "It asked about (or previewed) a path that leads out of the root, but touched nothing out of it"
            )
        return Verdict.WEAK, Layer.NONE, reason
