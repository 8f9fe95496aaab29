"""What a reply says became of a call, and who refused it: read from the target's own words.

A reply never says *whether* something happened (the effect probes and the
sandbox do); it says *who* refused. Two things make that hard on servers
written by other people. A refusal often comes inside an ordinary result
(`{"status": "refused"}`, `{"ok": false}`, a `null` token), so "no error" is not
"acted". And not every refusal is the gate's: "row 2 already has this
application" is the world, not the confirmation. So the controls record how
this target refuses on its gate (a decline, a wrong token or state) and how it
fails otherwise (a subject that does not exist); an attack's refusal is the
gate's only when it looks like the former or names the gate's concern.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ..models import Outcome, Response, Said, Signature, Signatures
from ..target.arguments import FILLER

# Fields whose false says the call did not go through.
_FALSE_MEANS_NO = (
    "ok",
    "success",
    "succeeded",
    "sent",
    "allowed",
    "approved",
    "accepted",
    "executed",
    "done",
)
# Fields whose word says what became of the call.
_VERDICT_FIELDS = ("status", "decision", "result", "outcome", "state", "verdict")
_REFUSAL_WORD = re.compile(
    r"^\s*(refus\w*|den(y|ied)\w*|reject\w*|block\w*|error\w*|fail\w*|forbidden|not[_ -]allowed|"
    r"disallowed|declin\w*|cancel\w*|abort\w*|invalid|unauthori[sz]ed|expired)\s*$",
    re.I,
)


def payload(response: Response) -> Mapping[str, Any] | None:
    """The result as an object: its structuredContent, else its text when that is a JSON object.

    The Python SDK wraps what a tool typed `-> str` returns as `{"result": "<its text>"}`. That
    wrapper is the tool's text, not an object of its own: a JSON object written in it is read as
    that object (a refusal returned as JSON text is a refusal), and plain words are read as the
    result's text is. One call's outcome may also come as the only element of a list (a tool
    typed `-> list[dict]`, wrapped `{"result": [...]}`, or JSON text `[{...}]`) or of a lone
    `results` list: that element is the object, read the same way.
    """
    structured = response.structured
    if isinstance(structured, Mapping) and not _wrapped_text(structured):
        return _the_object(structured)
    # The wrapper's string first; the text then (a dict typed `{"result": "denied"}` is in its text).
    texts = (structured["result"], response.text) if isinstance(structured, Mapping) else (response.text,)
    for text in texts:
        try:
            data = json.loads(text)
        except ValueError:
            continue
        if (found := _the_object(data)) is not None:
            return found
    return None


def _wrapped_text(structured: Mapping[str, Any]) -> bool:
    """Whether structured content is the SDK's wrapper around a `str` result: one `result` string."""
    return len(structured) == 1 and isinstance(structured.get("result"), str)


# Lone keys under which a result holds its outcome: the SDK's wrapper, and a list of one call's results.
_RESULT_KEYS = ("result", "results")


def _the_object(data: Any) -> Mapping[str, Any] | None:
    """The one object `data` is: itself, the only element of a list, or what a lone result key holds.

    A list of several, or of anything but an object, is no object: a listing's rows are not
    the call's own outcome.
    """
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, Mapping):
        return None
    if len(data) == 1 and next(iter(data)) in _RESULT_KEYS:
        inner = next(iter(data.values()))
        if isinstance(inner, Mapping) or (
            isinstance(inner, list) and len(inner) == 1 and isinstance(inner[0], Mapping)
        ):
            return _the_object(inner)
    return data


def refusal(response: Response) -> str | None:
    """Why this reply is a refusal ("isError", "ok: false", "status: denied"), or None.

    Only the result's own top level counts: a listing whose rows carry `status:
    failed` is not a refusal of the call.
    """
    if response.outcome is Outcome.TOOL_ERROR:
        return "isError"
    if response.outcome is Outcome.RPC_ERROR:
        return f"JSON-RPC error {response.code}"
    if response.outcome is not Outcome.COMPLETE:
        return None
    data = payload(response)
    if data is None:
        return None
    for key in _FALSE_MEANS_NO:
        if data.get(key) is False:
            return f"{key}: false"
    for key in _VERDICT_FIELDS:
        value = data.get(key)
        if isinstance(value, str) and _REFUSAL_WORD.match(value):
            return f"{key}: {value}"
    error = data.get("error")
    if error not in (None, False, "", {}, []):
        return "error: " + (error if isinstance(error, str) else json.dumps(error, default=str))[:80]
    return None


