"""The vocabulary every other module speaks: specs, evidence, verdicts.

Nothing here does I/O or imports pytest, so verdicts and reports can be
computed and tested from recorded data alone.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

# Said of every honest redemption one replica refuses because another minted it:
# safe, but what users of the deployment will see.
FAIL_CLOSED = "users behind a load balancer will see confirmations that stop working"
# The control a tool fails when its first call acts on its subject, with no question and no other gate.
UNASKED = "unasked"
UNASKED_REMEDY = (
    "ask the person before the tool acts (an elicitation the client shows the user, or a pending "
    "action only the person's own channel approves); a tool that changes things must not act on the "
    "agent's word alone"
)
# How the unanswered control says the call nobody answered was still waiting when its bound ran out:
# nothing acted (that failure says "acted though the person never answered"), the call just never ended.
STILL_WAITING = "did not fail closed within its bound"
STILL_WAITING_REMEDY = (
    "give the wait a lifetime that the waiting call enforces itself (not only a listing the person may "
    "never run), and end the call with a refusal when it passes; never act on a request nobody answered"
)
# The control zero configuration adds when the approve control's call was refused: its search for the
# arguments the tool wants (engine/search). It fails when it gives up, and then nothing acted.
SEARCH = "search"
# The refusal controls: each gives the target a "no" (a decline, a cancel, an accepted answer that says
# no, a token or pending flow's preview alone, a flow nobody answers) or no question at all (unasked),
# and fails when the action went ahead anyway (or, nobody answering, the call did not end within its
# bound). Their failure is a finding. Every other control proves or learns the honest flow (approve,
# zero configuration's search for the arguments, the maker, the bookkeeping, the pace): its failure
# leaves the tool's attacks unjudged, and is never a finding.
REFUSAL_CONTROLS = frozenset({"decline", "cancel", "negative", "preview-alone", "unanswered", UNASKED})


class Verdict(enum.StrEnum):
    REFUSED = "refused"
    VULNERABLE = "vulnerable"
    # A SHOULD-level failure: nothing happened, but not for the right reason or
    # not at the right time (the user was asked about a path that could never
    # be allowed).
    WEAK = "weak"
    # The attack could not be judged (the honest flow failed, the setup failed).
    # Never a pass.
    INCONCLUSIVE = "inconclusive"
    NOT_APPLICABLE = "not_applicable"
    # Left out by the profile (`exclude:`), with the reason a person wrote: not run, never a
    # refusal, never a pass; every report names it with that reason.
    EXCLUDED = "excluded"


class Layer(enum.StrEnum):
    """Which part of the target stopped the attack."""

    SDK_BOUNDARY = "sdk-boundary"
    PROTOCOL = "protocol"
    TOOL = "tool"
    TRANSPORT = "transport"
    NONE = "none"


class Phase(enum.StrEnum):
    """Where in an attack an exchange or a snapshot belongs.

    Only what happens in the attack phase can earn a verdict; setup exchanges
    (an honest first round, a successful redemption before a replay) are
    evidence of context.
    """

    SETUP = "setup"
    ATTACK = "attack"


@dataclass(frozen=True, slots=True)
class FileIdentity:
    """What a user confirmed: a file, not a name."""

    kind: str  # "file", "dir", "link", "other"
    dev: int
    ino: int
    size: int
    mtime_ns: int
    link_target: str | None = None


@dataclass(frozen=True, slots=True)
class TreeSnapshot:
    """Every entry below the sandbox, keyed by its path relative to the sandbox."""

    entries: Mapping[str, FileIdentity]
    # Snapshots refreshed one from another share `history`, the names each refresh looked at
    # again (added, replaced or dropped); this one has seen its first `generation` steps. A diff
    # between two of one history looks only at the names of the steps between them.
    history: list[frozenset[str]] | None = field(default=None, compare=False, repr=False)
    generation: int = field(default=0, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Effect:
    """What changed between the start and the end of an attack: on disk, and through the effect probes."""

    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    # What an effect probe saw change ("tool:list_payments.payments[3]"); a
    # new row or a sent request counts, unlike a new file on disk.
    observed: tuple[str, ...] = ()
    # Changes left out as the target's bookkeeping (a log that grows on every
    # call), named so a reader can see what was not counted.
    ignored: tuple[str, ...] = ()

    @property
    def happened(self) -> bool:
        # Additions on disk alone are not an effect: a server may write its own
        # log or a backup next to the target. Losing or altering an existing
        # file is, and so is anything a probe of the action's effect saw change.
        return bool(self.removed or self.changed or self.observed)

    def as_dict(self) -> dict[str, list[str]]:
        return {
            "removed": list(self.removed),
            "changed": list(self.changed),
            "added": list(self.added),
            "observed": list(self.observed),
            "ignored": list(self.ignored),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Effect:
        return cls(**{key: tuple(data.get(key, ())) for key in cls.__dataclass_fields__})


class Outcome(enum.StrEnum):
    """The shape of a target's answer to one request."""

    COMPLETE = "complete"  # a normal result
    TOOL_ERROR = "tool-error"  # a result with isError: true
    INPUT_REQUIRED = "input-required"
    RPC_ERROR = "rpc-error"  # a JSON-RPC error object
    TRANSPORT = "transport"  # timeout, crash, closed pipe, unparseable reply


