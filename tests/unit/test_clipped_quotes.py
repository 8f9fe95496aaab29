"""A reply quoted shortened in a control's detail says it was cut (trial 13, item 9).

The notes server's preview said `"summary": "Create note 'mcp-confirm-audit' (17 characters)"`; the approve
control quoted its first 120 characters, `"summary": "Create note ; confirm: ...`, and the cut read as the
server's own words. A cut quote now ends in "…"; a whole one is quoted as it is.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

from mcp_confirm_audit.confirmations import honest, replies

PREVIEW = json.dumps(
    {
        "change_id": "chg_13c6a0d4e5f64b7c8d9e0f1a2b3c4d5e",
        "diff": "--- a/victim.md\n+++ b/victim.md\n@@ -0,0 +1 @@\n+hello",
        "summary": "Create note 'mcp-confirm-audit' (17 characters)",
    }
)


def test_a_quote_cut_short_ends_in_an_ellipsis_and_a_whole_one_does_not() -> None:
    cut = replies.clipped(PREVIEW, 120)
    assert cut == PREVIEW[:120] + "…"
    assert replies.clipped("Create note 'x'", 120) == "Create note 'x'"
    assert replies.clipped("x" * 120, 120) == "x" * 120


def test_a_control_detail_that_quotes_a_long_preview_shows_where_it_was_cut() -> None:
    detail = honest._no_token(SimpleNamespace(token_from=None), PREVIEW * 2)  # type: ignore[arg-type]
    quoted = detail[detail.index("(") + 1 : detail.index("); name it")]
    assert quoted.endswith("…")
    assert PREVIEW.startswith(quoted.removesuffix("…"))