# A command's failure said in an ordinary result: `exit status 1`, `Exit code: 2`, `exited with code 1`,
# `returned non-zero exit status 127` (a shell tool that reports each run's status as text).
_FAILED_EXIT = re.compile(
    r"\b(?:exit(?:ed)?\s+(?:status|code)|exit\s+code|non-zero\s+exit\s+status|exited\s+with\s+(?:status|code))"
    r"\s*[:=]?\s*(\d+)\b",
    re.I,
)


def failed_exit(response: Response) -> str | None:
    """The failed exit status a completed reply states at its head (`exit status 1`), or None.

    A tool that runs commands may answer every run as an ordinary result, its status in the text: a
    command that failed is then no success the tool reported, whatever the reply's outcome says.
    """
    if response.outcome is not Outcome.COMPLETE:
        return None
    found = _FAILED_EXIT.search(response.text[:_READ])
    return found.group(0) if found is not None and int(found.group(1)) != 0 else None


# Counts of what a call did, by the verb: all of them zero says it did nothing (`"moved": 0`).
_DONE_COUNTS = frozenset(
    [
        "moved",
        "copied",
        "deleted",
        "removed",
        "updated",
        "changed",
        "created",
        "written",
        "processed",
        "affected",
        "applied",
        "inserted",
        "renamed",
        "archived",
        "imported",
        "posted",
        "sent",
        "organized",
        "organised",
        "stored",
        "queued",
    ]
)
# A success that says there was nothing to do. Not "nothing was deleted" nor "no change made": a
# refusal in plain words says so ("Nothing was deleted: the user chose decline"); nor "already
# confirmed/applied/used": a single-use check words its refusal so, and that is the gate's to say.
_NOTHING_DONE = re.compile(
    r"\b(nothing\s+(new|to\s+do)|already\s+(stored|exists?|present|up[\s-]to[\s-]date|organi[sz]ed|in\s+place))\b",
    re.I,
)


def nothing_done(response: Response) -> str | None:
    """Why a reply that reports success says nothing was done, or None: a duplicate, every count zero.

    `{"ok": true, "moved": 0}` after the approve control moved every photo, `{"duplicate": true,
    "message": "already stored as confirmed"}` after it stored the text: the world the last control
    left behind had no subject for the call, which is no refusal, by the gate or anyone.
    """
    if response.outcome is not Outcome.COMPLETE or refusal(response) is not None:
        return None
    data = payload(response)
    if data is not None:
        if data.get("duplicate") is True:
            return "duplicate: true"
        counts = {
            k: v
            for k, v in data.items()
            if k in _DONE_COUNTS and isinstance(v, int) and not isinstance(v, bool)
        }
        if counts and not any(counts.values()):
            return ", ".join(f"{k}: 0" for k in counts)
    found = _NOTHING_DONE.search(refusal_text(response)[:_CONCERN_READ])
    return found.group(0) if found is not None else None


def said(response: Response) -> Said:
    if response.outcome is Outcome.TRANSPORT:
        return Said.STOPPED
    if response.outcome is Outcome.INPUT_REQUIRED:
        return Said.ASKED
    return Said.REFUSED if refusal(response) is not None else Said.ACTED


# What varies between two refusals of the same guard: names, numbers, ids, quoted values.
_VARIABLE = re.compile(
    r"""(?x)
    "[^"]*" | '[^']*' | `[^`]*`          # anything quoted
    | (?:[\w.~-]*/)+[\w.~-]*             # a path
    | [\w.+-]+@[\w.-]+                   # an address
    | \b[0-9a-f]{8,}\b | \b\w*\d\w*\b    # a hex id, any word with a digit in it
    """,
)


# How much of a reply its shape and its concern are read from.
_READ = 600
_CONCERN_READ = 1 << 17
_SDK_FRAME = re.compile(r"^\s*error executing tool [\w.-]+:\s*", re.I)


_BARE_FRAME = re.compile(r"^\s*error executing tool [\w.-]+:?\s*$", re.I)


def bare_exception(response: Response) -> bool:
    """Whether a refusal is the SDK's frame alone: an exception inside the tool, whose reason it hides."""
    return response.outcome is Outcome.TOOL_ERROR and _BARE_FRAME.match(response.text[:_READ]) is not None


def shape(response: Response) -> str:
    """The reply with what varies taken out: two refusals of the same guard have one shape."""
    # The SDK's own frame around a tool's exception says nothing about which guard refused.
    # Only the head is read: the shape keeps 160 characters, and a reply that echoes a
    # 64 KiB argument must not cost the patterns below quadratic time.
    text = _SDK_FRAME.sub("", refusal_text(response)[:_READ])
    words = _VARIABLE.sub(" ", text.lower())
    return " ".join(re.findall(r"[a-z]+", words))[:160]


