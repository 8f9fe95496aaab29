"""The fleet's summary files, written side by side: fleet.md, fleet.html, fleet.sarif, fleet.json."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .fleet import SUMMARY_FILES, TargetOutcome, as_json, markdown, sarif
from .fleet_html import html


def write_summary(directory: Path, outcomes: Sequence[TargetOutcome]) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    texts = (markdown(outcomes, directory), html(outcomes, directory), sarif(outcomes), as_json(outcomes))
    paths = [directory / name for name in SUMMARY_FILES]
    for path, text in zip(paths, texts, strict=True):
        path.write_text(text, encoding="utf-8")
    return paths
