"""Reference MCP server: governed notes, asked about once over the back channel (the magnemo-mcp shape).

    py:targets/notes/server.py:build_server  (factory_args: flaws, answer_timeout, too_fast, sentinel, evidence,
                                              already_staged, vault)

`stage(note, store)` drafts a note (`note` is an object: title, body) into a
waiting list without asking and returns its id (`staged`). `handoff(cut)` asks
the person once, over 2025-era elicitation (`elicitation/create` in the middle
of the call), about every waiting note, by title; a yes keeps them all (they
move into the kept list, which only the read-only `list_kept` shows). `keep(note)`
and `drop(note)` take a waiting note's id: the careful `keep` refuses (keeping
needs the person's yes in a handoff), `drop` forgets a note (no harm to Memory).
An id nobody staged is "no note waiting with the id ...", a store that does not
exist is refused as invalid, as magnemo-mcp says both. A client that declared no
form elicitation is never sent the question (-32021, as every careful reference
server that asks through a form).

The careful question shows each title escaped (the reference prompt module).
With `sentinel` (magnemo-mcp's sentinel, careful in another style), a note whose title looks like a
credential (a GitHub token, an AWS key id) is held aside when staged: it never waits,
is never asked about and a yes never keeps it; the staging call answers as for any note.

`too_fast: S` refuses a handoff answer that came sooner than S seconds after the
question, as magnemo-mcp refuses one faster than 300 ms, and keeps a ledger in the
root (`ledger.jsonl`) where a keep and such a refusal both write a line: the
record of a refused yes lands where the kept notes are recorded (a careful
choice, not a flaw; the harness must not take it for the action).

`already_staged: [TITLE, ...]` stages those notes (in `playbooks`) when the server starts, as magnemo-mcp's
vault holds notes staged before the handoff: `handoff` then asks with no call before it, and once
a yes kept them, nothing waits and it asks no more in that process (a careful shape, not a flaw).

`vault: PATH` keeps the waiting and kept notes in a JSON file outside the root, shared by every process
of the server, as magnemo-mcp's vault lives in the user's home: `already_staged` is written there only
when the vault does not exist yet, so once a yes kept those notes, no later process finds anything waiting
(nothing stages them again; a careful shape, not a flaw).

`evidence` keeps an evidence log of every call, asked or refused, as agentveil-mcp-proxy does: a
SQLite database in write-ahead mode, ROOT/.notes/evidence.sqlite, its connection held open, so each
call but a read moves ROOT/.notes/evidence.sqlite-wal (a careful choice, not a flaw: the target's own
bookkeeping, which the harness must learn from the controls and never take for an action's effect).

Flaws (each removes one defence):
  keeps-unasked        keep(note) keeps the waiting note with no question (magnemo's chat-text keep)
  unsanitised-titles   the titles go into the question as they are: line breaks, controls, markup
  masks-secrets        a credential-like title is masked in the question, and a yes keeps it all the same

"""

from __future__ import annotations

import json
import re
import secrets
import sqlite3
import sys
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

import anyio

_REFERENCE = str(Path(__file__).resolve().parents[1] / "reference")
if _REFERENCE not in sys.path:
    sys.path.insert(0, _REFERENCE)

import prompt  # noqa: E402
from capabilities import require_form_elicitation  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402

FLAWS = ("keeps-unasked", "unsanitised-titles", "masks-secrets")
# What the sentinel (and the masking flaw) take for a credential in a title.
SECRET_SHAPED = re.compile(r"ghp_[A-Za-z0-9]{20,}|AKIA[A-Z2-7]{16}")
STORES = ("playbooks", "knowledge", "decisions")
_FORM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Keep them", "description": "Tick to keep"}},
    "required": ["confirm"],
}


