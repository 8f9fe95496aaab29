"""`review.md`: a security review a person can send to the server's author.

A summary first (what was judged, what to fix), then the findings, each with
its remedy, the requirement it rests on, its evidence and a way to reproduce
it; then the table of which layer refused each attack, and what could not be
tested and why.

Every string the target chose (its name, its answers, file names it was
asked about, anything quoted in a reason) is shown inert: in a code span
whose fence is longer than any backtick run inside, so no renderer makes a
link, an image or HTML of it. No Markdown-escaping library is used: none
covers code spans, and backslash escapes do not stop GitHub's autolinking
of bare URLs, which a code span does.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

from .. import __version__
from ..models import (
    FAIL_CLOSED,
    OWASP_ITEMS,
    REQUIREMENT_ITEMS,
    SEVERITIES,
    STILL_WAITING_REMEDY,
    UNASKED,
    UNASKED_REMEDY,
    ControlResult,
    Result,
    Verdict,
)
from .document import AuditReport, headline, refused_by, rerun_command, shorten

_UNJUDGED = (Verdict.NOT_APPLICABLE, Verdict.INCONCLUSIVE, Verdict.EXCLUDED)


class ReviewMarkdown:
    filename = "review.md"

    def render(self, report: AuditReport) -> str:
        sections = [
            _heading(report),
            _summary(report),
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
    # A table cell: `|` would end it, even inside a code span (GFM), and a
    # line break the row; our own text has neither, target text is inert().
    cell = str(text)
    if "|" in cell or "\n" in cell:  # seldom: every cell of every table passes here
        cell = cell.replace("|", "\\|").replace("\n", " ")
    if cell and cell[0] not in _SPACES and cell[-1] not in _SPACES:  # nothing to strip: most cells
        return cell
    return cell.strip() or "-"


# What `str.strip()` takes off (every character `str.isspace()` is true of; a test says so).
_SPACES = frozenset(
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


_BACKTICKS = re.compile(r"`+")


def inert(text: object) -> str:
    """`text` as a code span: shown as it is, never rendered as a link, an image or HTML.

    Line breaks and other control or format characters are written as
    escapes first: a blank line would end the span (and the paragraph), and
    a bidi control would reorder what the reader sees.
    """
    shown = str(text)
    if not shown.isprintable():
        shown = _visible_line(shown)
    if not shown:
        return "` `"
    # Most text has no backtick, and one fences it.
    fence = "`" * (max(map(len, _BACKTICKS.findall(shown))) + 1) if "`" in shown else "`"
    pad = " " if shown[0] in "` " or shown[-1] in "` " else ""
    return f"{fence}{pad}{shown}{pad}{fence}"


def _visible(ch: str) -> str:
    if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs"):
        code = ord(ch)
        return (
            f"\\x{code:02x}" if code <= 0xFF else (f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
        )
    return ch


def _table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines.extend(["| " + " | ".join(map(_cell, row)) + " |" for row in rows])
    return "\n".join(lines)


def _fence(lines: Iterable[str], info: str = "text") -> str:
    body = list(lines)
    ticks = "```"
    while any(ticks in line for line in body):
        ticks += "`"
    return "\n".join([ticks + info, *body, ticks])


def _server(report: AuditReport) -> tuple[str, str]:
    target = report.target
    server = target.get("server") or {}
    name = inert(server.get("name")) if server.get("name") else "the target"
    declared, reported = target.get("version"), server.get("version")
    # The profile's word wins: a legacy FastMCP server reports the SDK's version as its own.
    if declared and reported and str(declared) != str(reported):
        version = f"{inert(declared)}, as its profile declares; the server reports {inert(reported)}"
    elif declared and not reported:
        version = f"{inert(declared)}, as its profile declares; the server reports none"
    elif declared:
        version = inert(declared)
    elif reported:
        # Said so: three PyPI servers in one trial reported their SDK's or FastMCP's version as their own.
        version = f"{inert(reported)}, as the server reports it: often its framework's; a profile's `version:` names the release"
    else:
        version = "version not reported by the server"
    return name, version


def _heading(report: AuditReport) -> str:
    target = report.target
    name, version = _server(report)
    seed = report.seed
    facts = [
        ("Server", f"{name} ({version})"),
        ("Command", inert(target.get("command", ""))),
        ("Profile", inert(target["profile"]) if target.get("profile") else "none (zero configuration)"),
        ("Tools audited", ", ".join(inert(t) for t in target.get("tools", ())) or "-"),
        *([("Protocol", eras)] if (eras := _eras(report)) else []),
        *(
            [("Not audited", "; ".join(inert(t) for t in target["left_out"]))]
            if target.get("left_out")
            else []
        ),
        *[("Isolation", inert(c.detail)) for c in report.controls if c.name == "isolation"][:1],
        *([("Confinement", inert(target["confinement"]))] if target.get("confinement") else []),
        *(
            [("Written outside the root", _outside(target["outside_root"]))]
            if target.get("outside_root")
            else []
        ),
        ("Date", report.generated.isoformat(timespec="seconds")),
        (
            "Seed",
            f"{seed} (the hostile names generated for prompt-forging; every command below repeats it)"
            if seed is not None
            else "-",
        ),
        (
            "Audited with",
            f"mcp-confirm-audit {__version__}, as a real MCP client over the target's own transport",
        ),
    ]
    return "\n\n".join([f"# Security review: {name}", _table(("", ""), facts)])


def _outside(writes: list[dict[str, object]]) -> str:
    """Each file the confined target wrote outside its root (kept apart, never on the machine), with its start."""
    return "; ".join(
        f"{inert(w.get('path', '?'))} ({w.get('bytes', 0)} bytes: {inert(str(w.get('text', ''))[:80])})"
        for w in writes
    )


def _eras(report: AuditReport) -> str:
    """The protocol version each tool was audited in: `delete_file over 2025-11-25 (elicitation/create)`."""
    by_tool: dict[str, dict[str, None]] = {}
    both = _families_with("both_eras")
    # A tool whose person answers through a call of its own (a token, a pending id, a flag, a channel of
    # theirs) is asked no question over MCP: how one would travel is no fact about it.
    elsewhere: set[str] = set()
    for r in report.results:
        if r.era and r.family not in both:
            by_tool.setdefault(r.tool, {})[r.era] = None
        if r.mechanism not in (None, "mrtr", "elicitation"):
            elsewhere.add(r.tool)
    # A tool whose honest flow failed never asked: how a question would travel is no fact about it.
    unproven = {c.tool for c in report.failed_approvals} | elsewhere
    return "; ".join(
        f"{inert(tool)} over {' and '.join(eras)}{'' if tool in unproven else _HOW.get(next(iter(eras)), '')}"
        for tool, eras in by_tool.items()
    )


# How a question travels in each era.
_HOW = {
    "2026-07-28": " (MRTR rounds)",
    "2025-11-25": " (elicitation/create over the back channel)",
    "2025-06-18": " (elicitation/create over the back channel)",
}


def _summary(report: AuditReport) -> str:
    counts = Counter([r.verdict for r in report.results])
    findings = counts[Verdict.VULNERABLE] + counts[Verdict.WEAK] + len(report.failed_controls)
    judged = headline(report)
    lines = ["## Summary", "", f"**What was judged**: {judged}.", ""]
    lines.append(
        f"**{findings} finding(s)**: {counts[Verdict.VULNERABLE]} vulnerable, {counts[Verdict.WEAK]} weak, "
        f"{len(report.failed_controls)} failed refusal control(s). {counts[Verdict.REFUSED]} attack(s) refused, "
        f"{counts[Verdict.NOT_APPLICABLE]} not applicable, {counts[Verdict.INCONCLUSIVE]} inconclusive"
        + (f", {counts[Verdict.EXCLUDED]} excluded by the profile" if counts[Verdict.EXCLUDED] else "")
        + "."
    )
    layers = Counter([r.layer for r in report.results if r.verdict is Verdict.REFUSED and r.layer])
    if layers:
        lines[-1] += (
            " Refused by " + ", ".join(f"{layer.value} {n}" for layer, n in sorted(layers.items())) + "."
        )
    if counts[Verdict.WEAK]:
        # A run whose only findings are weak exits 0: said here, where the count is read.
        lines[-1] += " A weak finding fails the run (exit 1) only under --mcp-strict."
    if report.failed_approvals:
        lines += [
            "",
            "**Nothing below is a clean bill of health**: the honest flow (ask, approve, the action takes effect) did "
            "not work, so the attacks could not be judged. Make approve work (its control, under Controls, says "
            "what failed and what to give the profile), then audit again.",
        ]
    if searched := report.failed_searches:
        tools = ", ".join(inert(c.tool) for c in searched)
        lines += [
            "",
            f"Zero configuration's search for the arguments the tool wants gave up on {tools}: nothing "
            "acted, and it is no finding, but no attack on it could be judged (its control says why). "
            "Its approve control says what to give a profile: the tool's `args:` (and `setup:`), or how "
            "a person who answers on their own channel is played.",
        ]
    to_fix = _what_to_fix(report)
    if to_fix:
        lines += ["", "What to fix, most severe first (each family's remedy; details under Findings):", ""]
        lines += to_fix
    elif not report.failed_approvals and findings == 0:
        lines += ["", "Nothing to fix in what was judged."]
    return "\n".join(lines)


def _what_to_fix(report: AuditReport) -> list[str]:
    by_family: dict[str, list[Result]] = {}
    for r in report.findings:
        by_family.setdefault(r.family, []).append(r)

    def rank(family: str) -> tuple[int, str]:
        return min(SEVERITIES.index(r.rated_severity) for r in by_family[family]), family

    # A refusal control that acted comes first: the most basic promise, broken.
    lines = [_control_to_fix(control) for control in report.failed_controls]
    for family in sorted(by_family, key=rank):
        found = by_family[family]
        worst = SEVERITIES[rank(family)[0]]
        kinds = Counter(r.verdict.value for r in found)
        counted = ", ".join(
            f"{n} {v}" for v, n in sorted(kinds.items(), key=lambda kv: kv[0] != "vulnerable")
        )
        remedy = found[0].remedy or "see the finding"
        lines.append(
            f"1. **{family}** ({worst}; {counted}: {', '.join(sorted({r.id for r in found}))}): {remedy}"
        )
    return lines


def _controls(report: AuditReport) -> str:
    rows = []
    for c in report.controls:
        state = "not applicable" if not c.applicable else ("passed" if c.passed else "**FAILED**")
        rows.append((c.name, inert(c.tool), state, inert(c.detail)))
    intro = (
        'The honest flow comes first: approve must act, and decline, cancel and an accepted "no" must not. '
        "If approve fails (or zero configuration's search for the arguments it wants gives up), no attack "
        "on that tool can be judged and all of them are inconclusive; only a refusal control that failed "
        "is a finding."
    )
    return "\n\n".join(
        ["## Honest-flow controls", intro, _table(("control", "tool", "result", "detail"), rows)]
    )


def _findings(report: AuditReport) -> str:
    parts = ["## Findings"]
    if not report.findings and not report.failed_controls:
        parts.append(
            "None in what was judged: no attack took effect and no refusal was weak."
            if audit_judged(report)
            else "None, but see the summary: not everything was judged."
        )
    for control in report.failed_controls:
        parts.append(_control_finding(report, control))
    for severity in SEVERITIES:
        found = [r for r in report.findings if r.rated_severity == severity]
        if found:
            parts.append(f"### {severity.capitalize()}")
            parts.extend(_finding(report, r) for r in found)
    return "\n\n".join(parts)


def audit_judged(report: AuditReport) -> bool:
    return not report.failed_approvals


def _an(name: str) -> str:
    """The control's name with its article: "a decline", "an unanswered"."""
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


