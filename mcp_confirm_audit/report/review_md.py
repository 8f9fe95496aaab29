"""`review.md`: a security review a person can send to the server's author.

Findings first, each with its evidence and a way to reproduce it; then the
table of which layer refused each attack, the requirement every result rests
on, and what could not be tested and why.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from .. import __version__
from ..models import FAIL_CLOSED, ControlResult, Result, Verdict
from .document import SEVERITIES, AuditReport, rerun_command

_UNJUDGED = (Verdict.NOT_APPLICABLE, Verdict.INCONCLUSIVE)


class ReviewMarkdown:
    filename = "review.md"

    def render(self, report: AuditReport) -> str:
        sections = [
            _heading(report),
            _controls(report),
            _findings(report),
            _layers(report),
            _fail_closed(report.results),
            _ablation(report.results),
            _requirements(report.results),
            _untested(report),
            _baseline(report),
            _legend(),
        ]
        return "\n\n".join(s for s in sections if s).rstrip() + "\n"


def _cell(text: object) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").strip() or "-"


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend("| " + " | ".join(_cell(c) for c in row) + " |" for row in rows)
    return "\n".join(lines)


def _fence(lines: Iterable[str], info: str = "text") -> str:
    body = list(lines)
    ticks = "```"
    while any(ticks in line for line in body):
        ticks += "`"
    return "\n".join([ticks + info, *body, ticks])


def _refuser(result: Result) -> str:
    if result.verdict is Verdict.VULNERABLE:
        return "nothing"
    return result.layer.value if result.layer and result.verdict is not Verdict.INCONCLUSIVE else "-"


def _heading(report: AuditReport) -> str:
    target = report.target
    server = target.get("server") or {}
    name = server.get("name") or "the target"
    version = server.get("version") or (
        f"{target['version']}, as its profile declares; the server reports none"
        if target.get("version")
        else "version not reported by the server"
    )
    counts = {v: sum(r.verdict is v for r in report.results) for v in Verdict}
    findings = counts[Verdict.VULNERABLE] + counts[Verdict.WEAK] + len(report.failed_controls)
    facts = [
        ("Server", f"{name} ({version})"),
        ("Command", f"`{target.get('command', '')}`"),
        ("Profile", f"`{target['profile']}`" if target.get("profile") else "none (zero configuration)"),
        ("Tools audited", ", ".join(f"`{t}`" for t in target.get("tools", ())) or "-"),
        ("Date", report.generated.isoformat(timespec="seconds")),
        (
            "Audited with",
            f"mcp-confirm-audit {__version__}, as a real MCP client over the target's own transport",
        ),
    ]
    summary = (
        f"**{findings} finding(s)**: {counts[Verdict.VULNERABLE]} vulnerable, {counts[Verdict.WEAK]} weak, "
        f"{len(report.failed_controls)} failed control(s). {counts[Verdict.REFUSED]} attack(s) refused, "
        f"{counts[Verdict.NOT_APPLICABLE]} not applicable, {counts[Verdict.INCONCLUSIVE]} inconclusive."
    )
    layers = Counter(r.layer.value for r in report.results if r.verdict is Verdict.REFUSED and r.layer)
    if layers:
        summary += " Refused by " + ", ".join(f"{layer} {n}" for layer, n in sorted(layers.items())) + "."
    return "\n\n".join([f"# Security review: {name}", _table(("", ""), facts), summary])


def _controls(report: AuditReport) -> str:
    rows = []
    for c in report.controls:
        state = "not applicable" if not c.applicable else ("passed" if c.passed else "**FAILED**")
        rows.append((c.name, f"`{c.tool}`", state, c.detail))
    intro = (
        'The honest flow comes first: approve must act, and decline, cancel and an accepted "no" must not. '
        "If approve fails, no attack on that tool can be judged and all of them are inconclusive."
    )
    return "\n\n".join(
        ["## Honest-flow controls", intro, _table(("control", "tool", "result", "detail"), rows)]
    )


def _findings(report: AuditReport) -> str:
    parts = ["## Findings"]
    if not report.findings and not report.failed_controls:
        parts.append("None: no attack took effect and no refusal was weak.")
    for control in report.failed_controls:
        parts.append(_control_finding(report, control))
    for severity in SEVERITIES:
        found = [r for r in report.findings if r.severity == severity]
        if found:
            parts.append(f"### {severity.capitalize()}")
            parts.extend(_finding(report, r) for r in found)
    return "\n\n".join(parts)


def _control_finding(report: AuditReport, control: ControlResult) -> str:
    command = rerun_command(report.target, f"control-{control.name} and {control.tool}")
    return "\n\n".join(
        [
            f"### Control `{control.name}` failed on `{control.tool}`",
            f"What happened: {control.detail}. A {control.name} must never act.",
            "Re-run just this control:",
            _fence([command], "sh"),
        ]
    )


def _finding(report: AuditReport, result: Result) -> str:
    mark = report.mark(result)
    facts = [
        f"- **Verdict**: {result.verdict.value}; refused by {_refuser(result)}; "
        f"asked the user during the attack: {'yes' if result.asked_user else 'no'}",
        f"- **Requirement** ({result.level}): " + "; ".join(result.refs or ("-",)),
        f"- **Why**: {result.reason}",
    ]
    lost = [*result.effect.removed, *result.effect.changed]
    if lost:
        facts.append("- **Effect on disk**: " + ", ".join(f"`{p}`" for p in lost))
    if mark is not None:
        facts.append(f"- **Baseline**: {mark.status}: {mark.reason}")
    requests = [line for line in result.evidence if line.startswith("[")]
    observed = [line for line in result.evidence if not line.startswith("[")]
    return "\n\n".join(
        [
            f"#### {result.id} {result.title} (`{result.tool}`)",
            "\n".join(facts),
            "Reproduction: the exact request sequence the audit sent, and what it saw:",
            _fence([*requests, *observed]),
            "Re-run just this attack (or `mcp-confirm-audit replay audit.json "
            f"{result.id} --tool {result.tool}` from the report):",
            _fence([rerun_command(report.target, f"{result.id} and {result.tool}")], "sh"),
        ]
    )


def _layers(report: AuditReport) -> str:
    rows = []
    for r in report.results:
        mark = report.mark(r)
        rows.append(
            (
                r.id,
                r.variant,
                f"`{r.tool}`",
                r.verdict.value,
                _refuser(r),
                "yes" if r.asked_user else "no",
                mark.status if mark else "",
            )
        )
    header = ("attack", "variant", "tool", "verdict", "refused by", "asked user", "baseline")
    return "\n\n".join(["## Which layer refused each attack", _table(header, rows)])


def _fail_closed(results: Sequence[Result]) -> str:
    closed = [r for r in results if r.verdict is Verdict.REFUSED and FAIL_CLOSED in r.reason]
    if not closed:
        return ""
    lines = [
        "## Safe, but it breaks users: fail-closed replicas",
        "",
        "An honest confirmation, asked on one process of the server and answered on another, was refused. "
        "Nothing unsafe happened, but behind a load balancer this is what users see.",
        "",
    ]
    lines.extend(f"- **{r.id}** (`{r.tool}`): {_cell(r.reason)}" for r in closed)
    return "\n".join(lines)


def _ablation(results: Sequence[Result]) -> str:
    ablated = [r for r in results if r.ablation is not None]
    if not ablated:
        return ""
    intro = (
        "Each attack the SDK's request-state boundary refused was run again on the target built without "
        "that boundary. Where another layer still refuses it, the two guards duplicate each other for that "
        "attack (redundant); where nothing does, the boundary is load-bearing."
    )
    rows = []
    for r in ablated:
        assert r.ablation is not None
        a = r.ablation
        refused = a.layer is not None and a.verdict is Verdict.REFUSED
        without = a.verdict.value + (f" ({a.layer.value})" if refused and a.layer else "")
        alone = ", ".join(layer.value for layer in a.refused_alone_by)
        rows.append((f"{r.id} {r.variant}", f"`{r.tool}`", without, alone, a.removed_guard))
    header = ("attack", "tool", "without sdk-boundary", "refused on its own by", "sdk-boundary is")
    return "\n\n".join(["## Is each guard load-bearing? (ablation)", intro, _table(header, rows)])


def _requirements(results: Sequence[Result]) -> str:
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for r in results:
        ids = groups.setdefault((r.family, r.refs), [])
        if r.id not in ids:
            ids.append(r.id)
    lines = ["## The requirement each result rests on", ""]
    for (family, refs), ids in sorted(groups.items()):
        lines.append(f"- **{family}** ({', '.join(ids)})")
        lines.extend(f"  - {ref}" for ref in refs)
    return "\n".join(lines)


def _untested(report: AuditReport) -> str:
    rows = [
        (r.id, f"`{r.tool}`", r.verdict.value, r.reason) for r in report.results if r.verdict in _UNJUDGED
    ]
    rows += [
        (f"control {c.name}", f"`{c.tool}`", "not applicable", c.detail)
        for c in report.controls
        if not c.applicable
    ]
    rows += [("control approve", f"`{c.tool}`", "failed", c.detail) for c in report.failed_approvals]
    body = (
        _table(("attack", "tool", "verdict", "why"), rows)
        if rows
        else "Nothing: every attack run was judged."
    )
    return "\n\n".join(["## Not testable here, and why", body])


def _baseline(report: AuditReport) -> str:
    if report.baseline is None:
        return ""
    lines = ["## Baseline", "", f"Checked against `{report.baseline}`.", ""]
    for r in report.results:
        if (mark := report.mark(r)) is not None and mark.status != "accepted":
            lines.append(f"- {r.id} on `{r.tool}`: {mark.status}: {mark.reason}")
    lines.extend(f"- stale: {entry}" for entry in report.unmatched)
    return "\n".join(lines)


def _legend() -> str:
    return "\n".join(
        [
            "## How to read this",
            "",
            "Effects are observed on disk (canaries inside and outside the root, file identity, the whole",
            "tree before and after), never taken from what the server said. Layers: `sdk-boundary` is the",
            "SDK's request-state check (JSON-RPC -32602, invalid_request_state); `protocol` any other",
            "JSON-RPC error; `tool` the tool's own refusal; `nothing` means the attack took effect. Paths in",
            "the temporary sandbox are written as `{sandbox}`.",
        ]
    )