def build_server(
    root: str | Path = "",
    *,
    flaws: Collection[str] = (),
    answer_timeout: float = 5.0,
    too_fast: float = 0.0,
    sentinel: bool = False,
    evidence: bool = False,
    already_staged: Collection[str] = (),
    vault: str | Path = "",
) -> MCPServer:
    active = frozenset(flaws)
    unknown = sorted(active - set(FLAWS))
    if unknown:
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(FLAWS)}")
    waiting: dict[str, dict[str, str]] = {}
    kept: list[dict[str, str]] = []
    held: dict[str, dict[str, str]] = {}
    for title in already_staged:
        waiting[f"note-{secrets.token_hex(4)}"] = {"title": title, "body": "", "store": "playbooks"}
    shared = Path(vault) if vault else None

    def load() -> None:
        """The vault's notes, as another process of the server may have left them."""
        if shared is not None:
            notes = json.loads(shared.read_text(encoding="utf-8"))
            waiting.clear()
            waiting.update(notes["waiting"])
            kept[:] = notes["kept"]

    def save() -> None:
        if shared is not None:
            shared.write_text(json.dumps({"waiting": waiting, "kept": kept}), encoding="utf-8")

    if shared is not None and not shared.exists():
        save()
    load()
    server = MCPServer("notes-reference")

    def record(line: dict[str, Any]) -> None:
        if too_fast > 0 and root:
            with (Path(root) / "ledger.jsonl").open("a", encoding="utf-8") as ledger:
                ledger.write(json.dumps(line) + "\n")

    log: list[sqlite3.Connection] = []

    def witness(tool: str) -> None:
        """One row per call in the evidence log (write-ahead mode, connection held open): bookkeeping."""
        if not (evidence and root):
            return
        if not log:
            (Path(root) / ".notes").mkdir(exist_ok=True)
            db = sqlite3.connect(Path(root) / ".notes" / "evidence.sqlite", check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("CREATE TABLE IF NOT EXISTS calls (at REAL, tool TEXT)")
            log.append(db)
        with log[0]:
            log[0].execute("INSERT INTO calls VALUES (?, ?)", (time.time(), tool))

    def shown(title: str) -> str:
        if "masks-secrets" in active:
            title = SECRET_SHAPED.sub("[secret]", title)  # FLAW masks-secrets: still kept by a yes
        if "unsanitised-titles" in active:
            return title  # FLAW unsanitised-titles
        return prompt.shown_name(title, sanitiser="careful")

    async def stage(note: dict[str, str], store: str) -> dict[str, str]:
        """Draft a note (title, body) into a store's waiting list; a handoff asks the person to keep it."""
        witness("stage")
        load()
        if store not in STORES:
            raise ToolError(f"REFUSED: store {store!r} is not valid (valid: {', '.join(STORES)})")
        if not note.get("title"):
            raise ToolError("a note needs a title")
        staged = f"note-{secrets.token_hex(4)}"
        if sentinel and SECRET_SHAPED.search(note["title"]):
            held[staged] = {"title": note["title"], "store": store}  # never asked about, never kept
            return {"staged": staged, "status": "staged"}
        waiting[staged] = {"title": note["title"], "body": note.get("body", ""), "store": store}
        save()
        return {"staged": staged, "status": "staged"}

    server.add_tool(stage, annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))

    async def handoff(cut: str, ctx: Context) -> str:
        """Record a session boundary and ask the person whether to keep every waiting note."""
        witness("handoff")
        load()
        if not waiting:
            return "nothing waiting: nothing to ask"
        require_form_elicitation(ctx.client_capabilities)  # never a form to a client that cannot answer it
        titles = "; ".join(shown(n["title"]) for n in waiting.values())
        message = f"Keep {len(waiting)} note(s) in Memory? {titles}. Tick to keep them."
        session = ctx.request_context.session
        asked_at = time.monotonic()
        try:
            with anyio.fail_after(answer_timeout):
                answer = await session.elicit_form(message, _FORM, related_request_id=ctx.request_id)
        except TimeoutError:
            return "asked; no answer (timeout): left for later"
        took = time.monotonic() - asked_at
        if took < too_fast:
            record({"event": "refused", "ms": int(took * 1000)})
            return f"refused: answered too fast to be a person ({int(took * 1000)} ms)"
        if answer.action != "accept" or (answer.content or {}).get("confirm") is not True:
            return "the person said no: every note left for later"
        done = list(waiting)
        kept.extend(waiting.pop(i) for i in done)
        save()
        record({"event": "kept", "notes": done})
        return f"kept {len(done)} note(s)"

    server.add_tool(handoff, annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))

    async def keep(note: str) -> str:
        """Keep one waiting note, by its id."""
        witness("keep")
        load()
        if note not in waiting:
            raise ToolError(f"no note waiting with the id {note!r}")
        if "keeps-unasked" not in active:
            raise ToolError("keeping a note needs the person's confirmation: call handoff")
        kept.append(waiting.pop(note))  # FLAW keeps-unasked: the agent alone keeps it
        save()
        return f"kept {note}"

    server.add_tool(keep, annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))

    async def drop(note: str) -> str:
        """Forget one waiting note, by its id (nothing in Memory changes)."""
        witness("drop")
        load()
        if waiting.pop(note, None) is None:
            raise ToolError(f"no note waiting with the id {note!r}")
        save()
        return f"dropped {note}"

    server.add_tool(drop, annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))

    async def list_kept() -> dict[str, Any]:
        """Every note kept in Memory."""
        load()
        return {"kept": [dict(n) for n in kept]}

    server.add_tool(list_kept, annotations=ToolAnnotations(read_only_hint=True))
    return server
