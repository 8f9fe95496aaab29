"""Entries rewritten in place during an attack (the swaps), and their reading."""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.reading import Judged, Reading, Seen, reads
from ..models import Layer, Part, Verdict


@dataclass(frozen=True, slots=True)
class InPlace(Part):
    """Entries (sandbox paths) the attack rewrote in place: still the file the user confirmed (same inode), but no longer what they saw."""

    paths: tuple[str, ...]


@reads(InPlace)
class ReadInPlace(Reading[InPlace]):
    def moved(self, part: InPlace, seen: Seen) -> Judged | None:
        effect = seen.effect
        touched = [*effect.removed, *effect.changed]
        if not part.paths or not set(touched) <= set(part.paths):
            return None
        # Still the inode the user confirmed, but not the content they saw.
        lost = ", ".join([*touched, *effect.observed][:4])
        return Verdict.WEAK, Layer.NONE, f"acted on a file that changed after the question: {lost}"
