"""Zero configuration: which mechanism a tool confirms with.

From the schemas first (an argument named like a token is a token flow), then
from the first call's result: a question is MRTR; a pending id (or a status
that says the action waits) is a pending flow, approved and executed by the
server's other tools named for it; a token field is a token flow; an approval
argument the refusal names is a flag. A profile's `confirmation:` wins.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..models import Outcome, Response, Said
from ..target.arguments import decides
from . import replies, values
from .base import AgentFlow, Mechanism
from .flag import FLAG_ARG, Flag
from .mrtr import Mrtr, asks
from .pending import ID_FIELD, WAITING, CallTemplate, Pending
from .token import TOKEN_FIELD, Token

if TYPE_CHECKING:
    from ..target.driver import ToolInfo

TOKEN_ARG = re.compile(r"(^|_)token$|^confirm(ation)?_?(code|id|key|token)$|^nonce$", re.I)
# An argument named for the confirmation itself (`confirmation`): a token only when the tool's own
# description says another tool hands out the token it takes ("the confirmation token from simulate_impact").
CONFIRM_ARG = re.compile(r"^confirm(ation)?$", re.I)
PREVIEW_ARG = re.compile(r"^(dry_?run|preview|simulate|plan_?only|what_?if)$", re.I)
APPROVE_TOOL = re.compile(r"approve|authori[sz]e|confirm|accept|grant|allow", re.I)
EXECUTE_TOOL = re.compile(r"execute|run_pending|apply|commit|perform|finali[sz]e|complete|carry_out", re.I)
_ID_ARG = re.compile(r"(^|_)(id|ref|ticket)$|Id$", re.I)


# A schema's parts are dicts: `dict | Mapping` tells them without the Mapping ABC's own check
# (every reply the verdict and the controls read asks for the tool's flag argument).
def _props(tool: ToolInfo) -> Mapping[str, Any]:
    props = (tool.input_schema or {}).get("properties") or {}
    return props if isinstance(props, dict | Mapping) else {}


def _typed(tool: ToolInfo, kind: str, pattern: re.Pattern[str]) -> str | None:
    for name, prop in _props(tool).items():
        types = prop.get("type") if isinstance(prop, dict | Mapping) else None
        options = (
            [x.get("type") for x in prop.get("anyOf", ()) if isinstance(x, dict | Mapping)] if prop else []
        )
        if (types == kind or kind in options) and pattern.search(name):
            return str(name)
    return None


def approval_argument(tool: ToolInfo) -> str | None:
    """A boolean argument of `tool` that claims an approval (`human_approved`, `confirm`)."""
    return _typed(tool, "boolean", FLAG_ARG)


def from_schemas(
    tool: ToolInfo, stated: Mechanism | None = None, tools: Sequence[ToolInfo] = ()
) -> Mechanism | None:
    """What the schema alone says (or the profile states); None: the first call must tell.

    A token the tool requires cannot come from a call of the tool itself: another
    tool hands it out (`preview_email` for `send_email(confirm_token)`), found by
    what the descriptions say (`preview_tool`); the approve control proves it.
    """
    if stated is not None:
        return stated.for_tool(tool.name)
    if (into := _typed(tool, "string", TOKEN_ARG)) is not None:
        preview = _typed(tool, "boolean", PREVIEW_ARG)
        required = set((tool.input_schema or {}).get("required") or ())
        other = preview_tool(tool, into, tools) if into in required and not preview else None
        if other is not None:
            return Token(tool.name, into=into, token_from=into, preview_tool=other)
        return Token(tool.name, into=into, preview_args={preview: True} if preview else {})
    if (into := _typed(tool, "string", CONFIRM_ARG)) is not None and (
        other := _named_token_source(tool, tools)
    ):
        required = set((tool.input_schema or {}).get("required") or ())
        if into in required:
            return Token(tool.name, into=into, preview_tool=other)
    return None


def _named_token_source(tool: ToolInfo, tools: Sequence[ToolInfo]) -> str | None:
    """The other tool `tool`'s own description says hands out its token ("the ... token from check_x")."""
    said = tool.description or ""
    if re.search(r"\btoken\b", said, re.I) is None:
        return None
    for other in tools:
        if other.name != tool.name and re.search(rf"(?<![\w]){re.escape(other.name)}(?![\w])", said):
            return other.name
    return None


