"""The contract of `audit.json`, declared once: pydantic models, strict, every key declared.

`schemas/audit.schema.json` (and `audit_json.schema()`) is generated from them; a test holds a
real audit.json, written by an in-process audit, to them both. The writer still writes the
document itself (`audit_json.AuditJson`), so the bytes of a report do not depend on pydantic's
serialiser; the models say what those bytes may be.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..models import Layer, Verdict

SCHEMA_COMMAND = "mcp-confirm-audit schema audit -o schemas/audit.schema.json"

Severity = Literal["critical", "high", "medium", "low", "info"]
Level = Literal["MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "DERIVED"]
Count = int


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Tool(_Strict):
    name: Literal["mcp-confirm-audit"]
    version: str


class Generation(_Strict):
    """Hostile names generated per prompt-forging attack, and the run's seed (repeat with --mcp-seed)."""

    examples: int = Field(ge=1)
    seed: int


class Server(_Strict):
    """What the server said about itself; empty when it said nothing."""

    name: str | None = None
    version: str | None = None


class OutsideWrite(_Strict):
    path: str
    bytes: int = Field(ge=0)
    text: str


class Target(_Strict):
    command: str = Field(
        description="The server command with its {root} placeholder, a URL, or py:module:factory."
    )
    command_source: str | None = Field(
        None, description="Where the command came from: --mcp-target, or the profile's path."
    )
    profile: str | None = Field(None, description="The profile file the run used, as given.")
    version: str | None = Field(
        None,
        description="The target's version as its profile declares it (for servers that do not report one).",
    )
    root_from: Literal["arg", "cwd"] | None = None
    call_timeout: float | None = Field(None, gt=0)
    generation: Generation | None = None
    server: Server | None = None
    tools: list[str] | None = Field(None, description="The tools audited.")
    left_out: list[str] | None = Field(
        None,
        description="Zero configuration: the tools not audited, each with why (no gate and no effect; a step "
        "or a rule of another tool's proven flow).",
    )
    confinement: str | None = Field(
        None,
        description="How the target's processes were confined: 'unshare (user, pid, mount, net loopback-only)', "
        "'unshare (user, pid, mount; network: host, WHY)', or 'none: WHY'.",
    )
    outside_root: list[OutsideWrite] | None = Field(
        None,
        description="Files the confined target wrote outside its root (kept apart, never on the machine): the "
        "path it wrote, its size and the start of its text.",
    )
    processes_started: int | None = Field(
        None, ge=0, description="Target processes started, summed over xdist workers."
    )
    transport: Literal["stdio", "http", "in-process"] | None = Field(
        None, description="How the target was reached."
    )
    replicas: int | None = Field(
        None, ge=1, description="Processes of the target started side by side on one root (cross-replica)."
    )
    shared_keys: bool | None = Field(
        None,
        description="Whether every process of the target was given one request-state key (shared_key_env).",
    )
    ablation: bool | None = Field(
        None,
        description="Whether attacks refused by the SDK's boundary were run again without it (in-process targets).",
    )


class Summary(_Strict):
    judged: str | None = Field(
        None,
        description="What was judged, in words: 'complete: ...', 'not audited: the honest flow failed ...', "
        "'partial: ...', 'stopped early (-x): ...'.",
    )
    verdicts: dict[Verdict, int]
    refused_by: dict[Layer, int]
    failed_refusal_controls: int | None = Field(
        None,
        ge=0,
        description="How many refusal controls (decline, cancel, negative, preview-alone, unanswered, unasked) "
        "failed: each is a finding. A failed approve or search is not counted: it leaves the attacks unjudged "
        "(see judged).",
    )


class Scope(_Strict):
    """What was asked to run and how much did: attacks collected, selected (after -k, -m, --lf), what selected
    them, and why the run stopped early (-x, --maxfail, an interrupt)."""

    attacks: int | None = Field(None, ge=0)
    selected: int | None = Field(None, ge=0)
    selected_by: str | None = None
    stopped_early: str | None = None


class BaselineSummary(_Strict):
    file: str
    accepted: int = Field(ge=0)
    stale: int = Field(ge=0)
    layer_drift: int = Field(ge=0)
    unmatched: list[str] = Field(
        description="Accepted findings no result of the run could match (a retired attack, a tool no longer "
        "offered): stale."
    )


class Control(_Strict):
    tool: str
    name: str = Field(
        description="approve, decline, cancel or negative (an accepted form that says no); preview-alone (a token "
        "or pending flow's preview must not act); bookkeeping (what the controls learned changes without the "
        "action, and left out of every effect); unasked (the tool acted on its first call, with no question and "
        "no other gate: a finding); search (zero configuration's search for the arguments the tool wants: "
        "failed when it gave up, which leaves the attacks unjudged and is no finding)."
    )
    passed: bool
    applicable: bool
    detail: str
    evidence: list[str] | None = Field(
        None,
        description="The approve control only: every exchange of the tool's controls, whole (the terminal "
        "shortens them).",
    )


