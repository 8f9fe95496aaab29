"""The PyPI server mcp-confirm built in the audit's own process (`pip install mcp-confirm==0.2.1`).

Its factory takes a list of roots where an in-process target's factory is handed one
(`factory(root, **factory_args)`); this is the whole adapter.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp_confirm.server import build_server as _build_server


def build_server(root: Path, **factory_args: Any) -> Any:
    return _build_server([root], **factory_args)