# A tool named for a step that shows what would happen before it does.
PREVIEW_TOOL = re.compile(r"preview|simulat|dry_?run|plan|draft|prepare|propose|stage|quote|review", re.I)


def preview_tool(tool: ToolInfo, into: str, tools: Sequence[ToolInfo]) -> str | None:
    """The other tool that hands out the token `tool` takes in `into`, or None.

    Priors, never proof: a tool the gated tool's own description names ("the token from
    simulate_impact") first, then one whose description or output schema names the
    argument (`confirm_token`); among them, one named like a preview (`preview_email`).
    """
    named = re.compile(rf"(?<![\w]){re.escape(into)}(?![\w])")
    ranked: list[tuple[int, int, str]] = []
    for order, other in enumerate(tools):
        if other.name == tool.name:
            continue
        mine = re.search(rf"(?<![\w]){re.escape(other.name)}(?![\w])", tool.description or "") is not None
        theirs = named.search(f"{other.description or ''} {other.output_schema or ''}") is not None
        if not (mine or theirs):
            continue
        ranked.append((-(2 * mine + theirs + bool(PREVIEW_TOOL.search(other.name))), order, other.name))
    return min(ranked)[2] if ranked else None


# A status that says the call already acted: an id beside it names what was done, not what waits.
_DONE = re.compile(r"^\s*(applied|done|completed?|executed|succeeded|committed)\b", re.I)
# Where a payload says what became of the call, and the words that say it waits for a person.
_VERDICT_KEYS = ("decision", "status", "result", "state", "outcome", "verdict", "action_required", "next")
_ASKING_WORD = re.compile(
    r"^\s*(ask(ing)?|confirm|needs?[_ -]?(confirm\w*|approval|review)|requires?[_ -]?(confirm\w*|approval)|"
    r"(confirmation|approval)[_ -](required|needed|pending)|pending\w*|awaiting\w*|hold|on_hold|"
    r"escalate[ds]?|review)\s*$",
    re.I,
)
# A true boolean that says so: `needs_confirm`, `pending_approval`, `requires_approval`, `confirmation_required`.
_ASKING_FLAG = re.compile(
    r"^(needs?|requires?|pending|awaiting)_?(confirm(ation)?|approval|review|user|human)\w*$|"
    r"^(confirmation|approval)_?(required|needed|pending)$",
    re.I,
)
# Any field that may name the waiting action, once a payload says it asks.
_ANY_ID = re.compile(r"(^|_)(id|ref|ticket|handle)$|[a-z]Id$", re.I)


def asking_payload(response: Response) -> str | None:
    """Why an ordinary result is a question (`decision: ASK`, `needs_confirm: true`), or None.

    Some servers ask without MRTR: the result itself says the call waits for
    a person. That is asking, not "did not ask and showed no effect".
    """
    if response.outcome not in (Outcome.COMPLETE, Outcome.TOOL_ERROR):
        return None
    found = values.fields(response)
    for key in _VERDICT_KEYS:
        # `in` first: most replies hold none of these keys (every reply the verdict reads passes here).
        if key in found and isinstance(value := found[key], str) and _ASKING_WORD.match(value):
            return f"{key}: {value}"
    for key, value in found.items():
        if value is True and _ASKING_FLAG.match(key):
            return f"{key}: true"
    return None


