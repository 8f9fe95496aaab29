"""Every kind of effect probe, imported so that each registers itself with `probe_kind`."""

from __future__ import annotations

from . import file_rows, hook, sink, sqlite_rows, tool_result

__all__ = ["file_rows", "hook", "sink", "sqlite_rows", "tool_result"]