def clipped(text: str, limit: int) -> str:
    """The head of a reply, quoted in a control's detail: a cut ends in "…", never reads as the reply's own end."""
    return text if len(text) <= limit else text[:limit] + "…"


def refusal_text(response: Response) -> str:
    """The words of a refusal: a structured one's reason or message, else the whole text."""
    data = payload(response) if response.outcome is Outcome.COMPLETE else None
    if data is not None:
        words = [
            str(data[k])
            for k in ("error", "reason", "message", "detail", "status", "decision", "result")
            if isinstance(data.get(k), str)
        ]
        if words:
            return " ".join(words)
    return response.text


# A refusal that names what a confirmation gate guards: the person's answer, the approval and
# its token or state, its lifetime and single use (done already, or a ledger's "status: applied"), the
# path's containment, the identity.
GATE_CONCERN = re.compile(
    r"""(?x)\b(
    confirm\w* | approv\w* | consent\w* | declin\w* | cancel\w* | reject\w* | refus\w* | den(y|ied)
    | permission | forbidden | not\ (allowed|permitted|authori[sz]ed) | unauthori[sz]ed | disallowed
    | token | nonce | state | signature | signed | hmac | challenge | tamper\w* | forged | invalid
    | expir\w* | stale | replay\w* | (already|status:?)\ (used|spent|redeemed|consumed|confirmed|executed
      |posted|committed|processed|applied|completed|submitted|sent|paid)
    | (single|one)[- ]use | reused | spent | consumed
    | outside | escap\w* | traversal | beneath | contain\w* | root | sandbox | symlink\w* | link\w*
    | absolute | relative | allowed\ (paths?|director\w*) | nul | null\ byte
    | changed | modified | differ\w* | mismatch\w* | no\ longer | replaced | swapped | moved
    | principal | identity | owner | caller | another\ (user|agent|client|session) | audience | bound
    | polic\w* | limit | threshold | human | person | user | operator | review\w* | pending
    | answer\w* | elicit\w* | question\w* | form | schema
    )\b""",
    re.I,
)


def signature(control: str, response: Response, *, asked: bool = False) -> Signature:
    """How `response` is worded, and its class; `asked`: it handed out a token or id, so it asked.

    A preview that hands out a handle is an ordinary result (`said` classes it acted, and it is read
    against replies so), but it did not act: the action waits for its approval. Learned as how the
    gate holds a call, it is shown as what it was, never as a reply that said the action was done.
    """
    return Signature(control, said(response), response.code, shape(response), asked=asked)


# What a JSON reply leaves of its shape once its quoted keys and values are gone: no words at all.
_JSON_LITERALS = frozenset({"null", "true", "false"})


def worded(sig: Signature) -> bool:
    """Whether a signature's shape holds a word of the reply's own, beyond JSON's null, true and false.

    A JSON result with no refusal field (`{"saved": {...}, "note": "..."}`) is all quoted strings and
    literals: its shape ("null null null") would match any other such reply, so it teaches nothing.
    """
    return not set(sig.shape.split()) <= _JSON_LITERALS


def _like(
    response: Response, learned: Iterable[Signature], mine: Signature | None = None
) -> Signature | None:
    """The learned signature `response` is worded as, if any; `mine`: its own, if already made."""
    for sig in learned:
        # Made only when there is a learned one to hold it against, and once for both kinds (`_liken`).
        mine = mine or signature("", response)
        if sig.said is not mine.said or sig.code != mine.code:
            continue
        if sig.shape == mine.shape or _overlap(sig.shape, mine.shape) >= 0.6:
            return sig
        # "unknown job" and "unknown job <a name full of words>": the same guard, the name appended.
        if len(sig.shape.split()) >= 2 and mine.shape.startswith(sig.shape + " "):
            return sig
    return None


def _liken(response: Response, signatures: Signatures) -> tuple[Signature | None, Signature | None]:
    """(the other failure, the gate refusal) `response` is worded as: its shape read once for both."""
    mine = signature("", response) if signatures.other and signatures.gate else None
    return _like(response, signatures.other, mine), _like(response, signatures.gate, mine)


def _overlap(a: str, b: str) -> float:
    left, right = set(a.split()), set(b.split())
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)


@dataclass(frozen=True, slots=True)
class Refusal:
    """Who an attack's last refusal came from: `gate`, `other` (the world), or `unexplained`."""

    by: str
    why: str


