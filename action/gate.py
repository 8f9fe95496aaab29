"""The action's last step: fail the job when the gate failed, saying why in one line.

Last, so that the reports are uploaded (or kept as an artifact) first.
Reads MCA_GATE and MCA_GATE_REASON, the audit step's outputs, from the environment.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping


def main(environ: Mapping[str, str] | None = None) -> int:
    environ = os.environ if environ is None else environ
    if environ.get("MCA_GATE") == "pass":
        print(f"mcp-confirm-audit: gate passed: {environ.get('MCA_GATE_REASON', '')}")
        return 0
    print(
        f"::error title=mcp-confirm-audit gate::{environ.get('MCA_GATE_REASON') or 'the audit did not run'}"
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
