"""Every kind of effect probe, imported so that each registers itself with `probe_kind`."""

from __future__ import annotations

from . import tool_result

__all__ = ["tool_result"]