def _control_to_fix(control: ControlResult) -> str:
    tool = inert(control.tool)
    if control.name == UNASKED:
        return f"1. **control {control.name}** (high): {tool} acted with no confirmation at all; {UNASKED_REMEDY}"
    if control.still_waiting:
        # Nothing acted: the call hung. The unanswered family rates that a SHOULD (weak), never "acted".
        return (
            f"1. **control {control.name}** (SHOULD): a call to {tool} nobody answered was still waiting "
            f"past its bound, and nothing acted; {STILL_WAITING_REMEDY}."
        )
    return (
        f"1. **control {control.name}** (high): {_an(control.name)} acted on {tool}; "
        "act only on an accepted answer that says yes."
    )


def _control_finding(report: AuditReport, control: ControlResult) -> str:
    if control.still_waiting:
        command = rerun_command(report.target, f"control-{control.name} and {control.tool}")
        what = (
            f"What happened: {inert(control.detail)}. Nothing acted, but a call nobody answers must end "
            "with a refusal within its bound."
        )
        remedy = f"Remedy: {STILL_WAITING_REMEDY}."
    elif control.name == UNASKED:
        # It has no item of its own: the approve control is what shows it again.
        command = rerun_command(report.target, f"control-approve and {control.tool}")
        what = f"What happened: {inert(control.detail)}. Nobody was asked, and nothing else gated it."
        remedy = f"Remedy: {UNASKED_REMEDY}"
    else:
        command = rerun_command(report.target, f"control-{control.name} and {control.tool}")
        what = f"What happened: {inert(control.detail)}. {_an(control.name).capitalize()} must never act."
        remedy = (
            "Remedy: act only on an accepted answer that says yes; a decline, a cancel or an accepted "
            '"no" must leave the file alone.'
        )
    return "\n\n".join(
        [
            f"### Control {control.name} failed on {inert(control.tool)}",
            what,
            remedy,
            "Re-run just this control:",
            _fence([command], "sh"),
        ]
    )


