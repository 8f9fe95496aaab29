"""The pytest marker of each attack family: the plugin registers them, the items carry them."""

from __future__ import annotations


def family_marker(family: str) -> str:
    return "mcp_" + family.replace("-", "_")
