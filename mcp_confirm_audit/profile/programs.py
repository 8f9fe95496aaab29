"""Where a bare program name in a profile's command lines is found."""

from __future__ import annotations

import os
import sys
from pathlib import Path


def beside_interpreter(program: str) -> str:
    """A bare program name, looked up first beside the interpreter running the audit.

    `python` is that interpreter, and a server installed in the same venv
    (`mcp-confirm`) is found there, so `.venv/bin/python -m pytest` works
    without activating the venv; anything else is left to PATH.
    """
    if os.sep in program:
        return program
    if program in ("python", "python3"):
        return sys.executable
    candidate = Path(sys.executable).parent / program
    return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else program