def _requirement(result: Result) -> str:
    refs = "; ".join(inert(ref) if not ref.startswith("CWE-") else ref for ref in result.refs) or "-"
    if result.level == "DERIVED":
        why = inert(result.derived) if result.derived else "no sentence states it literally"
        return f"- **Requirement** (DERIVED, not a literal spec sentence: {why}): {refs}"
    return f"- **Requirement** ({result.level}, binding the server): {refs}"


def _finding(report: AuditReport, result: Result) -> str:
    mark = report.mark(result)
    facts = [
        f"- **Verdict**: {result.verdict.value}; refused by {refused_by(result)}",
        *([f"- **Protocol**: {inert(result.era)}"] if result.era else []),
        f"- **Why**: {inert(result.reason)}",
        f"- **Remedy**: {result.remedy or '-'}",
        _requirement(result),
    ]
    if result.owasp:
        facts.append("- **OWASP**: " + ", ".join(owasp_label(item) for item in result.owasp))
    if result.requirements:
        facts.append(
            "- **Also required by**: "
            + ", ".join(f"{item} ({REQUIREMENT_ITEMS.get(item, '')})" for item in result.requirements)
        )
    if not _trait(result.family, "premise_asked"):
        facts.append(f"- **Asked the user during the attack**: {'yes' if result.asked_user else 'no'}")
    lost = [*result.effect.removed, *result.effect.changed]
    if lost:
        facts.append("- **Effect on disk**: " + ", ".join(inert(p) for p in lost))
    if mark is not None:
        facts.append(f"- **Baseline**: {mark.status}: {mark.reason}")
    requests = [line for line in result.evidence if line.startswith("[")]
    observed = [line for line in result.evidence if not line.startswith("[")]
    return "\n\n".join(
        [
            f"#### {result.id} {result.title} ({inert(result.tool)})",
            "\n".join(facts),
            "Reproduction: the request sequence the audit sent, and what it saw (long lines shortened; "
            "audit.json has them whole):",
            _fence(_visible_line(shorten(line)) for line in [*requests, *observed]),
            "Re-run just this attack (or `mcp-confirm-audit replay audit.json "
            f"{result.id} --tool {result.tool}` from the report):",
            _fence([rerun_command(report.target, f"{result.id} and {result.tool}")], "sh"),
        ]
    )