class Said(enum.StrEnum):
    """The class of one reply, as recorded with its evidence."""

    ASKED = "asked"  # a question, a pending id, a token preview, an ASK payload
    ACTED = "acted"  # an ordinary result that reports no refusal (whether it acted, the effect says)
    REFUSED = "refused"  # an error, or a refusal inside an ordinary result
    STOPPED = "stopped"  # no answer: a timeout, a crash, a closed pipe


@dataclass(frozen=True, slots=True)
class Signature:
    """How this target answered one control: the reply's shape, and the control that taught it."""

    control: str
    said: Said
    code: int | None
    shape: str
    # A preview that handed out a token or id: an ordinary result by its class, but it asked (the
    # action waits for its approval), and is shown so: never as a reply that said it was done.
    asked: bool = False

    def as_text(self) -> str:
        kind = "asked (a token or id handed out)" if self.asked else self.said.value
        return f"{self.control}: {kind}{f' {self.code}' if self.code is not None else ''} {self.shape!r}"


@dataclass(frozen=True, slots=True)
class Signatures:
    """What refusals look like on this target, learned from its own controls.

    `gate`: the replies of a decline, a cancel, an accepted "no", a wrong token
    or state; `other`: the reply to a subject that does not exist.
    """

    gate: tuple[Signature, ...] = ()
    other: tuple[Signature, ...] = ()
    # Why a refusal control could not be run here (it neither asked nor acted), "" if none: then an
    # ordinary reply with nothing moved shows no gate, since the world may have left nothing to ask.
    unlearned: str = ""

    def learned(self) -> bool:
        return bool(self.gate or self.other)

    def describe(self) -> tuple[str, ...]:
        return (
            *(f"gate refusal learned from {s.as_text()}" for s in self.gate),
            *(f"other failure learned from {s.as_text()}" for s in self.other),
        )


@dataclass(frozen=True, slots=True)
class Question:
    """One input request the target asked the human."""

    key: str
    method: str
    message: str | None = None
    schema: Mapping[str, Any] | None = None
    # A URL-mode elicitation: the page the person is sent to (no form, no content in the answer).
    url: str | None = None


@dataclass(frozen=True, slots=True)
class Response:
    outcome: Outcome
    text: str = ""
    code: int | None = None
    data: Any = None
    questions: tuple[Question, ...] = ()
    request_state: str | None = None
    # A normal result's structuredContent: what a setup call's saved fields and
    # a read-only probe are read from.
    structured: Any = None

    @property
    def refused_by_boundary(self) -> bool:
        return (
            self.outcome is Outcome.RPC_ERROR
            and self.code == -32602
            and isinstance(self.data, Mapping)
            and self.data.get("reason") == "invalid_request_state"
        )