def from_response(
    response: Response,
    tool: ToolInfo,
    tools: Sequence[ToolInfo],
    sent: Mapping[str, Any] | None = None,
) -> Mechanism | None:
    """What the first call's result says about how the tool confirms; None: nothing known.

    A payload that asks chooses its driver by its own fields: a token field is
    a token flow (sent back in the argument of the same name when the tool has
    one), an id is a pending action, a field named like one of the tool's own
    arguments is a token for it, and a flag argument is a flag flow. So is a
    switch the call left at its default that the reply names with its other
    value (`named_switch`); `sent`: the call's arguments, when known.
    """
    if asks(response):
        return Mrtr(tool.name)
    if response.outcome not in (Outcome.COMPLETE, Outcome.TOOL_ERROR):
        return None
    found = values.fields(response)
    staged = values.find(response, None, ID_FIELD)
    status = str(found.get("status") or found.get("state") or "")
    if (staged is not None and not _DONE.match(status)) or WAITING.match(status):
        # A status that says it waits names its id however it calls it (`draft_id`).
        named = next((k for k, v in found.items() if _ANY_ID.search(k) and _usable(v)), None)
        # Or the field named for the status itself: `{"staged": "n-20261206-1a2b", "status": "staged"}`.
        named = named or next(
            (k for k, v in found.items() if k.lower() == status.strip().lower() and _usable(v)), None
        )
        if staged is None and named is None and (echoed := _echoed_subject(found, tool, tools)) is not None:
            return _pending(tool, tools, echoed, found, subject=echoed)
        return _pending(tool, tools, staged[0] if staged else named, found)
    if (challenge := _echoed_challenge(response, tool)) is not None:
        return challenge
    if (token := values.find(response, None, TOKEN_FIELD)) is not None:
        return Token(tool.name, into=_into(tool, token[0]), token_from=token[0])
    if (switch := named_switch(response, tool, sent)) is not None:
        return Flag(tool.name, arg=switch[0], value=switch[1], source=NAMED_SWITCH)
    flag = approval_argument(tool)
    if flag is not None and flag in response.text:
        return Flag(tool.name, arg=flag)
    if asking_payload(response) is None:
        return None
    # An optional argument the first call left out, that the payload fills: the way back in.
    required = set((tool.input_schema or {}).get("required") or ())
    optional = {k for k in _props(tool) if k not in required}
    echoed = next((k for k, v in found.items() if k in optional and _tokenish(v)), None)
    if echoed is not None:
        return Token(tool.name, into=echoed, token_from=echoed)
    named = next((k for k, v in found.items() if _ANY_ID.search(k) and _usable(v)), None)
    if named is not None:
        return _pending(tool, tools, named, found)
    if flag is not None:
        return Flag(tool.name, arg=flag)
    return None


# A flag flow's `source` when a reply named its switch (`named_switch`), not the schema's approval argument.
NAMED_SWITCH = "named in the reply"


# One of the tool's own switches named with a value, as a reply spells it: `dry_run=false`, `"dry_run": false`,
# `confirm: True`, `set confirm to true`, `dry_run set to false` (a quote or a JSON escape may close the name).
_NAMED_AS = r"""\\?["'`]?(?:\s*[:=]\s*|\s+(?:set\s+)?to\s+)\\?["'`]?"""


@lru_cache(maxsize=256)
def _naming(name: str, values: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(v) for v in sorted(values, key=len, reverse=True))
    return re.compile(rf"(?<![\w]){re.escape(name)}{_NAMED_AS}({alternatives})(?![\w])", re.I)


def _switch_values(prop: Any) -> dict[str, Any]:
    """The values a switch takes, by how a reply writes them: a boolean's two, an enum's own; {} for others."""
    if not isinstance(prop, Mapping):
        return {}
    if choices(prop):
        return {
            str(v).lower(): v for v in choices(prop) if isinstance(v, str | int) and not isinstance(v, bool)
        }
    kinds = [prop.get("type"), *(x.get("type") for x in prop.get("anyOf", ()) if isinstance(x, Mapping))]
    return {"true": True, "false": False} if "boolean" in kinds else {}