def _trait(family: str, name: str) -> bool:
    """A boolean trait the family declared where it is registered (False for a family no longer known).

    `premise_asked`: its premise is that the user was asked (and answered), so "asked the user: yes"
    says nothing there and "no" would read as a contradiction. `both_eras`: it drives two eras itself.
    """
    # Imported here: the registry imports every technique module, which a writer needs only now.
    from ..techniques import traits_of

    found = traits_of(family)
    return bool(getattr(found, name)) if found is not None else False


def _families_with(name: str) -> set[str]:
    """Every registered family with the boolean trait `name` (see `_trait`), looked up once for a table."""
    from ..techniques import traits

    return {family for family, found in traits().items() if getattr(found, name)}


def owasp_label(item: str) -> str:
    title = OWASP_ITEMS.get(item)
    return f"{item} {title}" if title else item


def _visible_line(line: str) -> str:
    # Printable (no Other or Separator character but the space): nothing in it to escape.
    return line if line.isprintable() else "".join(_visible(ch) for ch in line)


_MECHANISMS = {
    "mrtr": "MRTR input requests",
    "token": "a token from a preview call",
    "pending": "a pending action approved elsewhere",
    "flag": "an approval argument the caller sets",
    "elicitation": "elicitation/create requests during the call (a legacy connection)",
}
# The group of tools whose honest flow failed (`_layers`): sorted last, after every mechanism's name.
_UNPROVEN = "~unproven"


