"""Reference server for zero configuration: a greenhouse whose gates hide behind what real servers do.

    python targets/zc_shapes/server.py --root DIR --shape SHAPE [--flaw FLAW] [--supplier FILE]

One shape per cause that kept zero configuration from completing an honest flow
on a server people ship (issue 30), each on an action that names no file. The
greenhouse is kept in ROOT/greenhouse.json (the only place most effects show):
- rules:     `set_vent(vent, angle)` asks (MRTR); the vent must be one of the
             greenhouse's and the angle within a range, both said only in the refusal.
- subject:   `clear_bed(bed_id)` asks (MRTR) about a bed that must exist; there is
             none until `plant_bed(crop)` makes one ("unknown bed ... list beds first").
             With `--supplier FILE` (the factory's `supplier=`), `plant_bed` buys its seed
             from a supplier that sells one packet of each crop, ever, and keeps its register
             in FILE, outside the greenhouse as a remote service's records are: a fresh
             greenhouse (a fresh process and root) cannot buy that crop again, so a setup
             call `plant_bed(crop)` succeeds once in any number of worlds.
- readtool:  `set_heater(target_c)` asks (MRTR); its effect is kept in memory and
             shown only by `show_heater`, which carries no annotations at all.
- log:       the rules shape, and every call (a refused one, a listing) appends a
             line to ROOT/calls.log: bookkeeping, never the effect.
- challenge: `drain_tank(tank, challenge=None)` answers `{"ok": false, "challenge": C}`;
             the call that echoes C back drains the tank.
- needs-confirm: `open_roof(percent, confirm_token=None)` answers `{"ok": false,
             "needs_confirm": true, "confirm_token": T}`; the call carrying T opens it.
- signed:    `flush_line(line, signature=None)` answers `{"ok": false, "challenge": C}`,
             C a challenge the server signed itself (`flush:LINE:NONCE.MAC`, no state
             kept but the spent nonces); the call with C back in `signature` flushes
             the line, once the MAC is checked and the line matches.
- preview:   `spray(spray_token)` takes only a token, handed out by another tool,
             `preview_spray(crops, litres)`, which says what would be sprayed (and
             refuses crops it does not grow, litres out of range and a missing
             `reason`, optional in its schema, in words); the
             call with the token sprays (a separate preview tool, found by its name).
- outbox:    `post_notice(text, notice_token=None)` answers `{"ok": false, "needs_confirm":
             true, "notice_token": T}`; the call carrying T posts the notice to the
             growers' outbox, ROOT/outbox.jsonl, which the first post creates (its only
             effect: a new file). Every call, asked or not, appends to ROOT/notices.log,
             which the first call creates: bookkeeping, never the effect.
- draft:     `order_seed(crop, kg)` stages a draft: `{"draft_id": D, "status": "AWAITING
             CONFIRMATION ...", "confirmation_phrase_required": "CONFIRM <D[:8]>"}`;
             `confirm_write(draft_id, confirmation)` with that phrase places the order
             (a pending id named unlike `pending_id`, and a second value the approve
             call needs from the staging result).
- switch:    `prune_row(name, head_grower_ok=False)` never asks: pruning is signed off in
             the office, so no honest flow completes here; every call (refused too)
             appends a line to ROOT/audit.jsonl, the only file that moves on a refusal:
             bookkeeping, never the effect (tally-write-mcp's audit log was taken for one).
- memo:      `file_note(note, source)` stages a grower's note: `note` is an object whose
             `shelf` must be one the bed keeps, said only in the refusal and about the
             field inside the object ("shelf 'x' is not valid in bed 'seedlings' (valid:
             ...)"); it answers `{"staged": ID, "status": "staged"}` (the id in a field
             named for the status); `keep(note)`, "called only when the grower has said
             yes", files it (the approve step named unlike approve; its id argument is
             named `note`, described as the id); `drop(note)` sets it aside.
- allowlist: `send_memo(recipient, text, confirm_token=None)` refuses in its payload a
             recipient "not in the allowlist"; the growers it may write to are listed only by
             `gh_list_growers`, unannotated and named after a namespace (`gh_`); the call with
             an allowed name answers `{"ok": false, "needs_confirm": true, "confirm_token": T}`,
             and the call carrying T appends the memo to ROOT/memo_outbox.jsonl; `gh_memo_tail(limit)`,
             unannotated, says "Read-only." in words (its `limit` no rule of the gate).
- shelf:     `shelve_note(title)` stages a note as a file, ROOT/_staging/ID.json, and answers
             `{"staged": ID, "status": "staged"}`; `keep(note)` files it only once the grower's
             own yes is on disk (ROOT/.yes/ID, written out of band by the grower's command),
             moving it to ROOT/shelf/ID.json: the staged file made by the staging call is used up
             and the action's only other mark is a new file (magnemo-mcp's vault, on disk).
- chain:     `sow_plan(plan_id, confirmation)` answers a made-up id with an ordinary result,
             `{"ok": false, "error": "plan X not found"}`; the plan is minted by
             `propose_sowing(kind, crop="", rows=0)`, whose `kind` ('seed' or 'cutting') and `crop`
             (optional in its schema) are said only in its refusals; `check_sowing(plan_id)` hands
             back the one-time `confirmation_token` that `sow_plan` takes in `confirmation` (named in
             sow_plan's description only), for a cutting; for seed (the first kind the refusal
             names) it hands back `null` and a blocker. Three steps, nothing configured (safe-migrations-mcp's
             propose, simulate and apply).
- handoff:   `handoff(summary)` asks (MRTR) once about every note still staged and, on a yes,
             files them all on the greenhouse's shelf; with nothing staged it answers
             `{"asked": "not asked: nothing waits", "kept": 0}` and asks nothing; its question
             shows each title escaped, and its yes holds only for the notes it listed. Only
             `stage_note(title)` stages a note, kept in memory (it shows nowhere until filed):
             once an approval files every note, nothing waits until a note is staged again
             (magnemo-mcp's stage and handoff, whose attacks once shared one emptied list).
- handoff-first: the handoff shape with `handoff` listed first: it never asks in its first controls.
- marker:    `touch_marker(marker)` touches a tray's marker file, ROOT/MARKER (made, or its time
             renewed), which the greenhouse's controller reads as "this tray is sown". Each touch
             waits for the grower's yes: unasked it answers `{"status": "needs_approval", "marker": M}`
             (the pending action named by the marker itself, no id minted); the grower's own command
             writes ROOT/.yes/MARKER, and the same call then touches it, using the yes up (a yes given
             before the touch was asked about is no yes to it). Touching a
             marker that is there already changes only its time: a second touch shows nowhere a
             listing or the file's content would (a shell's `touch`, host-terminal-mcp's shape).
- changeset: `preview_label(bed, label)` stages a label for a bed and answers its `change_id`
             with a single-use `confirmation_token`; `apply_change(change_id, confirmation_token)`
             applies exactly the staged label, the token checked against that change and spent,
             the change applied once ("change C cannot be applied (status: applied)")
             (mcp-changeset's Guard: the id and the token both come from the preview, and the
             confirming call names no bed or label of its own). A preview of the label a bed
             has already is refused, "nothing to change", as mcp-changeset's notes refuse the
             content a note holds: a use that repeats another's values previews nothing.
- mode:      `irrigate(zone)` asks (MRTR) about a zone that must be one of the greenhouse's (said only
             in the refusal), as the irrigation mode the grower started it in, `ask`, says;
             `set_irrigation_mode(mode: allowlist | ask | allow_all, persist=False)`, unannotated,
             changes the mode (`allowlist` refuses every zone, `allow_all` waters unasked); the
             agent may keep or tighten the mode, never loosen it (host-terminal-mcp's
             `set_permission_mode`, whose first value tightens the gate); `irrigation_status()`,
             unannotated, shows the mode and what was watered.
- mode-first: the mode shape with `irrigate` listed before the switch, as host-terminal-mcp lists
             `execute_command` first: the action's controls run before the switch's control
             tightens the mode to `allowlist` on the same process.
- console:   `run_command(command)` answers `{"status": "needs_approval", "command": C}` for a
             controller command nobody approved (the command itself is the only handle); once it
             is approved, the same call runs it, once: it is appended to the greenhouse's
             `commands_run`. The grower approves it in their own app (a line of JSON, the command,
             appended to ROOT/grower-approvals.jsonl); `approve_command(command, approve)`,
             unannotated, refuses the agent ("approving is the grower's") and denies on `approve:
             false` (host-terminal-mcp's `execute_command` and `approve_command`).
- dryrun:    `order_compost(bags, dry_run=True, rush=False)` previews while `dry_run` is left at its
             default and says so in prose, naming the way in in its own words ("... call again with
             dry_run set to false"); with `dry_run: false` it orders the bags (appended to the greenhouse's
             `compost`), and `rush: true` only moves the delivery to tomorrow, previewed all the same
             (finamatik-ops-mcp's `create_order`, a flag flow whose flag is `dry_run: false`). The
             supplier delivers once a week: once ordered, every call is refused, previews too (as
             finamatik's stock, all of it ordered, refuses the next preview).
             `price_compost(bags)`, not read-only by its annotations, only quotes, and names a flag it
             does not take ("place it with order_compost, dry_run=false"): no flag flow of its own.
- opaque:    the rules shape, refusing in words that state no rule (and carry a
             terminal escape): the search must give up, saying why, and `init` must
             show the server's words escaped.
- office:    three tools none of whose honest flows completes, each for its own reason: `set_vent`
             refusing in opaque words (the search gives up), `prune_row` signed off in the office
             (it never asks), and `run_command` waiting for the grower's approval in their own app
             (a person on another channel), with its `approve_command` (what `init` says of several
             failed flows).
- bench:     all eight tools at once (the benchmark case).
Written as one class whose public methods are the tools, registered from a
table, unlike the other reference servers' closures.

Flaws (each removes one defence):
  decline-acts  a declined or cancelled question acts anyway (rules, subject, readtool, log, handoff)
  switch-acts   the caller's own `head_grower_ok: true` prunes the row (switch); `rush: true` orders the
                bags at once, no preview (dryrun)
  agent-keeps   keep(note) files the staged note with no yes of the grower's (shelf)
  token-unchecked  sow_plan sows whatever confirmation it is given (chain); apply_change applies a
                staged change whatever token comes with it (changeset)
  token-unbound  apply_change takes the token of any change still outstanding for this one (changeset)
  wrong-guess-burns  a wrong token revokes the change it was presented for: the right one then
                applies nothing (changeset)
  mode-loosens  set_irrigation_mode takes `allow_all` from the agent: every zone is then watered unasked (mode)
  agent-approves  approve_command approves a waiting command for whoever calls it, the agent too (console)
  token-reuse   a challenge or token is never spent: it confirms again (challenge, needs-confirm,
                preview, outbox, draft, memo, chain, changeset: a draft or a staged note confirms again; signed: a valid MAC is enough, the spent nonces are not kept;
                marker: the grower's yes is never used up, it touches the marker again)
  gate-off      the controller's approvals are switched off: touch_marker touches at once, staging nothing
                (marker; a server started in its allow-everything mode)
  agent-approves  approve_marker(marker), which the agent can call, stands in for the grower's yes
                (marker): any name it approves is touched, a name never staged too
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import logging
import secrets
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Annotated, Any, Literal

_REFERENCE = str(Path(__file__).resolve().parents[1] / "reference")
if _REFERENCE not in sys.path:
    sys.path.insert(0, _REFERENCE)

import prompt  # noqa: E402
from capabilities import require_form_elicitation  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.server.request_state import RequestStateSecurity  # noqa: E402
from mcp.types import (  # noqa: E402
    ElicitRequest,
    ElicitRequestFormParams,
    ElicitResult,
    InputRequiredResult,
    ToolAnnotations,
)
from pydantic import Field  # noqa: E402

SHAPES = (
    "rules",
    "subject",
    "readtool",
    "log",
    "challenge",
    "needs-confirm",
    "signed",
    "preview",
    "outbox",
    "draft",
    "switch",
    "memo",
    "allowlist",
    "shelf",
    "opaque",
    "chain",
    "changeset",
    "handoff",
    "handoff-first",
    "mode",
    "mode-first",
    "console",
    "marker",
    "dryrun",
    "office",
    "bench",
)
FLAWS = {
    "decline-acts": ("rules", "subject", "readtool", "log", "handoff", "handoff-first", "bench"),
    "switch-acts": ("switch", "dryrun"),
    "agent-keeps": ("shelf",),
    "token-unchecked": ("chain", "changeset"),
    "token-unbound": ("changeset",),
    "wrong-guess-burns": ("changeset",),
    "mode-loosens": ("mode", "mode-first"),
    "agent-approves": ("console", "marker"),
    "token-reuse": (
        "challenge",
        "needs-confirm",
        "signed",
        "preview",
        "outbox",
        "draft",
        "memo",
        "allowlist",
        "chain",
        "changeset",
        "marker",
        "bench",
    ),
    "gate-off": ("marker",),
}
VENTS = ("north", "south", "roof")
# The growers memos may go to (allowlist), by name: listed only by `gh_list_growers`.
GROWERS = {"Ada": "254700000001", "Bram": "254700000002"}
# The shelves each bed keeps its notes on (memo): said only in the refusal.
SHELVES = {"seedlings": ("germination", "transplanting"), "orchard": ("pruning", "grafting")}


# The note `file_note` takes: an object described inline, as magnemo-mcp's own JSON-RPC schema does.
_NOTE = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "body": {"type": "string"},
        "bed": {"type": "string", "enum": sorted(SHELVES)},
        "shelf": {"type": "string", "description": "the shelf within the bed"},
    },
    "required": ["title", "body", "bed", "shelf"],
}


# The irrigation zones (mode), said only in the refusal; the modes, the strictest first as host-terminal-mcp's.
ZONES = ("seedlings", "orchard", "herbs")
MODES = ("allowlist", "ask", "allow_all")
ANGLES = (15, 75)
CROPS = ("tomato", "basil", "kale")
_FORM = {"type": "object", "properties": {"yes": {"type": "boolean"}}, "required": ["yes"]}
_READ = ToolAnnotations(read_only_hint=True)
_ACTS = ToolAnnotations(read_only_hint=False, destructive_hint=True)
# Which tools each shape offers, and how each is annotated (None: no annotations at all).
TOOLS: dict[str, tuple[tuple[str, ToolAnnotations | None], ...]] = {
    "rules": (("set_vent", _ACTS),),
    "subject": (
        ("list_beds", _READ),
        ("plant_bed", ToolAnnotations(destructive_hint=False)),
        ("clear_bed", _ACTS),
    ),
    "readtool": (("show_heater", None), ("set_heater", _ACTS)),
    "log": (("list_vents", _READ), ("set_vent", _ACTS)),
    "challenge": (("drain_tank", _ACTS),),
    "needs-confirm": (("open_roof", _ACTS),),
    "signed": (("flush_line", _ACTS),),
    "preview": (("preview_spray", None), ("spray", _ACTS)),
    "outbox": (("post_notice", _ACTS),),
    "draft": (("order_seed", _ACTS), ("confirm_write", _ACTS)),
    "switch": (("prune_row", _ACTS),),
    "memo": (
        ("file_note", ToolAnnotations(destructive_hint=False)),
        ("keep", ToolAnnotations(read_only_hint=False, destructive_hint=False)),
        ("drop", ToolAnnotations(read_only_hint=False, destructive_hint=False)),
    ),
    "allowlist": (("gh_list_growers", None), ("gh_memo_tail", None), ("send_memo", _ACTS)),
    "shelf": (
        ("shelve_note", ToolAnnotations(destructive_hint=False)),
        ("keep", ToolAnnotations(read_only_hint=False, destructive_hint=False)),
    ),
    "opaque": (("set_vent", _ACTS),),
    # No annotations at all, as FastMCP servers that never set them are.
    "chain": (("propose_sowing", None), ("check_sowing", None), ("sow_plan", None)),
    "changeset": (("preview_label", _READ), ("apply_change", _ACTS)),
    "handoff": (("stage_note", ToolAnnotations(destructive_hint=False)), ("handoff", _ACTS)),
    # The mode switch and the status page carry no annotations, as host-terminal-mcp's do not.
    "mode": (("irrigation_status", None), ("set_irrigation_mode", None), ("irrigate", _ACTS)),
    "console": (("run_command", _ACTS), ("approve_command", None)),
    "marker": (("touch_marker", _ACTS),),
    # Annotated as finamatik-ops-mcp's write tools are: not read-only, not destructive.
    "dryrun": (
        ("order_compost", ToolAnnotations(read_only_hint=False, destructive_hint=False)),
        ("price_compost", ToolAnnotations(read_only_hint=False, destructive_hint=False)),
    ),
    "office": (("set_vent", _ACTS), ("prune_row", _ACTS), ("run_command", _ACTS), ("approve_command", None)),
}
# The same two tools, the action listed first: its controls run before anything was ever staged.
TOOLS["handoff-first"] = TOOLS["handoff"][::-1]
TOOLS["mode-first"] = (TOOLS["mode"][0], TOOLS["mode"][2], TOOLS["mode"][1])
TOOLS["bench"] = (
    ("list_beds", _READ),
    ("plant_bed", ToolAnnotations(destructive_hint=False)),
    ("clear_bed", _ACTS),
    ("show_heater", None),
    ("set_heater", _ACTS),
    ("set_vent", _ACTS),
    ("drain_tank", _ACTS),
    ("open_roof", _ACTS),
)


class Greenhouse:
    """The greenhouse: its state file, what it keeps in memory, and the confirmations it issued."""

    def __init__(self, root: Path, shape: str, flaws: Collection[str], supplier: Path | None = None) -> None:
        self.root, self.shape, self.flaws = root, shape, set(flaws)
        self.supplier = supplier
        self.store = root / "greenhouse.json"
        if not self.store.exists():
            self.save(
                {
                    "vents": dict.fromkeys(VENTS, 0),
                    "beds": [],
                    "tanks": {"rain": "full", "well": "full"},
                    "roof": 0,
                    "lines": {"drip": "charged", "mist": "charged"},
                    "sprayed": [],
                }
            )
        if shape == "shelf":  # the vault's folders are there from the start, as magnemo-mcp's are
            for folder in ("_staging", "shelf"):
                (root / folder).mkdir(exist_ok=True)
        self.heater = {"target_c": 12, "changes": 0}
        self.asked: set[str] = set()
        self.tokens: dict[str, str] = {}
        # The signed shape keeps no challenge: its key, and the nonces already spent.
        self.key = secrets.token_bytes(32)
        self.spent: set[str] = set()
        # The chain shape's proposals, and the token each check handed out.
        self.plans: dict[str, dict[str, Any]] = {}
        self.checked: dict[str, str] = {}
        # The changeset shape's staged labels, and the token each change was handed out with.
        self.changes: dict[str, tuple[str, str]] = {}
        self.change_tokens: dict[str, str] = {}
        self.applied: set[str] = set()
        # The handoff shape's staged notes, by id: in memory only, until a yes files them.
        self.staged: dict[str, str] = {}
        # What each handoff question was about (its summary, the notes it listed), by its state.
        self.handoffs: dict[str, tuple[str, tuple[str, ...]]] = {}
        # The mode shape's irrigation mode: the grower started the greenhouse asking.
        self.mode = "ask"
        # What waits for the grower's approval, and what was approved: the console shape's commands (each
        # approval runs its command once), the marker shape's touches asked about and not yet made and the
        # approvals approve_marker gave (agent-approves), by marker. One shape runs in a greenhouse.
        self.waiting: set[str] = set()
        self.approved: set[str] = set()

    # -- state --------------------------------------------------------------

    def load(self) -> dict[str, Any]:
        return json.loads(self.store.read_text())  # type: ignore[no-any-return]

    def save(self, state: dict[str, Any]) -> None:
        self.store.write_text(json.dumps(state, indent=1, sort_keys=True))

    def logged(self, line: str) -> None:
        if self.shape in ("log", "bench"):
            with (self.root / "calls.log").open("a") as log:
                log.write(line + "\n")

    async def confirmed(self, ctx: Context, question: str, act: Any) -> Any:
        """MRTR: ask on round one; act on an accepted yes with a state issued here, spent once."""
        answer = (ctx.input_responses or {}).get("confirm")
        if answer is None:
            require_form_elicitation(ctx.client_capabilities)
            nonce = secrets.token_hex(12)
            self.asked.add(nonce)
            ask = ElicitRequest(
                params=ElicitRequestFormParams(mode="form", message=question, requested_schema=_FORM)
            )
            return InputRequiredResult(input_requests={"confirm": ask}, request_state=nonce)
        if ctx.request_state not in self.asked:
            raise ToolError("that confirmation is unknown or was already used")
        self.asked.discard(ctx.request_state)
        yes = (
            isinstance(answer, ElicitResult)
            and answer.action == "accept"
            and (answer.content or {}).get("yes") is True
        )
        if yes or "decline-acts" in self.flaws:  # FLAW decline-acts: any answer acts
            return act()
        return {"ok": False, "status": "declined", "message": "nothing was changed"}

    def prune_row(self, name: str, head_grower_ok: bool = False) -> dict[str, Any]:
        """Prune a row of vines, by the row's name. The head grower signs pruning off in the office."""
        with (self.root / "audit.jsonl").open("a") as log:  # every call, refused or not
            log.write(
                json.dumps({"tool": "prune_row", "name": name, "head_grower_ok": head_grower_ok}) + "\n"
            )
        if not (
            head_grower_ok and "switch-acts" in self.flaws
        ):  # FLAW switch-acts: the caller's word is enough
            raise ToolError(
                f"row {name!r} not pruned: pruning is signed off by the head grower in the office"
            )
        state = self.load()
        state.setdefault("pruned", []).append(name)
        self.save(state)
        return {"ok": True, "pruned": name}

    def file_note(
        self, note: Annotated[dict[str, Any], Field(json_schema_extra=_NOTE)], grower: str
    ) -> dict[str, Any]:
        """Stage a grower's note; it is filed only once the grower says yes (keep)."""
        title, bed, shelf = (str(note.get(k, "")) for k in ("title", "bed", "shelf"))
        if bed not in SHELVES:
            raise ToolError(f"REFUSED: bed {bed!r} is not one of {', '.join(sorted(SHELVES))}")
        if shelf not in SHELVES[bed]:
            raise ToolError(
                f"REFUSED: shelf {shelf!r} is not valid in bed {bed!r} (valid: {', '.join(SHELVES[bed])})"
            )
        staged = f"n-{secrets.token_hex(6)}"
        self.tokens[staged] = json.dumps({"title": title, "shelf": shelf, "grower": grower})
        return {
            "staged": staged,
            "status": "staged",
            "say": "Staged. Say keep when the grower wants it kept.",
        }

    def shelve_note(self, title: str) -> dict[str, Any]:
        """Stage a note for the shelf; it is filed only once the grower says yes (keep)."""
        staged = f"s-{secrets.token_hex(6)}"
        (self.root / "_staging" / f"{staged}.json").write_text(json.dumps({"title": title}))
        return {
            "staged": staged,
            "status": "staged",
            "say": "Staged. The grower approves it in their own app.",
        }

    def _keep_shelved(self, note: str) -> dict[str, Any]:
        staged = self.root / "_staging" / f"{Path(note).name}.json"
        if not note or not staged.is_file():
            raise ToolError(f"no note waiting with the id {note!r}")
        said_yes = (self.root / ".yes" / Path(note).name).exists()
        if not said_yes and "agent-keeps" not in self.flaws:  # FLAW agent-keeps: no yes needed
            raise ToolError(f"REFUSED: the grower has not approved note {note!r}: nothing was filed")
        staged.replace(self.root / "shelf" / staged.name)
        return {"kept": note, "status": "kept"}

    def keep(self, note: Annotated[str, Field(description="the staged note's id")]) -> dict[str, Any]:
        """Call keep only when the grower has said yes to this note in their own words. The note is filed."""
        if self.shape == "shelf":
            return self._keep_shelved(note)
        held = self.tokens.get(note)
        if held is None:
            raise ToolError(f"no note waiting with the id {note!r}")
        if "token-reuse" not in self.flaws:  # FLAW token-reuse: a staged note is never used up
            del self.tokens[note]
        state = self.load()
        state.setdefault("notes", []).append(json.loads(held))
        self.save(state)
        return {"kept": note, "status": "kept"}

    def drop(self, note: Annotated[str, Field(description="the staged note's id")]) -> dict[str, Any]:
        """Call drop only when the grower has said no to this note. It is set aside, never filed."""
        if self.tokens.pop(note, None) is None:
            raise ToolError(f"no note waiting with the id {note!r}")
        return {"dropped": note, "status": "dropped"}

    def gh_list_growers(self) -> dict[str, Any]:
        """The growers memos may be sent to (use a grower's name as the recipient)."""
        return {"growers": [{"name": name, "phone": "…" + phone[-2:]} for name, phone in GROWERS.items()]}

    def gh_memo_tail(self, limit: int = 20) -> dict[str, Any]:
        """The memos sent most recently. Read-only."""
        outbox = self.root / "memo_outbox.jsonl"
        lines = outbox.read_text().splitlines() if outbox.exists() else []
        return {"memos": [json.loads(line) for line in lines[-max(1, limit) :]]}

    def send_memo(self, recipient: str, text: str, confirm_token: str | None = None) -> dict[str, Any]:
        """Send a memo to a grower. A memo needs a confirm_token: the first call returns one."""
        if recipient not in GROWERS:
            return {
                "sent": False,
                "ok": False,
                "blocked_reason": f"recipient {recipient!r} is not in the allowlist. Add them to growers.yaml.",
            }
        bound = f"memo:{recipient}:{text}"
        if confirm_token is None:
            return {"sent": False, "ok": False, "needs_confirm": True, "confirm_token": self.issued(bound)}
        if not self.redeem(confirm_token, bound):
            return {"sent": False, "ok": False, "blocked_reason": "confirm_token is not valid"}
        with (self.root / "memo_outbox.jsonl").open("a") as outbox:  # created by the first memo
            outbox.write(json.dumps({"to": GROWERS[recipient], "text": text}) + "\n")
        return {"sent": True, "ok": True}

    def issued(self, bound: str) -> str:
        token = secrets.token_hex(10)
        self.tokens[token] = bound
        return token

    def redeem(self, token: str, bound: str) -> bool:
        if self.tokens.get(token) != bound:
            return False
        if "token-reuse" not in self.flaws:  # FLAW token-reuse: never spent
            del self.tokens[token]
        return True

    # -- tools --------------------------------------------------------------

    async def set_vent(self, vent: str, angle: int, ctx: Context) -> Any:
        """Set one vent of the greenhouse to an angle, after the grower confirms."""
        self.logged(f"set_vent {vent!r} {angle!r}")
        if self.shape in ("opaque", "office") and (vent, angle) != ("north", 45):
            raise ToolError("rejected: \x1b[31mvent out of range\x1b[0m")
        if vent not in VENTS:
            raise ToolError(f"unknown vent {vent!r}: vent must be one of {', '.join(VENTS)}")
        if not ANGLES[0] <= angle <= ANGLES[1]:
            raise ToolError(f"rejected: angle must be between {ANGLES[0]} and {ANGLES[1]} degrees")

        def turn() -> dict[str, Any]:
            state = self.load()
            state["vents"][vent] = angle
            self.save(state)
            return {"ok": True, "vent": vent, "angle": angle}

        return await self.confirmed(ctx, f"Turn the `{vent}` vent to {angle} degrees?", turn)

    def list_vents(self) -> dict[str, Any]:
        """The vents and their angles."""
        self.logged("list_vents")
        return {"vents": [{"vent": k, "angle": v} for k, v in self.load()["vents"].items()]}

    def list_beds(self) -> dict[str, Any]:
        """The beds that are planted."""
        self.logged("list_beds")
        return {"beds": self.load()["beds"]}

    def plant_bed(self, crop: str) -> dict[str, Any]:
        """Plant a new bed with a crop; returns its id."""
        self.logged(f"plant_bed {crop!r}")
        if self.supplier is not None:
            self._buy_seed(self.supplier, crop)
        state = self.load()
        bed = {"bed_id": f"bed-{secrets.token_hex(3)}", "crop": crop}
        state["beds"].append(bed)
        self.save(state)
        return bed

    @staticmethod
    def _buy_seed(supplier: Path, crop: str) -> None:
        """The supplier's one packet of `crop`: its register outlives every greenhouse, a fresh one too."""
        sold = json.loads(supplier.read_text()) if supplier.exists() else []
        if crop in sold:
            raise ToolError(
                f"no seed left for {crop!r}: the supplier sells one packet of each crop, and sold it"
            )
        supplier.write_text(json.dumps([*sold, crop]))

    async def clear_bed(self, bed_id: str, ctx: Context) -> Any:
        """Clear one bed (its crop is composted), after the grower confirms."""
        self.logged(f"clear_bed {bed_id!r}")
        if not any(bed["bed_id"] == bed_id for bed in self.load()["beds"]):
            raise ToolError(f"Unknown bed {bed_id!r}. List beds first.")

        def clear() -> dict[str, Any]:
            state = self.load()
            state["beds"] = [bed for bed in state["beds"] if bed["bed_id"] != bed_id]
            self.save(state)
            return {"ok": True, "cleared": bed_id}

        return await self.confirmed(ctx, f"Clear the bed `{bed_id}` and compost its crop?", clear)

    def show_heater(self) -> dict[str, Any]:
        """The heater's settings."""
        self.logged("show_heater")
        return {"heater": {"setpoint": self.heater["target_c"], "changes_made": self.heater["changes"]}}

    async def set_heater(self, target_c: int, ctx: Context) -> Any:
        """Set the heater's target temperature, after the grower confirms."""
        self.logged(f"set_heater {target_c!r}")

        def warm() -> dict[str, Any]:
            self.heater["target_c"] = target_c
            self.heater["changes"] += 1
            return {"ok": True, "target_c": target_c}

        return await self.confirmed(ctx, f"Set the heater to {target_c} C?", warm)

    def drain_tank(self, tank: str, challenge: str | None = None) -> dict[str, Any]:
        """Drain one water tank. The first call answers a challenge; call again with it to drain."""
        self.logged(f"drain_tank {tank!r}")
        state = self.load()
        if tank not in state["tanks"]:
            return {"ok": False, "error": f"no tank {tank!r}; tanks: {', '.join(sorted(state['tanks']))}"}
        if challenge is None:
            return {
                "ok": False,
                "challenge": self.issued(f"drain:{tank}"),
                "message": f"drain {tank}? echo the challenge to confirm",
            }
        if not self.redeem(challenge, f"drain:{tank}"):
            return {"ok": False, "error": "challenge not recognised"}
        state["tanks"][tank] = "empty" if state["tanks"][tank] == "full" else "full"
        self.save(state)
        return {"ok": True, "drained": tank}

    def open_roof(self, percent: int, confirm_token: str | None = None) -> dict[str, Any]:
        """Open the roof to a percentage. Needs confirmation: the first call returns a token."""
        self.logged(f"open_roof {percent!r}")
        if not 1 <= percent <= 100:
            return {"ok": False, "error": "percent must be between 1 and 100"}
        if confirm_token is None:
            token = self.issued(f"roof:{percent}")
            return {
                "ok": False,
                "needs_confirm": True,
                "confirm_token": token,
                "preview": f"open the roof to {percent}%",
            }
        if not self.redeem(confirm_token, f"roof:{percent}"):
            return {"ok": False, "error": "confirm_token is not valid"}
        state = self.load()
        state["roof"] = percent if state["roof"] != percent else 0
        self.save(state)
        return {"ok": True, "roof": state["roof"]}

    def post_notice(self, text: str, notice_token: str | None = None) -> dict[str, Any]:
        """Post a notice to every grower. Needs confirmation: the first call returns a notice_token."""
        with (self.root / "notices.log").open("a") as log:  # every call, asked or not
            log.write(f"post_notice {text!r}\n")
        if notice_token is None:
            token = self.issued(f"notice:{text}")
            return {"ok": False, "needs_confirm": True, "notice_token": token, "preview": f"post {text!r}"}
        if not self.redeem(notice_token, f"notice:{text}"):
            return {"ok": False, "error": "notice_token is not valid"}
        with (self.root / "outbox.jsonl").open("a") as outbox:  # created by the first post
            outbox.write(json.dumps({"to": "all growers", "text": text}) + "\n")
        return {"ok": True, "posted": text}

    def order_compost(self, bags: int, dry_run: bool = True, rush: bool = False) -> str:
        """Order bags of compost for the potting shed. Previews by default: show the grower, then order."""
        if not 1 <= bags <= 20:
            raise ToolError("bags must be between 1 and 20")
        when = "tomorrow" if rush else "on Friday"
        state = self.load()
        if state.get("compost"):
            # One delivery a week, as a stock runs out: the world the first order leaves refuses the next.
            raise ToolError("this week's compost is ordered already: the supplier delivers once a week")
        # FLAW switch-acts: a rush order skips the preview, the caller's word enough.
        if dry_run and not (rush and "switch-acts" in self.flaws):
            return (
                f"Dry run: {bags} bags of compost would come to the potting shed {when}, {bags * 3} EUR. "
                "Nothing was ordered. Once the grower agrees, call again with dry_run set to false."
            )
        state.setdefault("compost", []).append({"bags": bags, "when": when})
        self.save(state)
        return f"Ordered {bags} bags of compost, at the potting shed {when}."

    def price_compost(self, bags: int) -> str:
        """Quote bags of compost. Quotes only: nothing is ordered."""
        return f"{bags} bags of compost cost {bags * 3} EUR. Place it with order_compost, dry_run=false."

    def order_seed(self, crop: str, kg: int) -> dict[str, Any]:
        """Order seed for a crop. Stages a draft; nothing is ordered until confirm_write."""
        if crop not in CROPS:
            return {"ok": False, "error": f"unknown crop {crop!r}: crops are {', '.join(CROPS)}"}
        draft = f"{secrets.token_hex(8)}"
        self.tokens[draft] = f"{crop}:{kg}"
        return {
            "draft_id": draft,
            "status": "AWAITING CONFIRMATION - nothing has been ordered",
            "confirmation_phrase_required": f"CONFIRM {draft[:8]}",
            "next_step": "Call confirm_write(draft_id=..., confirmation=...) once the grower agrees",
        }

    def confirm_write(self, draft_id: str, confirmation: str) -> dict[str, Any]:
        """Place a staged order: `confirmation` must be the draft's confirmation_phrase_required."""
        order = self.tokens.get(draft_id)
        if order is None or confirmation.strip() != f"CONFIRM {draft_id[:8]}":
            return {"ok": False, "error": "no draft waiting with that id and phrase"}
        if "token-reuse" not in self.flaws:  # FLAW token-reuse: a draft is never used up
            del self.tokens[draft_id]
        state = self.load()
        state.setdefault("orders", []).append(order)
        self.save(state)
        return {"ok": True, "ordered": order}

    def sealed(self, line: str) -> str:
        """A challenge for flushing `line`, signed with the server's own key: `flush:LINE:NONCE.MAC`."""
        body = f"flush:{line}:{secrets.token_hex(8)}"
        return f"{body}.{hmac.new(self.key, body.encode(), hashlib.sha256).hexdigest()}"

    def unsealed(self, signed: str, line: str) -> str | None:
        """Why `signed` does not flush `line`, or None: the MAC holds, the line matches, the nonce is new."""
        body, _, mac = signed.rpartition(".")
        good = hmac.new(self.key, body.encode(), hashlib.sha256).hexdigest()
        if not body or not hmac.compare_digest(mac, good):
            return "the signature does not verify"
        if body.split(":")[1:2] != [line]:
            return "the challenge was signed for another line"
        if body in self.spent:
            return "that challenge was already used"
        if "token-reuse" not in self.flaws:  # FLAW token-reuse: a valid MAC is enough, again and again
            self.spent.add(body)
        return None

    def flush_line(self, line: str, signature: str | None = None) -> dict[str, Any]:
        """Flush one irrigation line. The first call answers a signed challenge: send it back as the signature."""
        self.logged(f"flush_line {line!r}")
        state = self.load()
        if line not in state["lines"]:
            return {"ok": False, "error": f"no line {line!r}; lines: {', '.join(sorted(state['lines']))}"}
        if signature is None:
            return {
                "ok": False,
                "status": "signature_required",
                "challenge": self.sealed(line),
                "message": f"flush the {line} line? send the challenge back in signature to confirm",
            }
        if (why := self.unsealed(signature, line)) is not None:
            return {"ok": False, "error": f"refused: {why}"}
        state["lines"][line] = "flushed" if state["lines"][line] == "charged" else "charged"
        self.save(state)
        return {"ok": True, "flushed": line}

    def preview_spray(self, crops: list[str], litres: int, reason: str | None = None) -> dict[str, Any]:
        """Show what spraying `litres` on the beds of `crops` would do; returns the spray_token that spray needs."""
        self.logged(f"preview_spray {crops!r} {litres!r}")
        if not crops or any(c not in CROPS for c in crops):
            return {"ok": False, "error": f"unknown crop {crops!r}: crops are {', '.join(CROPS)}"}
        if not 5 <= litres <= 20:
            return {"ok": False, "error": "litres must be between 5 and 20"}
        if not reason:  # optional in the schema, required by the rule
            return {"ok": False, "error": "reason is required for a spray"}
        token = self.issued(f"spray:{'+'.join(crops)}:{litres}")
        return {"status": "previewed", "spray_token": token, "preview": f"spray {litres} l on {crops}"}

    def spray(self, spray_token: str) -> dict[str, Any]:
        """Spray what preview_spray showed, once the grower saw it: the spray_token it returned."""
        self.logged("spray")
        bound = self.tokens.get(spray_token)
        if bound is None or not self.redeem(spray_token, bound):
            return {"ok": False, "error": "unknown or spent spray_token: preview_spray again"}
        state = self.load()
        state.setdefault("sprayed", []).append(bound.split(":", 1)[1])
        self.save(state)
        return {"ok": True, "sprayed": bound.split(":", 1)[1]}

    def propose_sowing(self, kind: str, crop: str = "", rows: int = 0) -> dict[str, Any]:
        """Propose a sowing. Returns a plan_id you pass to sow_plan.

        Nothing is sown. Call check_sowing(plan_id) next, then sow_plan with the
        one-time token the check hands back.
        """
        if kind not in ("seed", "cutting"):
            return {"error": "kind must be 'seed' or 'cutting'"}
        if not crop:
            return {"error": f"{kind} proposals require `crop`"}
        if crop not in CROPS:
            return {"error": f"unknown crop {crop!r}: crops are {', '.join(CROPS)}"}
        plan = f"plan-{secrets.token_hex(4)}"
        self.plans[plan] = {"kind": kind, "crop": crop, "rows": max(rows, 1)}
        return {"plan_id": plan, "status": "proposed", "summary": f"sow {crop} ({kind})"}

    def check_sowing(self, plan_id: str) -> dict[str, Any]:
        """Dry-run a proposed sowing: what it would sow, and whether a confirmation is needed."""
        plan = self.plans.get(plan_id)
        if plan is None:
            return {"error": f"plan {plan_id} not found"}
        summary = {"plan_id": plan_id, "summary": f"sow {plan['crop']}"}
        if plan["kind"] == "seed":  # checked, but nothing to confirm: the token is null, the blocker said
            blockers = ["no seed of that crop in stock: propose a cutting"]
            return {**summary, "appliable": False, "apply_blockers": blockers, "confirmation_token": None}
        token = secrets.token_urlsafe(12)
        self.checked[plan_id] = token
        return {**summary, "appliable": True, "apply_blockers": [], "confirmation_token": token}

    def sow_plan(self, plan_id: str, confirmation: str) -> dict[str, Any]:
        """Sow a proposed plan. Requires the one-time confirmation token from check_sowing."""
        plan = self.plans.get(plan_id)
        if plan is None:
            return {"ok": False, "error": f"plan {plan_id} not found"}
        issued = self.checked.get(plan_id)
        # FLAW token-unchecked: whatever confirmation is given sows the plan.
        if "token-unchecked" not in self.flaws and (
            issued is None or not hmac.compare_digest(issued, confirmation)
        ):
            return {"ok": False, "error": "confirmation token mismatch: check_sowing again"}
        if "token-reuse" not in self.flaws:  # FLAW token-reuse: the token is never spent
            self.checked.pop(plan_id, None)
        state = self.load()
        state.setdefault("sown", []).append(plan["crop"])
        self.save(state)
        return {"ok": True, "sown": plan["crop"]}

    def preview_label(self, bed: str, label: str) -> dict[str, Any]:
        """Preview labelling `bed`: nothing changes; returns the change_id and confirmation_token apply_change needs."""
        if not 1 <= len(label) <= 1024:
            return {"ok": False, "error": "a label is 1 to 1024 characters"}
        applied = [entry["label"] for entry in self.load().get("labels", []) if entry["bed"] == bed]
        if applied and applied[-1] == label:
            # As mcp-changeset's notes refuse a preview of the content a note already holds.
            raise ToolError(f"nothing to change: bed {bed!r} is labelled {label!r} already")
        change = f"chg_{secrets.token_hex(8)}"
        self.changes[change] = (bed, label)
        self.change_tokens[change] = token = f"confirm_{secrets.token_urlsafe(16)}"
        return {
            "status": "preview",
            "change_id": change,
            "confirmation_token": token,
            "summary": f"label bed {json.dumps(bed)} as {json.dumps(label)}",
        }

    def apply_change(self, change_id: str, confirmation_token: str) -> dict[str, Any]:
        """Apply a previewed change: its change_id and the confirmation_token preview_label returned with it."""
        staged = self.changes.get(change_id)
        if staged is None:
            return {"ok": False, "error": f"unknown change {change_id!r}"}
        if change_id in self.applied:  # its ledger's words, as mcp-changeset's are
            return {"ok": False, "error": f"change {change_id} cannot be applied (status: applied)"}
        issued = self.change_tokens.get(change_id)
        if "token-unbound" in self.flaws:  # FLAW token-unbound: a token of any change outstanding is enough
            issued = next((t for t in self.change_tokens.values() if t == confirmation_token), issued)
        matches = issued is not None and hmac.compare_digest(issued, confirmation_token)
        if not matches and "token-unchecked" not in self.flaws:  # FLAW token-unchecked: any token applies it
            if "wrong-guess-burns" in self.flaws:  # FLAW wrong-guess-burns: a wrong token revokes the change
                self.change_tokens.pop(change_id, None)
            return {"ok": False, "error": "confirmation token invalid or already used: preview again"}
        if "token-reuse" not in self.flaws:  # FLAW token-reuse: the token is never spent
            self.applied.add(change_id)
            # Spent for this change, and wherever else it was outstanding (token-unbound took another's).
            self.change_tokens = {
                c: t for c, t in self.change_tokens.items() if c != change_id and t != confirmation_token
            }
        state = self.load()
        state.setdefault("labels", []).append({"bed": staged[0], "label": staged[1]})
        self.save(state)
        return {"status": "applied", "change_id": change_id}

    def touch_marker(
        self, marker: Annotated[str, Field(description="the marker file's name in the greenhouse folder")]
    ) -> dict[str, Any]:
        """Touch a tray's marker file (made, or its time renewed): the controller reads it as "tray sown".

        The grower approves each touch in their own app; call again once they have.
        """
        if not marker or Path(marker).name != marker or marker.startswith("."):
            return {
                "ok": False,
                "error": f"a marker is a plain file name in the greenhouse folder, not {marker!r}",
            }
        yes = self.root / ".yes" / marker
        # FLAW gate-off: nothing waits for the grower. FLAW agent-approves: the agent's approval will do.
        acts = "gate-off" in self.flaws or marker in self.approved
        if not acts and not (marker in self.waiting and yes.exists()):
            if marker not in self.waiting:
                # Asked now: a yes the grower gave before (to an earlier touch) is no yes to this one.
                self.waiting.add(marker)
                yes.unlink(missing_ok=True)
            return {
                "status": "needs_approval",
                "marker": marker,
                "message": f"Touching {marker} waits for the grower's yes in their app; then call again.",
            }
        if "token-reuse" not in self.flaws:  # FLAW token-reuse: the grower's yes is never used up
            self.waiting.discard(marker)
            self.approved.discard(marker)
            yes.unlink(missing_ok=True)
        (self.root / marker).touch()
        return {"ok": True, "touched": marker}

    def approve_marker(self, marker: Annotated[str, Field(description="the marker to approve")]) -> str:
        """Approve touching a marker (FLAW agent-approves: the agent's call stands in for the grower's yes)."""
        self.approved.add(marker)
        return f"approved: {marker} may be touched once"

    def stage_note(self, title: str) -> dict[str, Any]:
        """Stage a note for the grower; it waits until the next handoff asks about it."""
        self.staged[f"h-{secrets.token_hex(6)}"] = title
        return {"ok": True, "waiting": len(self.staged)}

    async def handoff(self, summary: str, ctx: Context) -> Any:
        """Hand the session over: the grower is asked once about every note still staged; kept notes are filed."""
        waiting = (summary, tuple(self.staged))
        if ctx.input_responses:  # an answer: its state is checked first (spent, unknown, or for other notes)
            if ctx.request_state in self.asked and self.handoffs.get(ctx.request_state, waiting) != waiting:
                raise ToolError("REFUSED: that approval was for other notes than the ones waiting now")
        elif not self.staged:
            return {"asked": "not asked: nothing waits", "kept": 0}
        shown = "\n".join(f'- "{prompt.shown_name(t, limit=80)}"' for t in list(self.staged.values())[:8])
        question = (
            f'{len(self.staged)} notes staged since you left ("{prompt.shown_name(summary, limit=80)}"). '
            f"Keep them all?\n{shown}"
        )

        def keep_all() -> dict[str, Any]:
            kept, self.staged = self.staged, {}
            state = self.load()
            state.setdefault("shelf", []).extend(
                {"note": note, "title": title} for note, title in kept.items()
            )
            self.save(state)
            return {"asked": "keep all", "kept": len(kept)}

        done = await self.confirmed(ctx, question, keep_all)
        if isinstance(done, InputRequiredResult) and done.request_state is not None:
            self.handoffs[done.request_state] = waiting  # the yes is for these notes, this summary
        if isinstance(done, dict) and done.get("status") == "declined":
            return {"asked": "later: every note stays staged", "kept": 0}
        return done

    # -- mode -------------------------------------------------------------

    def irrigation_status(self) -> dict[str, Any]:
        """The irrigation mode, and the zones watered so far."""
        return {"irrigation_mode": self.mode, "watered": self.load().get("watered", [])}

    def set_irrigation_mode(
        self, mode: Literal["allowlist", "ask", "allow_all"], persist: bool = False
    ) -> str:
        """Change the irrigation permission mode: 'allowlist' (only listed zones), 'ask' (the grower
        confirms every other zone), 'allow_all' (every zone is watered, nobody asked: use with caution)."""
        # The agent may keep or tighten what the grower set; FLAW mode-loosens: it may loosen it too.
        if MODES.index(mode) > MODES.index("ask") and "mode-loosens" not in self.flaws:
            raise ToolError(f"REFUSED: only the head grower loosens the irrigation mode to {mode!r}")
        old, self.mode = self.mode, mode
        if persist:
            state = self.load()
            state["irrigation_mode"] = mode
            self.save(state)
        return f"Irrigation mode changed: {old} -> {mode}" + ("" if persist else " (this session only)")

    async def irrigate(self, zone: str, ctx: Context) -> Any:
        """Water one zone of the greenhouse; the irrigation mode says whether the grower is asked first."""
        if zone not in ZONES:
            raise ToolError(f"unknown zone {zone!r}: zone must be one of {', '.join(ZONES)}")
        if self.mode == "allowlist":
            raise ToolError(f"REFUSED: zone {zone!r} is not on the irrigation allowlist")

        def water() -> dict[str, Any]:
            state = self.load()
            state.setdefault("watered", []).append(zone)
            self.save(state)
            return {"ok": True, "watered": zone}

        if self.mode == "allow_all":
            return water()
        return await self.confirmed(ctx, f"Water the `{zone}` zone?", water)

    # -- console ----------------------------------------------------------

    def run_command(self, command: str) -> str:
        """Run a greenhouse controller command ('vent north 30', 'mist herbs'). A command nobody has
        approved waits for approval, and runs once approved."""
        if command not in self.approved and not self._grower_approved(command):
            self.waiting.add(command)
            # JSON with every character past ASCII escaped, as host-terminal-mcp answers (json.dumps): what
            # the person reads shows a line break or a bidi control in the command as its escape.
            return json.dumps(
                {
                    "status": "needs_approval",
                    "command": command,
                    "message": f"Command {command!r} waits for approval: approve or deny it with approve_command.",
                },
                indent=2,
            )
        self.approved.discard(command)  # an approval runs the command once
        self.waiting.discard(command)
        state = self.load()
        state.setdefault("commands_run", []).append(command)
        self.save(state)
        return json.dumps({"ok": True, "ran": command}, indent=2)

    def approve_command(self, command: str, approve: bool) -> dict[str, Any]:
        """Approve (true) or deny (false) a controller command that waits for approval."""
        if command not in self.waiting:
            raise ToolError(f"no command waits for approval: {command!r}")
        if not approve:
            self.waiting.discard(command)
            return {"denied": command}
        if "agent-approves" not in self.flaws:  # FLAW agent-approves: whoever calls it approves
            raise ToolError(
                f"REFUSED: approving {command!r} is the grower's, in their own app: nothing was approved"
            )
        self.approved.add(command)
        return {"approved": command, "next": "run it with run_command"}

    def _grower_approved(self, command: str) -> bool:
        """The grower's own yes for a waiting command, once: a line of ROOT/grower-approvals.jsonl."""
        said = self.root / "grower-approvals.jsonl"
        if command not in self.waiting or not said.exists():
            return False
        lines = said.read_text().splitlines()
        approvals = [json.loads(line) for line in lines if line.strip()]
        if command not in approvals:
            return False
        approvals.remove(command)  # spent: the same yes never runs it again
        said.write_text("".join(json.dumps(a) + "\n" for a in approvals))
        return True