def named_switch(
    response: Response, tool: ToolInfo, sent: Mapping[str, Any] | None = None, *, strict: bool = True
) -> tuple[str, Any] | None:
    """A boolean or enum argument of the tool's schema that the reply names with another value, and that value.

    finamatik-ops-mcp's `create_order(..., dry_run=True)` answers a call that left `dry_run` alone with
    a preview and "call again with dry_run=false to place the order": a flag flow whose flag is
    `dry_run: false`. Only an argument the schema declares, with a value it allows, other than the one
    the call gave it: never one the reply names and the tool does not take. `strict` (what zero
    configuration drives): the call left it at the default the schema declares, a switch named for a
    preview is only turned off and one named for an approval only on, and a refusal counts only for
    those two (`overwrite=true` in a refusal is an option, not the person's yes). Not strict (what a
    failed approve control advises): any such argument named with a value the call did not send.
    """
    said = response.text[:4096]
    refused = replies.said(response) is Said.REFUSED
    found: list[tuple[int, str, Any]] = []
    for name, prop in _props(tool).items():
        allowed = _switch_values(prop)
        if not allowed or not _as_a_word(name).search(said):
            continue
        preview, approval = PREVIEW_ARG.match(name) is not None, FLAG_ARG.match(name) is not None
        has_default = isinstance(prop, Mapping) and "default" in prop
        if sent is not None and name in sent:
            if strict:
                continue
            given: Any = sent[name]
        elif has_default:
            given = prop["default"]
        elif strict:
            continue
        else:
            given = None
        if strict and refused and not (preview or approval):
            continue
        for match in _naming(str(name), tuple(allowed)).finditer(said):
            value = allowed[match.group(1).lower()]
            if value == given and type(value) is type(given):
                continue
            if strict and ((preview and value is not False) or (approval and value is not True)):
                continue
            found.append((match.start(), str(name), value))
            break
    return min(found, key=lambda f: f[0])[1:] if found else None


def switch_advice(response: Response, tool: ToolInfo, sent: Mapping[str, Any] | None = None) -> str | None:
    """What to configure when a reply that did not ask names a switch of the tool's with another value."""
    named = named_switch(response, tool, sent, strict=False)
    if named is None:
        return None
    arg, value = named
    shown = json.dumps(value) if isinstance(value, bool) else str(value)
    return (
        f"the reply names {arg}={shown}, an argument of the tool's: if setting it is how the action is "
        f"confirmed, say so in the profile (confirmation: {{kind: flag, flag: {{arg: {arg}, value: {shown}}}}})"
    )


# A challenge the confirming call must carry back: echoed in an argument of its name, or signed.
CHALLENGE_FIELD = re.compile(r"^(challenge|challenge_?(id|code|nonce))$", re.I)
_SIGNED_ARG = re.compile(r"signature|signed|hmac|(^|_)sig$", re.I)
# A challenge the server signed itself: a body, a dot, a MAC (`flush:drip:9f3a.4be1...`, a JWT's last part).
_SEALED = re.compile(r"^[^\s.]+(\.[^\s.]+)*\.[A-Za-z0-9_=-]{16,}$")


def _echoed_challenge(response: Response, tool: ToolInfo) -> Token | None:
    """A `challenge` in the result that an argument of the tool takes back as it is: a token flow."""
    found = values.find(response, None, CHALLENGE_FIELD)
    if found is None:
        return None
    field = found[0].rsplit(".", 1)[-1]
    wanted = {field.lower(), f"{field.lower()}_response", "challenge_response", "echo"}
    back = next((k for k in _props(tool) if k.lower() in wanted and not _SIGNED_ARG.search(k)), None)
    if back is None and _SEALED.match(found[1]):
        # It carries its own signature (the server keeps no state but its key): it goes back whole, in
        # the argument that takes a signature. A bare nonce there is for a person's key (signed_challenge).
        back = next((k for k in _props(tool) if _SIGNED_ARG.search(k)), None)
    return Token(tool.name, into=back, token_from=found[0]) if back is not None else None