def _layers(report: AuditReport) -> str:
    """The layer table; grouped by how each tool confirms when the run went through more than one way."""
    groups: dict[str, list[Result]] = {}
    unproven = {c.tool for c in report.failed_approvals}
    for r in report.results:
        # A tool whose honest flow failed was never seen to confirm any way: grouped as that, not as a guess.
        groups.setdefault(_UNPROVEN if r.tool in unproven else r.mechanism or "mrtr", []).append(r)
    heading = "## Which layer refused each attack"
    if len(groups) < 2:
        return "\n\n".join([heading, _layer_table(report, report.results)])
    parts = [heading]
    for mechanism, results in sorted(groups.items()):
        parts += [
            "### Not seen to confirm: the honest flow failed"
            if mechanism == _UNPROVEN
            else f"### Confirmed through {_MECHANISMS.get(mechanism, inert(mechanism))}",
            _layer_table(report, results),
        ]
    return "\n\n".join(parts)


def _layer_table(report: AuditReport, results: Sequence[Result]) -> str:
    rows = []
    for r in results:
        mark = report.mark(r) if report.marks else None
        rows.append(
            (
                r.id,
                r.variant,
                inert(r.tool),
                r.verdict.value,
                refused_by(r),
                "yes" if r.asked_user else "no",
                mark.status if mark else "",
            )
        )
    header = ("attack", "variant", "tool", "verdict", "refused by", "asked user", "baseline")
    return _table(header, rows)


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
    lines.extend(f"- **{r.id}** ({inert(r.tool)}): {inert(r.reason)}" for r in closed)
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
        rows.append((f"{r.id} {r.variant}", inert(r.tool), without, alone, a.removed_guard))
    header = ("attack", "tool", "without sdk-boundary", "refused on its own by", "sdk-boundary is")
    return "\n\n".join(["## Is each guard load-bearing? (ablation)", intro, _table(header, rows)])


def _requirements(results: Sequence[Result]) -> str:
    groups: dict[tuple[str, str, tuple[str, ...], tuple[str, ...]], list[str]] = {}
    for r in results:
        ids = groups.setdefault((r.family, r.level, r.refs, r.owasp), [])
        if r.id not in ids:
            ids.append(r.id)
    lines = ["## The requirement each result rests on", ""]
    for (family, level, refs, owasp), ids in sorted(groups.items()):
        tags = f"; OWASP {', '.join(owasp)}" if owasp else ""
        lines.append(f"- **{family}**, {level}{tags} ({', '.join(ids)})")
        lines.extend([f"  - {inert(ref) if not ref.startswith('CWE-') else ref}" for ref in refs])
    return "\n".join(lines)


