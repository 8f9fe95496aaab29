"""mcp-confirm-audit: which layer of an MCP server refuses each confirmation attack.

The public surface is small on purpose; everything else is private. The
names are imported when first used: the pytest plugin loads this package in
every pytest run on the machine, and a run that audits nothing should not
pay for the models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .models import Layer, Result, Verdict

__all__ = ["Layer", "Result", "Verdict", "__version__"]


def __getattr__(name: str) -> Any:
    if name in ("Layer", "Result", "Verdict"):
        from . import models

        return getattr(models, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