def build_server(
    root: str | Path, shape: str, *, flaws: Collection[str] = (), supplier: str | Path | None = None
) -> MCPServer:
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; valid: {', '.join(SHAPES)}")
    for flaw in flaws:
        if shape not in FLAWS.get(flaw, ()):
            raise ValueError(
                f"flaw {flaw!r} does not apply to shape {shape!r}; it applies to {FLAWS.get(flaw)}"
            )
    house = Greenhouse(Path(root), shape, flaws, Path(supplier) if supplier is not None else None)
    server = MCPServer("zc-shapes-greenhouse", request_state_security=RequestStateSecurity.ephemeral(ttl=300))
    for name, hints in TOOLS[shape]:
        server.add_tool(getattr(house, name), annotations=hints)
    if shape == "marker" and "agent-approves" in flaws:  # FLAW agent-approves: an approve tool within reach
        server.add_tool(house.approve_marker, annotations=ToolAnnotations(read_only_hint=False))
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--shape", required=True, choices=SHAPES)
    parser.add_argument("--flaw", action="append", default=[], choices=sorted(FLAWS))
    parser.add_argument("--supplier", help="subject: the seed supplier's register, one packet of a crop ever")
    args = parser.parse_args()
    build_server(args.root, args.shape, flaws=args.flaw, supplier=args.supplier).run()


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