def _untested(report: AuditReport) -> str:
    rows = [
        (r.id, inert(r.tool), r.verdict.value, _why(r), next_step(report, r))
        for r in report.results
        if r.verdict in _UNJUDGED
    ]
    rows += [
        (f"control {c.name}", inert(c.tool), "not applicable", inert(c.detail), "-")
        for c in report.controls
        if not c.applicable
    ]
    rows += [
        ("control approve", inert(c.tool), "failed", inert(c.detail), _APPROVE_STEP)
        for c in report.failed_approvals
    ]
    body = (
        _table(("attack", "tool", "verdict", "why", "next step that would judge it"), rows)
        if rows
        else "Nothing: every attack run was judged."
    )
    return "\n\n".join(["## Not testable here, and why", body])


def _why(result: Result) -> str:
    if result.verdict is Verdict.EXCLUDED:
        # The profile's words are the user's, not the target's: shown as written.
        return _cell(result.reason)
    return inert(result.reason)


_APPROVE_STEP = (
    "make the honest flow work (the approve control says what failed and what to set), then audit again"
)
_EXCLUDE = "or, if it can never be judged on this target, `exclude:` it in the profile with the reason"
# What the start of an inconclusive result's reason (engine/verdict.py) says to do next.
_NEXT: tuple[tuple[str, str], ...] = (
    ("honest flow failed", _APPROVE_STEP),
    (
        "could not set the attack up",
        "give the profile what the attack needs (`setup:` calls, `args:`, a second process), " + _EXCLUDE,
    ),
    (
        "the target stopped answering once",
        "re-run it alone (`-k`, below) to see whether it stops again; read the target's stderr log",
    ),
    (
        "the target stopped answering",
        "read the target's stderr (in the run's output), fix the crash or raise `call_timeout`, then re-run it",
    ),
    ("no hostile value reached a question", "let the tool ask about the values it refuses, " + _EXCLUDE),
    (
        "it acted",
        "add an `effect:` probe that lists what the action changes (a tool, a file, a table), then re-run it",
    ),
)


def next_step(report: AuditReport, result: Result) -> str:
    """What would let an inconclusive result be judged: its cause's step, and the command to re-run it."""
    if result.verdict is not Verdict.INCONCLUSIVE:
        return "-"
    step = next(
        (step for start, step in _NEXT if result.reason.startswith(start)),
        "add an `effect:` probe, or the profile's `answer:` and `setup:`, so the target's refusal or its "
        "effect can be told apart, " + _EXCLUDE,
    )
    if result.reason.startswith("honest flow failed"):
        return step
    # The tool's name is the target's: the command is shown inert.
    return f"{step}: {inert(rerun_command(report.target, f'{result.id} and {result.tool}'))}"


def _baseline(report: AuditReport) -> str:
    if report.baseline is None:
        return ""
    lines = ["## Baseline", "", f"Checked against {inert(report.baseline)}.", ""]
    for r in report.results:
        if (mark := report.mark(r)) is not None and mark.status != "accepted":
            # The baseline's words are the user's, not the target's: shown as written.
            lines.append(f"- {r.id} on {inert(r.tool)}: {mark.status}: {mark.reason}")
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
            "JSON-RPC error; `tool` the tool's own refusal; `none (it took effect)` means nothing refused it",
            "and the action happened; `none (nothing refused it)`, that what the person was shown is the",
            "finding (a forged question, a form asking for a secret), with nothing changed.",
            "Paths in the temporary sandbox are written as `{sandbox}`; whatever the server chose (its",
            "answers, names, messages) is shown in code spans, never rendered.",
            "",
            "Verdicts: `vulnerable`, the attack took effect; `weak`, a SHOULD-level failure (nothing happened,",
            "but not for the right reason or at the right time); `inconclusive`, it could not be judged;",
            "`not_applicable`, it does not apply to this target; `excluded`, the profile leaves it out",
            "with the reason shown (never a refusal). A finding's severity is the catalogue's,",
            "at most `medium` for a SHOULD requirement and at most `low` for a weak verdict.",
            "",
            "Requirement levels are the spec's keywords (MUST, MUST NOT, SHOULD) for a sentence that binds",
            "the server. `DERIVED` means no sentence states the check literally: each such finding says",
            "which sentence it follows from and why.",
        ]
    )