def signed_challenge(response: Response, tool: ToolInfo) -> str | None:
    """A challenge that must come back signed (the tool takes a signature): what to configure, in one line."""
    found = values.find(response, None, CHALLENGE_FIELD)
    signed = next((k for k in _props(tool) if _SIGNED_ARG.search(k)), None)
    if found is None or signed is None or _SEALED.match(found[1]):
        return None
    return (
        f"the tool answered a challenge ({found[0]!r}) that must come back signed in {signed!r}: the harness "
        "holds no key; say how the person signs it with confirmation: {kind: token, token: {from: "
        f"{found[0]}, into: {signed}}}, human: [{{sign: ...}}]}} in a profile"
    )


def _usable(value: Any) -> bool:
    """A value the harness may send back: never null, empty or a boolean."""
    return isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip() != ""


def _tokenish(value: Any) -> bool:
    """A value only a server would mint (`7f3a9c01d2`), not a word (`current`) it echoes back."""
    text = str(value) if _usable(value) else ""
    return (
        len(text) >= 8
        and not any(c.isspace() for c in text)
        and any(c.isdigit() for c in text)
        and any(c.isalpha() for c in text)
    )


def _into(tool: ToolInfo, field: str) -> str:
    """The argument a token goes back in: the tool's own argument of that name, else one named for it."""
    if field in _props(tool):
        return field
    return _typed(tool, "string", TOKEN_ARG) or field


def _pending(
    tool: ToolInfo,
    tools: Sequence[ToolInfo],
    id_from: str | None,
    found: Mapping[str, Any] | None = None,
    *,
    subject: str | None = None,
) -> Pending:
    """The pending flow a waiting reply stages; `subject`: the gated call's own argument it echoed as its
    only handle (host-terminal-mcp's `command`), which the approve step takes in an argument of that name.

    Nothing was staged under an id then: what the person approves is the subject itself, and the
    gated call made again with it is what acts, unless a tool named for executing takes it.
    """
    approve = _id_tool(tools, APPROVE_TOOL, tool.name, found or {}, subject)
    execute = _id_tool(tools, EXECUTE_TOOL, tool.name, found or {}, subject)
    if subject is not None and execute is None:
        execute = CallTemplate(tool.name, {subject: "{id}"})
    return Pending(tool.name, id_from=id_from, approve=approve, execute=execute)


# A waiting reply's fields that echo the call's own string arguments back: `{"status": "needs_approval",
# "command": "rm victim.txt"}`. Only when an approve or execute step takes one of them by the same name.
def _echoed_subject(found: Mapping[str, Any], tool: ToolInfo, tools: Sequence[ToolInfo]) -> str | None:
    """The gated call's own argument a waiting reply echoes as its only handle, taken back by a step's
    argument of the same name (`approve_command(command, approve)`); None when no step takes one."""
    own = {k for k, v in _props(tool).items() if isinstance(v, Mapping) and _is_string(v)}
    steps = [
        t
        for t in tools
        if t.name != tool.name
        and t.read_only is not True
        and (APPROVE_TOOL.search(t.name) or EXECUTE_TOOL.search(t.name) or _SAYS_YES.search(_first(t)))
    ]
    for key, value in found.items():
        if key in own and isinstance(value, str) and _usable(value) and any(key in _props(s) for s in steps):
            return key
    return None


def _id_tool(
    tools: Sequence[ToolInfo],
    name: re.Pattern[str],
    gated: str,
    found: Mapping[str, Any],
    handle: str | None = None,
) -> CallTemplate | None:
    """Another tool named for the step that takes the pending id, called with it.

    The id goes in the argument named as the flow's own handle (`handle`: the field it is read from, or
    the subject the reply echoed), else one named or described as an id. Another argument it requires
    is carried back from the staging result's field named for it (`confirmation` from
    `confirmation_phrase_required`): filled per staged id (`Pending.staged`). The approve step says yes
    in a boolean that carries the decision (`approve_command(command, approve)`: `approve: true`).
    """
    for other in tools:
        if other.name == gated or other.read_only is True:
            continue
        if not name.search(other.name) and not (name is APPROVE_TOOL and _SAYS_YES.search(_first(other))):
            continue
        props = _props(other)
        named = handle.rsplit(".", 1)[-1] if handle else None
        arg = (named if named in props else None) or next((k for k in props if _ID_ARG.search(k)), None)
        arg = arg or next(
            (
                k
                for k, v in props.items()
                if isinstance(v, Mapping) and _ID_WORD.search(str(v.get("description", "")))
            ),
            None,
        )
        if arg is not None:
            required = (other.input_schema or {}).get("required") or ()
            carried = {
                k: f"{{{field}}}"
                for k in required
                if k != arg
                and (field := next((f for f in found if f.startswith(k) and _usable(found[f])), None))
            }
            yes = (
                {k: True for k, v in props.items() if k != arg and decides(k, v)}
                if name is APPROVE_TOOL
                else {}
            )
            return CallTemplate(other.name, {arg: "{id}", **yes, **carried})
    return None