@dataclass(frozen=True, slots=True)
class Exchange:
    """One request the harness sent and what came back."""

    phase: Phase
    label: str
    connection: str
    request: Mapping[str, Any]
    response: Response
    elapsed_ms: float = 0.0
    # `{NAME}` placeholders of the profile's call the harness had no value for, sent as literal text
    # (a name only the person's step saves, in an attack that leaves the person out).
    unfilled: tuple[str, ...] = ()
    # What was wrong with the call itself by the tool's own schema (a challenge object where a
    # string token belongs, a required argument left out): whatever came back is about that.
    malformed: str = ""


@dataclass(frozen=True, slots=True)
class Precondition:
    """Whether the honest flow worked on this tool, so attacks can be judged."""

    ok: bool
    reason: str = ""


class Part:
    """A family's own evidence on a transcript: a small frozen dataclass deriving from this.

    The verdict reads each part through the reading its family registered with it
    (`engine.reading.reads`); the common transcript knows none of them.
    """

    __slots__ = ()


PartT = TypeVar("PartT", bound=Part)


@dataclass(frozen=True, slots=True)
class AtTheGate:
    """Another tool judged against the gated action (ungated, prompt-forging): where the effect counts.

    `places`: where and how the honest approval's effect showed; only a change there counts, and
    the same change is the gated harm itself. `staged`: the attack itself ran the action's setup
    calls after the snapshot (prompt-forging staging a hostile value), so only the gated kind of
    change counts and another change there is the setup call's. `staging_tools`: the tools the
    attack called only to make a use of the action (ungated's staging): a call of theirs may have
    run, but what held is quoted from a call of another tool where one ran.
    """

    places: tuple[str, ...]
    staged: bool = False
    staging_tools: tuple[str, ...] = ()
    # Of `places`, each one-line text's change word by word (oracle.effects.reworded): another tool's
    # change of that text to another part of it (a note beside the status the action sets) is not the
    # gated change.
    reworded: Mapping[str, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Transcript:
    """Everything recorded during one attack: the only input to a verdict.

    The fields are what every family records; what one family records of its own is a part
    (`parts`, read through the reading registered with it).
    """

    attack_id: str
    tool: str
    precondition: Precondition
    exchanges: tuple[Exchange, ...] = ()
    before: TreeSnapshot | None = None
    after: TreeSnapshot | None = None
    watched: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    setup_failure: str | None = None
    not_applicable: str | None = None
    # Checks that judge what the human was shown rather than the disk; each
    # finding is (severity verdict, message).
    findings: tuple[tuple[Verdict, str], ...] = ()
    # The layer whose rule a finding breaks, when one does (a form sent to a client that declared no
    # elicitation breaks the protocol's); None: the result names no layer.
    finding_layer: Layer | None = None
    # For a proxy target, the upstream the profile names: an effect seen is that process's doing.
    upstream: str | None = None
    # What each effect probe saw when the attack proper started and at its end
    # (probe name -> JSON value), and the patterns that name bookkeeping.
    observed_before: Mapping[str, Any] | None = None
    observed_after: Mapping[str, Any] | None = None
    bookkeeping: tuple[str, ...] = ()
    # How the tool confirms (mrtr, token, pending, flag): what the result records.
    mechanism: str | None = None
    # The protocol version of the connection the attack drove (2026-07-28, 2025-11-25, ...).
    era: str | None = None
    # What this target's refusals look like, learned from its own controls: who refused.
    signatures: Signatures | None = None
    # What an effect during the attack means when not `vulnerable`, and why
    # (an agent completing a flow no human was asked in is a SHOULD: weak).
    effect_verdict: tuple[Verdict, str] | None = None
    # The attack's own case directory ("root/012-MCA-…"), which places name `case/`.
    case_dir: str | None = None
    # Set by a family that runs with no honest flow on an action that names its case's file (unanswered):
    # with nothing learned of where the effect shows or what the target writes on every call (a proxy's
    # log), only that case's files (and anything outside the root) are the action's own doing.
    only_the_case_counts: bool = False
    # Set when another tool is judged against the gated action: where its effect counts.
    gate: AtTheGate | None = None
    # Each family's own evidence, in the order it was recorded.
    parts: tuple[Part, ...] = ()
    # Where the honest approval's effect showed (the controls' places): a probe left unasked while
    # the target's question was open hides no effect unless it is one of them (or none is known).
    effect_places: tuple[str, ...] = ()

    def part(self, kind: type[PartT]) -> PartT | None:
        """The part of `kind` this transcript holds, if any."""
        for part in self.parts:
            if isinstance(part, kind):
                return part
        return None


@dataclass(frozen=True, slots=True)
class AttackSpec:
    """One catalogue entry."""

    id: str
    slug: str
    family: str
    title: str
    severity: str
    level: str
    technique: str
    params: Mapping[str, Any] = field(default_factory=dict)
    refs: tuple[str, ...] = ()
    # Cited instead of `refs` on a connection of the older eras (2025-06-18, 2025-11-25), where the
    # server asks over the back channel and the rule is that era's own; empty: `refs` hold in every era.
    legacy_refs: tuple[str, ...] = ()
    refused_by: tuple[Layer, ...] = (Layer.SDK_BOUNDARY, Layer.PROTOCOL, Layer.TOOL)
    # When true, a refusal that came only after the user was asked is weak:
    # the user should never be asked about something that could never be allowed.
    refuse_before_asking: bool = False
    # The attack needs a second process of the target (a state from another
    # process); the session starts one in the background before it is needed.
    second_process: bool = False
    # What a normal result (neither an error nor a question) to the last attack
    # request means when nothing changed on disk; None: a refusal like any
    # other. Set where the attack took the target away first, so a tool that
    # says it acted is misreporting.
    reported_success: Verdict | None = None
    # `refusal: any` in the catalogue: whoever refuses, a refusal is the pass (the attack asks
    # whether the target survives, or took the subject away itself); else only the gate's counts.
    any_refusal: bool = False
    status: str = "active"
    # What the server's author should do about a finding: one per family,
    # which an attack may override; reviewed in the YAML like the rest.
    remedy: str = ""
    # The items of the OWASP risk lists the family falls under (ids such as
    # ASI09 or MCP07); empty where none fits.
    owasp: tuple[str, ...] = ()
    # For a DERIVED level: why no sentence states it literally, and what it follows from.
    derived: str = ""
    # Requirement ids closer to the property than OWASP's lists (AISVS C10, the App
    # Defense Alliance AI Tool Specification): REQUIREMENT_ITEMS.
    requirements: tuple[str, ...] = ()

    @property
    def variant(self) -> str:
        return self.slug


@dataclass(frozen=True, slots=True)
class Result:
    """A verdict with the evidence it rests on; what reports consume."""

    id: str
    family: str
    title: str
    tool: str
    variant: str
    severity: str
    level: str
    verdict: Verdict
    layer: Layer | None
    asked_user: bool
    effect: Effect
    reason: str
    evidence: tuple[str, ...]
    refs: tuple[str, ...]
    # The attack again with the SDK's boundary taken out (in-process targets).
    ablation: Ablation | None = None
    # How the tool confirms (mrtr, token, pending, flag, elicitation); None when not recorded.
    mechanism: str | None = None
    # The protocol version the tool was audited in (2026-07-28, 2025-11-25, 2025-06-18).
    era: str | None = None
    # From the catalogue entry: what to do about it, the OWASP items, and why
    # a DERIVED requirement is derived.
    remedy: str = ""
    owasp: tuple[str, ...] = ()
    derived: str = ""
    requirements: tuple[str, ...] = ()

    @property
    def rated_severity(self) -> str:
        """The severity a finding is filed under: the catalogue's, never above what its verdict and level carry.

        A weak result (a SHOULD-level failure, nothing happened) is at most
        `low`; a SHOULD-level requirement is at most `medium`, whatever the
        family's default says: a reviewer reads "High" as "a MUST was broken".
        """
        return self.severity_if(self.verdict)

    def severity_if(self, verdict: Verdict) -> str:
        """`rated_severity` had the verdict been `verdict` (a rule's: what a vulnerable finding is filed under)."""
        ceiling = "critical"
        if self.level.startswith("SHOULD"):
            ceiling = "medium"
        if verdict is Verdict.WEAK:
            ceiling = "low"
        return _at_most(self.severity, ceiling)

    def as_dict(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"mechanism": self.mechanism} if self.mechanism is not None else {}
        if self.era is not None:
            extra["era"] = self.era
        return {
            "id": self.id,
            "family": self.family,
            "title": self.title,
            "tool": self.tool,
            "variant": self.variant,
            "severity": self.severity,
            "level": self.level,
            # StrEnums: str() is the value, without the `.value` descriptor's calls (every result passes here).
            "verdict": str(self.verdict),
            "layer": str(self.layer) if self.layer else None,
            "asked_user": self.asked_user,
            "effect": self.effect.as_dict(),
            "reason": self.reason,
            "evidence": list(self.evidence),
            "refs": list(self.refs),
            "ablation": self.ablation.as_dict() if self.ablation else None,
            **extra,
            "remedy": self.remedy,
            "owasp": list(self.owasp),
            "derived": self.derived,
            "requirements": list(self.requirements),
            "rated_severity": self.rated_severity,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Result:
        effect = data.get("effect") or {}
        return cls(
            id=data["id"],
            family=data["family"],
            title=data["title"],
            tool=data["tool"],
            variant=data["variant"],
            severity=data.get("severity", ""),
            level=data.get("level", ""),
            verdict=Verdict(data["verdict"]),
            layer=Layer(data["layer"]) if data.get("layer") else None,
            asked_user=bool(data["asked_user"]),
            effect=Effect.from_dict(effect),
            reason=data.get("reason", ""),
            evidence=tuple(data.get("evidence", ())),
            refs=tuple(data.get("refs", ())),
            ablation=Ablation.from_dict(data["ablation"]) if data.get("ablation") else None,
            mechanism=data.get("mechanism"),
            era=data.get("era"),
            remedy=data.get("remedy", ""),
            owasp=tuple(data.get("owasp", ())),
            derived=data.get("derived", ""),
            requirements=tuple(data.get("requirements", ())),
        )


# The requirement ids a family may name in `requirements:`, nearer to what a
# confirmation must guarantee than the OWASP lists: OWASP AISVS chapter C10 (MCP
# security) and the App Defense Alliance AI Tool Specification (ADA-AITS).
REQUIREMENT_ITEMS = {
    "AISVS-10.2.4": "Model output cannot influence or bypass access-control checks",
    "AISVS-10.4.10": "Replay protection at the application layer",
    "AISVS-10.5.3": "High-risk or destructive tool calls need an explicit user confirmation",
    "AISVS-10.6.4": "Fail closed",
    "ADA-AITS-2.3": "Server-side consent backstop: fail closed unless the user confirmed this action",
    "ADA-AITS-2.7": "Out-of-band confirmation for high-risk actions, never consent relayed by the agent",
}

# Most severe first.
SEVERITIES = ("critical", "high", "medium", "low", "info")
# Each severity's place in SEVERITIES.
_SEVERITY_RANK = {severity: rank for rank, severity in enumerate(SEVERITIES)}

# The risk lists a family may name in `owasp:`, with their titles as published:
# the OWASP Top 10 for Agentic Applications (2026 edition, December 2025) and
# the OWASP MCP Top 10 (v0.1, 2025; github.com/OWASP/www-project-mcp-top-10).
OWASP_ITEMS = {
    "ASI01": "Agent Goal Hijack",
    "ASI02": "Tool Misuse and Exploitation",
    "ASI03": "Identity and Privilege Abuse",
    "ASI04": "Agentic Supply Chain Vulnerabilities",
    "ASI05": "Unexpected Code Execution",
    "ASI06": "Memory and Context Poisoning",
    "ASI07": "Insecure Inter-Agent Communication",
    "ASI08": "Cascading Failures",
    "ASI09": "Human-Agent Trust Exploitation",
    "ASI10": "Rogue Agents",
    "MCP01": "Token Mismanagement & Secret Exposure",
    "MCP02": "Privilege Escalation via Scope Creep",
    "MCP03": "Tool Poisoning",
    "MCP04": "Software Supply Chain Attacks & Dependency Tampering",
    "MCP05": "Command Injection & Execution",
    "MCP06": "Intent Flow Subversion",
    "MCP07": "Insufficient Authentication & Authorization",
    "MCP08": "Lack of Audit and Telemetry",
    "MCP09": "Shadow MCP Servers",
    "MCP10": "Context Injection & Over-Sharing",
}


def _at_most(severity: str, ceiling: str) -> str:
    # Asked twice per result by the report writers: ranks looked up, not searched for.
    if severity not in _SEVERITY_RANK:
        return severity
    rank, cap = _SEVERITY_RANK[severity], _SEVERITY_RANK[ceiling]
    return SEVERITIES[rank if rank > cap else cap]


@dataclass(frozen=True, slots=True)
class Ablation:
    """An attack refused by one layer, run again with that layer removed.

    It answers "is this guard load-bearing or redundant?": if the attack is
    still refused, another layer refuses it on its own.
    """

    removed: Layer
    verdict: Verdict
    layer: Layer | None
    reason: str
    evidence: tuple[str, ...] = ()

    @property
    def refused_alone_by(self) -> tuple[Layer, ...]:
        """Every layer shown to refuse the attack on its own."""
        alone = [self.removed]
        if self.verdict is Verdict.REFUSED and self.layer is not None and self.layer is not self.removed:
            alone.append(self.layer)
        return tuple(alone)

    @property
    def removed_guard(self) -> str:
        """`load-bearing` (nothing else stops it), `redundant` (something does), or `unknown`."""
        if self.verdict in (Verdict.VULNERABLE, Verdict.WEAK):
            return "load-bearing"
        if self.verdict is Verdict.REFUSED:
            return "redundant"
        return "unknown"

    def as_dict(self) -> dict[str, Any]:
        return {
            "removed": self.removed.value,
            "verdict": self.verdict.value,
            "layer": self.layer.value if self.layer else None,
            "reason": self.reason,
            "refused_alone_by": [layer.value for layer in self.refused_alone_by],
            "removed_guard": self.removed_guard,
            "evidence": list(self.evidence),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Ablation:
        return cls(
            removed=Layer(data["removed"]),
            verdict=Verdict(data["verdict"]),
            layer=Layer(data["layer"]) if data.get("layer") else None,
            reason=data.get("reason", ""),
            evidence=tuple(data.get("evidence", ())),
        )


# How a refusal control that could not begin says so (`ControlResult.not_begun`), before the setup's failure.
NOT_BEGUN = "could not begin, so it proved nothing: "


@dataclass(frozen=True, slots=True)
class ControlResult:
    """One honest-flow check on one tool: approve, decline, cancel, negative."""

    tool: str
    name: str
    passed: bool
    applicable: bool
    detail: str
    # Every exchange of the tool's controls, whole: carried by the approve control into audit.json.
    evidence: tuple[str, ...] = ()

    @classmethod
    def not_begun(cls, tool: str, name: str, why: str) -> ControlResult:
        """A control that could not begin: its setup failed (in a fresh world, where one could be had).

        It never put its question, so it proved nothing either way: not applicable, never a finding
        (a refusal control that fails says the target acted on a no; this one was never told no).
        """
        return cls(tool, name, True, False, f"{NOT_BEGUN}{why}")

    @property
    def could_not_begin(self) -> bool:
        """A refusal control made by `not_begun`: its setup failed, so it never put its question."""
        return self.refusal and not self.applicable and self.detail.startswith(NOT_BEGUN)

    @property
    def refusal(self) -> bool:
        """A refusal control (`REFUSAL_CONTROLS`): one whose failure means the target acted on a no."""
        return self.name in REFUSAL_CONTROLS

    @property
    def still_waiting(self) -> bool:
        """The unanswered control failed because the call never ended, not because it acted."""
        return self.name == "unanswered" and not self.passed and self.detail.startswith(STILL_WAITING)

    @property
    def finding(self) -> bool:
        """A refusal control that ran and failed: a finding. A failed approve or search is none: nothing was judged."""
        return self.refusal and self.applicable and not self.passed

    def as_dict(self) -> dict[str, Any]:
        shown: dict[str, Any] = {
            "tool": self.tool,
            "name": self.name,
            "passed": self.passed,
            "applicable": self.applicable,
            "detail": self.detail,
        }
        if self.evidence:
            shown["evidence"] = list(self.evidence)
        return shown