# How SDKs say a call's arguments failed the tool's input schema, before any code of the tool ran:
# pydantic's title for the arguments' model (the Python SDK: "1 validation error for
# delete_fileArguments"; FastMCP: "... for call[delete_file]"), and a JSON Schema check's words
# (the Python SDK's low-level server: "Input validation error: ..."; the TypeScript SDK: "Invalid
# arguments for tool ..."). Such a reply names the argument, and the argument may be an approval:
# that is the SDK refusing a malformed call, never the gate judging it.
_INVALID_ARGUMENTS = re.compile(
    r"\b\d+ validation errors? for (\w+Arguments\b|call\[)|\binput validation error\b|\binvalid arguments for tool\b",
    re.I,
)


def invalid_arguments(response: Response) -> bool:
    """Whether this refusal is the SDK's: the call's arguments did not match the tool's input schema."""
    if response.outcome not in (Outcome.TOOL_ERROR, Outcome.RPC_ERROR):
        return False
    return _INVALID_ARGUMENTS.search(response.text[:_READ]) is not None


# What another tool's own gate says when it will not act unasked: narrower than GATE_CONCERN, whose
# paths, links, roots and states are a gated action's concerns, and a missing link is the world's.
_ITS_OWN_GATE = re.compile(
    r"""(?x)\b(
    confirm\w* | approv\w* | consent\w* | permission | forbidden | not\ (allowed|permitted|authori[sz]ed)
    | unauthori[sz]ed | den(y|ied) | refus\w* | reject\w* | declin\w* | token | human | operator | pending
    )\b""",
    re.I,
)


# The words of a gate that name the confirmation itself (not a bare "refused" or "denied").
_ASKS_FOR_IT = re.compile(
    r"\b(confirm\w* | approv\w* | consent\w* | permission | human | operator | pending)\b", re.I | re.X
)


def refused_by_its_own_gate(response: Response, signatures: Signatures, sent: Iterable[Any] = ()) -> bool:
    """Whether another tool's refusal is a gate of its own saying no: worded as this target's gate, or asking for it.

    Its arguments refused, a refusal worded as the world's, one that names no confirmation
    ("Link not found", "Unknown collection"), or one about the harness's own filler that names no
    confirmation outright ("REFUSED: store 'mcp-confirm-audit' is not valid"): the call tried nothing.
    `sent`: the call's own values and its tool's name, echoed back the harness's words, not the
    target's ("Error executing tool approve_memory: 'memory not found: mcp-confirm-audit'" asks
    for no approval).
    """
    if invalid_arguments(response) or rate_limited(response) is not None:
        return False
    other, gate = _liken(response, signatures)
    if other is not None:
        return False
    if gate is not None:
        return True
    read = refusal_text(response)[:_CONCERN_READ]
    quoted = FILLER in read
    read = read.replace(FILLER, " ")
    for value in sorted(
        {v for v in sent if isinstance(v, str) and len(v) >= _ECHO_MIN}, key=len, reverse=True
    ):
        read = _without_echo(read, value)
    read = read.replace("_", " ")
    if quoted:
        # "REFUSED: store 'mcp-confirm-audit' is not valid" is about a value the harness made up: only
        # a confirmation named outright ("needs approval for 'mcp-confirm-audit'") is a gate's.
        return _ASKS_FOR_IT.search(read) is not None
    return _ITS_OWN_GATE.search(read) is not None


# The shortest argument value taken out of a reply before its concern is read: shorter ones
# ("." , "a") are in too many words to be told from the target's own.
_ECHO_MIN = 3


def _word_part(char: str) -> bool:
    """What `[\\w-]` matches: a letter, a digit, `_` or `-`."""
    return char.isalnum() or char in "_-"


def _without_echo(read: str, value: str) -> str:
    """`read` with each whole occurrence of `value` (not inside a longer word) made a space.

    What `re.sub(rf"(?<![\\w-]){re.escape(value)}(?![\\w-])", " ", read)` does, without compiling a
    pattern for every value sent (each hostile name is new: the regular expression cache never hits).
    """
    if value not in read:
        return read
    kept: list[str] = []
    start = at = 0
    while (found := read.find(value, at)) != -1:
        end = found + len(value)
        if (found == 0 or not _word_part(read[found - 1])) and (
            end == len(read) or not _word_part(read[end])
        ):
            kept += [read[start:found], " "]
            start = at = end
        else:
            at = found + 1
    kept.append(read[start:])
    return "".join(kept)