# A tool whose description opens by saying it is called on a person's yes (`keep`: "Call keep only when
# the person has said yes to this note"): the approve step, whatever its name.
_SAYS_YES = re.compile(r"\b(said|says|say|gave|gives|give)\s+(a\s+|their\s+|the\s+)?yes\b", re.I)
# An argument described as an id ("the staged note's id"), named however (`note`).
_ID_WORD = re.compile(r"\bid\b", re.I)


_SAYS_NO = re.compile(r"\b(said|says|say|gave|gives|give)\s+(a\s+|their\s+|the\s+)?no\b", re.I)
# The approve step's twin named for a no (`reject_memory` beside `approve_memory`).
_DECLINE_TOOL = re.compile(r"reject|decline|deny|disapprove", re.I)


def agent_approver(tools: Sequence[ToolInfo], pending: Mechanism | None, gated: str) -> CallTemplate | None:
    """The server's own approve-named tool that takes a pending flow's id, where the flow names no approve call.

    The profile says a person approves elsewhere (index-memory-vault's `imv approve {id}`), yet the
    server also offers the agent `approve_memory(memory_id)`: what self-approval tries as the agent,
    on the id the attack staged (the careful one refuses: approving is the person's). It is the gate's
    own step, never a tool around the gate (ungated). None for another mechanism.
    """
    if not isinstance(pending, Pending) or pending.approve is not None:
        return None
    others = [t for t in tools if t.name not in pending.own_tools]
    return _id_tool(others, APPROVE_TOOL, gated, {}, pending.id_from)


def approved_by_the_agent(
    tools: Sequence[ToolInfo], flow: AgentFlow, gated: str
) -> tuple[AgentFlow, str | None]:
    """`flow` as the agent alone can complete it: a pending flow with the server's own approve tool
    (`agent_approver`) as its approve step, and that tool's name; else `flow` itself and None."""
    approver = agent_approver(tools, flow, gated)
    if approver is None:
        return flow, None
    assert isinstance(flow, Pending)  # agent_approver finds one for a pending flow only
    return replace(flow, approve=approver), approver.tool


def declining_tools(
    tools: Sequence[ToolInfo], pending: Mechanism | None, gated: str | None = None
) -> list[str]:
    """Tools that take a pending flow's id on a person's no (`drop`: "Call drop only when the person has
    said no to this note"): the flow's decline step, no action of its own (none for another mechanism).

    Where the flow names no approve call, the server's own approve tool (`agent_approver`) stands for it:
    its twin named for a no (`reject_memory`) is the decline step beside it.
    """
    if not isinstance(pending, Pending):
        return []
    approve = pending.approve or agent_approver(tools, pending, gated or pending.tool)
    if approve is None:
        return []
    ids = {k for k, v in approve.args.items() if v == "{id}"}
    return [
        t.name
        for t in tools
        if t.name not in (pending.tool, gated, approve.tool, *pending.own_tools)
        and t.read_only is not True
        and (_SAYS_NO.search(_first(t)) or _DECLINE_TOOL.search(t.name))
        and ids & set(_props(t))
    ]


