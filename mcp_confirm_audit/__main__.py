"""`python -m mcp_confirm_audit`: the same command as `mcp-confirm-audit`, for a venv whose scripts are not on PATH."""

from __future__ import annotations

import sys

from .cli.main import main

if __name__ == "__main__":
    sys.exit(main())
