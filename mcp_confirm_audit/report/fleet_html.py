"""`fleet.html`: the fleet's summary as one static page, readable in any browser without JavaScript.

The same facts as fleet.md: a row per target (server and version, status, verdict counts, a link
to its review, why it failed), then the grid of target by family with the worst verdict in each
cell. Every string a target or a report chose is escaped (`html.escape`, quotes too); the only
links are our own relative paths to each review.md, URL-quoted. No script, no external resource.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from .. import __version__
from .fleet import WORST_FIRST, TargetOutcome, families_of, review_link, server_of

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #1f2328; }
table { border-collapse: collapse; margin: 1em 0 2em; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; }
tr > td:nth-child(-n+2) { white-space: nowrap; }
code { font: 12px ui-monospace, monospace; }
.vulnerable { background: #ffcecb; } .weak { background: #ffe5b4; } .inconclusive { background: #fff8c5; }
.refused { background: #dafbe1; } .excluded { background: #eaeef2; } .not_applicable { color: #656d76; }
.failed { background: #ffcecb; font-weight: bold; } .findings { background: #ffcecb; }
.clean { background: #dafbe1; }
"""
_COUNTED = ("vulnerable", "weak", "refused", "inconclusive", "not_applicable", "excluded")


def _code(text: object) -> str:
    return f"<code>{escape(str(text), quote=True)}</code>"


def _status_class(status: str) -> str:
    return status if status in ("failed", "findings", "clean") else "inconclusive"


def html(outcomes: Sequence[TargetOutcome], directory: Path) -> str:
    failed = sum(o.status == "failed" for o in outcomes)
    findings = sum(o.findings for o in outcomes)
    head = "".join(
        f"<th>{escape(h)}</th>"
        for h in ("target", "server", "status", "findings", *_COUNTED, "review", "judged, or why it failed")
    )
    rows = []
    for o in outcomes:
        counts = (
            "".join(f'<td class="num">{o.counts[v]}</td>' for v in _COUNTED)
            if o.audit is not None
            else "".join('<td class="num">-</td>' for _ in _COUNTED)
        )
        link = review_link(o, directory)
        review = f'<a href="{escape(link, quote=True)}">review.md</a>' if link else "-"
        reason = o.failure or ((o.audit or {}).get("summary") or {}).get("judged") or "-"
        rows.append(
            f"<tr><td>{_code(o.name)}</td><td>{_code(server_of(o))}</td>"
            f'<td class="{_status_class(o.status)}">{escape(o.status)}</td><td class="num">{o.findings}</td>'
            f"{counts}<td>{review}</td><td>{_code(reason)}</td></tr>"
        )
    families = families_of(outcomes)
    grid_head = "".join(f"<th>{escape(f)}</th>" for f in families)
    grid = []
    for o in outcomes:
        cells = []
        for family in families:
            verdict = "failed" if o.audit is None else o.families.get(family, "-")
            css = verdict if verdict in (*WORST_FIRST, "failed") else ""
            cells.append(f'<td class="{css}">{escape(verdict)}</td>')
        grid.append(f"<tr><td>{_code(o.name)}</td>{''.join(cells)}</tr>")
    body = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        "<title>Fleet audit</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>Fleet audit</h1>",
        f"<p>{len(outcomes)} target(s): {len(outcomes) - failed} audited, {failed} failed; "
        f"{findings} finding(s) in all. Written by mcp-confirm-audit {escape(__version__)}.</p>",
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>",
    ]
    if families:
        body += [
            "<h2>By family: the worst verdict in each cell</h2>",
            f"<table><thead><tr><th>target</th>{grid_head}</tr></thead><tbody>{''.join(grid)}</tbody></table>",
        ]
    body.append("</body></html>")
    return "\n".join(body) + "\n"