def _first(tool: ToolInfo) -> str:
    """The first sentence of a tool's description."""
    return re.split(r"(?<=[.;!?])\s", (tool.description or "").strip(), maxsplit=1)[0]


def policy_tools(tools: Sequence[ToolInfo], stated: Sequence[str] | None = None) -> list[ToolInfo]:
    """Agent-callable tools that change the gate's rules: the profile's (an empty list: none), or by schema.

    By schema only: a tool not declared read-only whose input takes a rule the
    gate checks (`policy_arguments`). Words in a description never make one (an
    emergency stop "overrides every rule of motion" and sets none of them).
    """
    if stated is not None:
        return [t for t in tools if t.name in stated]
    return [
        t for t in tools if t.read_only is not True and not READING_TOOL.match(t.name) and policy_arguments(t)
    ]


# A tool named for reading (a listing's `limit` is how many rows come back, not a rule), undeclared
# read-only as many are: `list_requests(limit)`, `getLimits`.
READING_TOOL = re.compile(
    r"^(list|get|search|find|query|show|read|describe|fetch|count|view)(_|[A-Z]|$)", re.I
)
# A page's size beside where the page starts: the `limit` of a listing.
PAGING_ARG = re.compile(r"^(offset|cursor|page|page_?token|after|before|skip|start)$", re.I)


# An argument that sets a rule the gate checks: a limit, a threshold, an allow-list, a category, a frame.
POLICY_ARG = re.compile(
    r"(^|_)(limits?|max|maximum|threshold|cap|ceiling|budget|quota|frame|allow\w*|white_?list|"
    r"block_?list|deny_?list|black_?list|categor(y|ies)|auto_?approve\w*)(_|$)|"
    r"^max[A-Z]|[a-z](Limit|Threshold|Allowlist|Categories)$",
    re.I,
)
# A switch of the gate itself: `require_confirmation`, `auto_approve`, `skip_approval`.
GATE_SWITCH = re.compile(
    r"^(requires?|needs?|skip|bypass)_?(confirm\w*|approval\w*)$|^(confirm\w*|approval)_?(required|needed)$",
    re.I,
)
# An argument that names who the rules are for: kept as the action's own, never a wildcard.
IDENTITY_ARG = re.compile(
    r"^(agent|principal|user|owner|account|tenant|caller|client|operator|actor|member|customer|who)"
    r"(_?(id|name|key))?$|[a-z](Agent|Principal|User|Owner|Account|Operator)(Id)?$",
    re.I,
)


# A value of a closed set that switches the gate off, whatever its argument is called: host-terminal-mcp's
# `set_permission_mode(mode: allowlist | ask | allow_all)`. Words a mode of anything else may hold
# (`off`, `none`, `auto`, `all`) are no sign alone: only a tool already taken for a policy tool tries them.
LOOSENING_VALUE = re.compile(
    r"^(allow|approve|accept|trust)[_ -]?(all|any|everything)$|bypass|yolo|auto[_ -]?approv|unrestricted|"
    r"permissive|dangerous|full[_ -]?access|(never|no|dont|skip)[_ -]?(ask|confirm|prompt|approv|permission)",
    re.I,
)


def choices(prop: Any) -> list[Any]:
    """The closed set of values an argument takes (`enum`, inside a nullable `anyOf` too); [] for any other."""
    if not isinstance(prop, Mapping):
        return []
    options = [o for o in prop.get("anyOf") or () if isinstance(o, Mapping) and o.get("type") != "null"]
    found = (options[0] if options else prop).get("enum")
    return list(found) if isinstance(found, list) else []


def policy_arguments(tool: ToolInfo) -> list[str]:
    """The arguments of `tool` that set the gate's limits, thresholds, allow-lists or categories, or switch
    it (a boolean named for it, or a closed set with a value that turns it off: `allow_all`)."""
    found = []
    paged = any(PAGING_ARG.match(str(name)) for name in _props(tool))
    for name, prop in _props(tool).items():
        if paged and str(name).lower() in ("limit", "max", "max_results", "page_size", "pagesize"):
            continue
        types = prop.get("type") if isinstance(prop, Mapping) else None
        if IDENTITY_ARG.search(name):
            continue
        if (
            POLICY_ARG.search(name)
            or (types == "boolean" and GATE_SWITCH.match(name))
            or any(isinstance(v, str) and LOOSENING_VALUE.search(v) for v in choices(prop))
        ):
            found.append(str(name))
    return found


