"""When code scanning did not take audit.sarif (a fork's pull request, no security-events: write),
say so in the job summary: the findings are in the summary above and in the artifact."""

from __future__ import annotations

import os
import sys


def note(artifact: str) -> str:
    return (
        "\n> **audit.sarif was not uploaded to code scanning** (a fork's pull request, or a token without "
        f"`security-events: write`). The findings are in the summary above and in the `{artifact}` artifact "
        "of this run (audit.json, review.md, audit.sarif).\n"
    )


def main() -> int:
    text = note(os.environ.get("MCA_ARTIFACT") or "mcp-audit")
    if path := os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(path, "a", encoding="utf-8") as out:
            out.write(text)
    print(text.strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
