"""mcp-confirm-audit: which layer of an MCP server refuses each confirmation attack.

The public surface is small on purpose; everything else is private.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .models import Layer, Result, Verdict

__all__ = ["Layer", "Result", "Verdict", "__version__"]