class Effect(_Strict):
    removed: list[str]
    changed: list[str]
    added: list[str]
    observed: list[str] | None = Field(
        None,
        description="What an effect probe (a read-only tool, a file's rows, a query, the sink) saw change.",
    )
    ignored: list[str] | None = Field(
        None,
        description="Changes left out as the target's bookkeeping, learned from the controls or named by the "
        "profile's ignore:.",
    )


class Ablation(_Strict):
    """The attack run again on the target built without the SDK's request-state boundary (in-process targets,
    for attacks that boundary refused)."""

    removed: Layer
    verdict: Verdict
    layer: Layer | None
    reason: str
    refused_alone_by: list[Layer] = Field(description="Every layer shown to refuse the attack on its own.")
    removed_guard: Literal["load-bearing", "redundant", "unknown"] = Field(
        description="load-bearing: nothing else refuses it; redundant: another layer does too."
    )
    evidence: list[str]


class Mark(_Strict):
    status: Literal["accepted", "stale", "layer-drift"]
    reason: str
    expected: str


class Result(_Strict):
    id: str = Field(pattern=r"^MCA-[A-Z]+-[0-9]{3}$")
    family: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    title: str
    tool: str
    variant: str
    severity: Severity
    level: Level
    verdict: Verdict
    layer: Layer | None = Field(
        description="The layer that refused the attack; none when it took effect; null when nothing was judged."
    )
    asked_user: bool = Field(description="Whether the target asked the human during the attack.")
    effect: Effect
    reason: str
    evidence: list[str] = Field(
        description="Every request and response, in order, each message whole (review.md shortens long lines), "
        "and what changed on disk."
    )
    refs: list[str] = Field(description="The requirements the result rests on.")
    ablation: Ablation | None
    mechanism: Literal["mrtr", "token", "pending", "flag", "waits", "elicitation"] | None = Field(
        None,
        description="How the attacked tool confirms: MRTR input requests, a token from a preview call, a pending "
        "action approved elsewhere, an approval argument the caller sets, a call that waits while the person "
        "answers elsewhere, or elicitation/create requests during the call (a legacy connection). Absent when "
        "not recorded.",
    )
    era: str | None = Field(
        None,
        pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}(, [0-9]{4}-[0-9]{2}-[0-9]{2})*$",
        description="The protocol version(s) the attack was driven in: 2026-07-28 (MRTR rounds), 2025-11-25 or "
        "2025-06-18 (questions as elicitation/create requests); protocol-downgrade names both, the primary's "
        "first. Absent when not recorded.",
    )
    remedy: str | None = Field(
        None,
        description="What the server's author should do, from the catalogue (the family's, or the attack's own).",
    )
    owasp: list[str] | None = Field(
        None,
        description="The OWASP Top 10 for Agentic Applications (ASIxx) and OWASP MCP Top 10 (MCPxx) items the "
        "family falls under.",
    )
    derived: str | None = Field(
        None,
        description="For a DERIVED level: the sentence the check follows from, and why no sentence states it "
        "literally.",
    )
    requirements: list[str] | None = Field(
        None,
        description="Requirement ids nearer to the property than OWASP's lists: OWASP AISVS chapter C10 "
        "(AISVS-10.x.y) and the App Defense Alliance AI Tool Specification (ADA-AITS-2.3, ADA-AITS-2.7).",
    )
    rated_severity: Severity | None = Field(
        None,
        description="The severity the finding is filed under: the catalogue's, at most medium for a SHOULD and at "
        "most low for a weak verdict.",
    )
    baseline: Mark | None


class AuditDocument(_Strict):
    """One audit of one MCP server: the honest-flow controls, then every attack with its verdict, the layer that
    refused it and the evidence. Fields may be added under this version; none is renamed or removed."""

    schema_version: Literal[1]
    tool: Tool
    generated: str = Field(
        pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})$",
        description="When the report was written (UTC).",
    )
    target: Target
    summary: Summary
    scope: Scope | None = None
    baseline: BaselineSummary | None = Field(description="null when the run had no baseline.")
    controls: list[Control]
    results: list[Result]


def schema() -> dict[str, Any]:
    """The JSON Schema every audit.json validates against (JSON Schema 2020-12)."""
    generated = AuditDocument.model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:mcp-confirm-audit:audit:1",
        **generated,
        "title": "mcp-confirm-audit audit.json, schema_version 1",
    }


def schema_text() -> str:
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"