def offered(response: Response, tool: ToolInfo, tools: Sequence[ToolInfo], current: str) -> Mechanism | None:
    """Another way to confirm that a reply offers (a dry-run token, a pending id), or None.

    "Declined; call with dry_run, then confirm=<token>" is a second gate beside the
    one audited (`current`, its kind): the agent can take it without the person.
    """
    if replies.said(response) not in (Said.REFUSED, Said.ACTED):
        return None
    found = from_response(response, tool, tools) or _named_in(response, tool)
    if found is None or found.kind in ("mrtr", current):
        return None
    return found


@lru_cache(maxsize=256)
def _as_a_word(name: str) -> re.Pattern[str]:
    """`name` standing as a word of its own: an argument's name, compiled once (every refusal is read for them)."""
    return re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")


def _named_in(response: Response, tool: ToolInfo) -> Token | None:
    """A token flow the reply spells out with the tool's own arguments: a preview flag and a token argument."""
    props = _props(tool)
    said = response.text[:4096]
    named = {k for k in props if _as_a_word(k).search(said)}
    preview = _typed(tool, "boolean", PREVIEW_ARG)
    required = set((tool.input_schema or {}).get("required") or ())
    strings = [
        k
        for k in sorted(named)
        if k != preview and k not in required and isinstance(props[k], Mapping) and _is_string(props[k])
    ]
    into = strings[0] if strings else None
    if preview is not None and preview in named and into is not None:
        return Token(tool.name, into=into, preview_args={preview: True}, source="offered")
    if into is not None and TOKEN_ARG.search(into):
        return Token(tool.name, into=into, source="offered")
    return None


def _is_string(prop: Mapping[str, Any]) -> bool:
    kinds = [prop.get("type"), *(x.get("type") for x in prop.get("anyOf", ()) if isinstance(x, Mapping))]
    return "string" in kinds


# An argument that names who approves, by its name alone: `approver`, `signer`, `reviewed_by`, `authorizerId`.
APPROVER_ARG = re.compile(
    r"^(approver|approved_?by|signer|signed_?by|signatory|reviewer|reviewed_?by|authori[sz]er|"
    r"authori[sz]ed_?by|confirmer|confirmed_?by)(_?(id|name|key|address|pubkey))?$|"
    r"[a-z](Approver|Signer|Reviewer|Authori[sz]er)(Id|Name|Key|Address)?$",
    re.I,
)
# An identity that approves only where the words say so: `owner` of a tool that asks the owner to sign.
_OWNERISH_ARG = re.compile(r"^(owner|principal|wallet)(_?(id|name|key|address|pubkey))?$", re.I)
_APPROVES = re.compile(r"\b(approv\w*|sign(s|ed|er|ing|ature)?|authori[sz]\w*|review\w*)\b", re.I)


def approver_argument(tool: ToolInfo, stated: str | None = None) -> str | None:
    """The argument of `tool` that names who approves (the profile's, else by name), or None.

    By name: an approver, signer, reviewer or authorizer; or an owner (principal,
    wallet) when its own description, or the tool's, speaks of approving or signing.
    """
    props = _props(tool)
    if stated is not None:
        return stated if stated in props else None
    named = next((str(k) for k in props if APPROVER_ARG.search(k)), None)
    if named is not None:
        return named
    for name, prop in props.items():
        if not _OWNERISH_ARG.match(name):
            continue
        said = f"{prop.get('title', '')} {prop.get('description', '')}" if isinstance(prop, Mapping) else ""
        if _APPROVES.search(said) or _APPROVES.search(tool.description or ""):
            return str(name)
    return None