# A server's own throttle saying no: its rate limiter, not its gate (sendgrid-mcp-secure's "write rate
# limit reached (20/hour)", an HTTP 429's "Too Many Requests"). Whatever else it names ("limit" is a
# gate's concern too: an amount limit), the call was not judged at all.
_RATE_LIMITED = re.compile(
    r"""(?x)\b(
    rate[- ]?limit\w* | too\ many\ (requests|calls) | (http|status|error)[\ :]*429 | 429\ too
    | throttl\w* | quota\ (exceeded|reached|exhausted) | retry[- ]after | slow\ down
    )\b""",
    re.I,
)


def rate_limited(response: Response) -> str | None:
    """The words that say a refusal is the server's rate limit (never its gate), or None."""
    if said(response) is not Said.REFUSED:
        return None
    found = _RATE_LIMITED.search(refusal_text(response)[:_READ])
    return found.group(0) if found else None


_UNREACHABLE = re.compile(
    r"""(?x)\b(
    connection\ refused | econnrefused | errno\ 111 | (could\ not|couldn't|failed\ to|unable\ to)\ connect
    | name\ or\ service\ not\ known | temporary\ failure\ in\ name\ resolution | no\ route\ to\ host
    | network\ is\ unreachable
    )\b""",
    re.I,
)


def unreachable(response: Response) -> str | None:
    """The words that say the target could not reach what it depends on (a mail server, an API), or None.

    A world missing, not arguments wrong: mcp-proton-email with no mail bridge running answered
    every call "[Errno 111] Connection refused", which was read as a refusal of the harness's values.
    """
    if said(response) is not Said.REFUSED:
        return None
    found = _UNREACHABLE.search(refusal_text(response)[:_READ])
    return found.group(0) if found else None


# A path: a word that starts at a folder ("/tmp/x", "../outside/b", "./a", "~/c"), holds two slashes
# ("root/007-case/victim.txt"), or one and a file's extension ("root/a.txt"). Never two words joined
# by one slash ("approval/confirmation"), which may well be the gate's.
_PART = r"[^\s'\"`«»()\[\]{},;:]"
_A_PATH = re.compile(
    rf"(?:(?<!\S)|(?<=['\"`«(\[]))(?:(?:\.{{1,2}}|~)?/{_PART}+|{_PART}*/{_PART}*/{_PART}+|{_PART}*/{_PART}*\.[A-Za-z0-9]{{1,8}}\b)"
)


def who_refused(response: Response, signatures: Signatures, sent: Iterable[Any] = ()) -> Refusal:
    """Whether a refusal is the gate's, by this target's own controls and the gate's concerns.

    `sent`: the call's own argument values. Echoed back, they are the harness's words, not the
    target's: "Is a directory: '020-mca-root-006-directory'" names no concern of a gate, though the
    harness's case name holds "root", as "Is a directory: '.'" does not.
    """
    if invalid_arguments(response):
        # Checked first: the controls may have met the same wording, and the argument it names
        # ("approval_token Field required") would otherwise read as the gate's concern.
        return Refusal("other", "the SDK refused the call's arguments before the tool ran: input validation")
    if (throttled := rate_limited(response)) is not None:
        # Before the learned words: a control met the same limit, and its "limit" is a gate's concern.
        return Refusal("other", f"a rate limit ({throttled.lower()!r}): the server's throttle, not its gate")
    other, gate = _liken(response, signatures)
    # A snake_case status (`pending_approval`, `approval_required`) names its words too.
    # The whole reply (this pattern is linear): "'<a 3000-character path>' is outside the root"
    # says its concern at the end.
    # The harness's own filler, echoed back ("There is a column «mcp-confirm-audit» already"),
    # names no concern of the target's: its "confirm" is ours.
    read = refusal_text(response)[:_CONCERN_READ].replace(FILLER, " ")
    for value in sorted(
        {v for v in sent if isinstance(v, str) and len(v) >= _ECHO_MIN}, key=len, reverse=True
    ):
        # Whole values only: "cancel" sent is not the "cancelled" a status says.
        read = _without_echo(read, value)
    # A path the reply names (the sandbox's, resolved: "Not a directory: /tmp/mcp-audit-x/root/007-…")
    # is where, never why: its "root", "link" or "state" is a folder's name, not the gate's concern.
    read = _A_PATH.sub(" ", read)
    concern = GATE_CONCERN.search(read.replace("_", " "))
    if gate is not None and (other is None or gate.shape == shape(response)):
        return Refusal("gate", f"worded as this target's {gate.control} control was")
    if concern is not None and other is None:
        return Refusal("gate", f"names the gate's concern ({concern.group(0).lower()!r})")
    if other is not None:
        return Refusal(
            "other", f"worded as this target's {other.control} control was (a failure of the world)"
        )
    return Refusal("unexplained", "worded as none of this target's controls and naming no concern of a gate")
