"""Collections reference server: an action that names no file, whose subject can drift.

    python targets/collections/server.py --root DIR [--on-drift act-on-shown|ask-again] [--flaw NAME]
        [--choices-in tool|argument] [--by-id none|refuses-members] [--confirm ask|token]
        [--listing json|text]

Links live in collections, kept in this process's memory and seen only through
the read-only `list_links`. `delete_collection(collection_id)` asks the person
first, naming the collection and every link it will delete, in either era: over
2026-07-28 with an MRTR round (a form, a state), over a legacy connection with
`elicitation/create` while the call waits (what `ctx.elicit` sends), for five seconds at most. It asks
only a client that declared form elicitation, and quotes the title with link punctuation escaped.

Between the question and the answer, the target's own `move_link` can move
another link into the collection (or `add_link` save a new one straight into it). The careful server acts on what was shown:
with `--on-drift act-on-shown` (the default) it deletes only the links the
question named and keeps the collection with what was moved in since; with
`--on-drift ask-again` it asks again about the collection as it is now. The flaw
`deletes-current-members` deletes whatever the collection holds at the answer,
links the person never saw included; `subject-drift` finds it.

With `--confirm token` the tool does not ask in the protocol: the call without `confirm_token`
answers with a preview (the same text as the question) and a token, and the call with that token
acts, on what the preview showed (or, ask-again, with a new preview if the collection changed). The
move can then come between the preview and the confirming call, and the same flaw deletes what the
preview never named.

With `--listing text`, `list_links` answers in text, one line a link: a probe that is coarse when
read whole, where another tool's added link and the collection's deletion are one change of it;
row by row they are told apart. The flaw `prunes-unasked` adds `prune_links()`, which deletes every
link asking nobody: rows removed, the gated kind of change, around the gate.

`on_links` says what becomes of the links, as linkwarden-mcp's does: a plain string whose
choices only the descriptions list. The careful server still asks, naming what will
happen (`cancel` asks nothing and changes nothing). With `--choices-in argument` the
choices are listed in the argument's own description instead of the tool's. The flaw
`on-links-skips-question` takes the caller's `on_links` as the person's answer and acts
without asking (linkwarden-mcp 0.1.6 does); `flag-bypass` finds it.

`--by-id` adds `delete_links(link_ids)`, a tool that deletes links by their ids. With
`--by-id refuses-members` (careful) it deletes loose links only, and refuses a link that is in
a collection: that one goes with its collection, which asks. The flaw `deletes-links-unasked`
deletes any link it is given, the collection's too, asking nobody (linkwarden-mcp 0.1.6's
`delete_links` does): the gated deletion done around the gate, which `ungated` finds.
"""

from __future__ import annotations

import argparse
import itertools
import json
import logging
import secrets
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import anyio
from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

_REFERENCE = str(Path(__file__).resolve().parents[1] / "reference")
if _REFERENCE not in sys.path:
    sys.path.insert(0, _REFERENCE)

from capabilities import require_form_elicitation  # noqa: E402

SERVER_NAME = "mcp-collections-reference"
FLAWS = {
    "deletes-current-members": "deletes every link the collection holds at the answer, not the ones shown",
    "on-links-skips-question": "acts on the caller's on_links without asking the person",
    "deletes-links-unasked": "delete_links deletes a collection's links by id, asking nobody",
    "prunes-unasked": "prune_links deletes every link of every collection, asking nobody",
}
OnDrift = Literal["act-on-shown", "ask-again"]
Confirm = Literal["ask", "token"]
ChoicesIn = Literal["tool", "argument"]
ById = Literal["none", "refuses-members"]
# How list_links answers: JSON rows, or text, one line a link (a probe that is coarse read whole).
Listing = Literal["json", "text"]
ON_LINKS = ("delete", "keep", "cancel")
# How long a legacy question waits for the person before nothing is deleted.
ANSWER_SECONDS = 5.0
# Markdown's and HTML's link punctuation, escaped in a title the question quotes: shown, never a link.
_LINK_MARKS = str.maketrans({c: "\\" + c for c in "[]<>"})

_READ_ONLY = types.ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True)
_EDITS = types.ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False)
_DELETES = types.ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)
_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Delete them", "description": "Tick to delete"}},
    "required": ["confirm"],
}

CollectionId = Annotated[str, Field(description="A collection's id, as create_collection returned it.")]
LinkId = Annotated[str, Field(description="A link's id, as add_link or create_collection returned it.")]


@dataclass
class Store:
    """Links by id, each in one collection or none; the collections' titles."""

    titles: dict[str, str] = field(default_factory=dict)
    links: dict[str, dict[str, Any]] = field(default_factory=dict)
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def members(self, collection: str) -> frozenset[str]:
        return frozenset(k for k, v in self.links.items() if v["collection"] == collection)

    def add(self, url: str, collection: str | None) -> str:
        link = f"l{next(self.ids)}"
        self.links[link] = {"id": link, "url": url, "collection": collection}
        return link


class Gate:
    """The question about a collection and the answer's reading, shared by both eras."""

    def __init__(self, store: Store, active: frozenset[str], on_drift: OnDrift) -> None:
        self.store, self.active, self.on_drift = store, active, on_drift
        self.pending: dict[str, tuple[str, frozenset[str]]] = {}

    def subject(self, collection: str) -> frozenset[str]:
        if collection not in self.store.titles:
            raise ToolError(f"no collection {collection!r}")
        return self.store.members(collection)

    def question(self, collection: str, shown: frozenset[str], on_links: str = "delete") -> str:
        urls = ", ".join(json.dumps(self.store.links[k]["url"]) for k in sorted(shown)) or "no links"
        title = json.dumps(self.store.titles[collection]).translate(_LINK_MARKS)
        if on_links == "keep":
            return (
                f"Delete the collection {title} ({collection}) and keep its {len(shown)} links loose: {urls}?"
            )
        return f"Delete the collection {title} ({collection}) and its {len(shown)} links: {urls}?"

    def drifted(self, collection: str, shown: frozenset[str]) -> bool:
        """Whether the collection holds links the question did not name, and the server asks again then."""
        return self.on_drift == "ask-again" and self.store.members(collection) != shown

    def act(self, collection: str, shown: frozenset[str], on_links: str = "delete") -> str:
        now = self.store.members(collection)
        if on_links == "keep":
            for link in now & shown:
                self.store.links[link]["collection"] = None
            if now - shown:
                return f"kept the collection {collection}: links moved in after the question were not shown"
            del self.store.titles[collection]
            return f"deleted the collection {collection}; its {len(shown)} links are loose now"
        # FLAW deletes-current-members: what was moved in after the question goes too.
        gone = now if "deletes-current-members" in self.active else now & shown
        for link in gone:
            del self.store.links[link]
        kept = now - gone
        if kept:
            return (
                f"deleted the {len(gone)} links shown; kept the collection {collection}: "
                f"{len(kept)} links moved in after the question were not shown ({', '.join(sorted(kept))})"
            )
        del self.store.titles[collection]
        return f"deleted the collection {collection} and its {len(gone)} links"


def _says_yes(action: Any, content: Any) -> bool:
    return str(action) == "accept" and isinstance(content, dict) and content.get("confirm") is True


def _modern(ctx: Context) -> bool:
    return str(getattr(ctx, "protocol_version", None)) == "2026-07-28"


def _declares_form(ctx: Context) -> bool:
    """Whether the client declared form elicitation (an empty capability is form mode)."""
    elicitation = getattr(ctx.client_capabilities, "elicitation", None)
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


async def _legacy(gate: Gate, ctx: Context, collection: str, on_links: str) -> str:
    """Over a legacy connection: ask with elicitation/create while the call waits, as often as it must."""
    session = ctx.request_context.session
    shown = gate.subject(collection)
    if not _declares_form(ctx):
        raise ToolError(
            "this client cannot show the person a form (no elicitation declared): nothing was deleted"
        )
    while True:
        message = gate.question(collection, shown, on_links)
        try:
            with anyio.fail_after(ANSWER_SECONDS):
                result = await session.elicit_form(message, _SCHEMA, related_request_id=ctx.request_id)
        except TimeoutError:
            return f"not deleted: no answer within {ANSWER_SECONDS:g} s"
        if not _says_yes(result.action, result.content):
            return f"not deleted: the person answered {result.action}"
        if not gate.drifted(collection, shown):
            return gate.act(collection, shown, on_links)
        shown = gate.subject(collection)  # the collection changed after the question: ask again


def _mrtr(gate: Gate, ctx: Context, collection: str, on_links: str) -> str | types.InputRequiredResult:
    """Over 2026-07-28: round one asks with a form and a state; round two reads the answer."""

    def ask(shown: frozenset[str]) -> types.InputRequiredResult:
        nonce = secrets.token_hex(16)
        gate.pending[nonce] = (collection, shown)
        question = types.ElicitRequest(
            params=types.ElicitRequestFormParams(
                message=gate.question(collection, shown, on_links), requested_schema=_SCHEMA
            )
        )
        return types.InputRequiredResult(input_requests={"confirm": question}, request_state=nonce)

    if ctx.request_state is None:
        require_form_elicitation(ctx.client_capabilities)
        return ask(gate.subject(collection))
    held = gate.pending.pop(str(ctx.request_state), None)
    if held is None or held[0] != collection:
        raise ToolError("that confirmation is unknown, used, or for another collection; ask again")
    answer = (ctx.input_responses or {}).get("confirm")
    if not _says_yes(getattr(answer, "action", None), getattr(answer, "content", None)):
        return f"not deleted: the person answered {getattr(answer, 'action', None)}"
    shown = held[1]
    if gate.drifted(collection, shown):
        return ask(gate.subject(collection))
    return gate.act(collection, shown, on_links)


def _token(gate: Gate, collection: str, on_links: str, token: str) -> str:
    """Without a token, a preview and the token that confirms it; with one, the deletion it previewed."""

    def preview(shown: frozenset[str], **more: Any) -> str:
        nonce = secrets.token_hex(16)
        gate.pending[nonce] = (collection, shown)
        question = gate.question(collection, shown, on_links)
        return json.dumps(
            {"status": "confirmation_required", **more, "preview": question, "confirm_token": nonce}
        )

    if not token:
        return preview(gate.subject(collection))
    held = gate.pending.pop(token, None)
    if held is None or held[0] != collection:
        raise ToolError("that confirm_token is unknown, used, or for another collection; preview again")
    shown = held[1]
    if gate.drifted(collection, shown):
        return preview(gate.subject(collection), changed_since_preview=True)
    return gate.act(collection, shown, on_links)


def build_server(
    root: str | Path,
    *,
    flaws: Collection[str] = (),
    on_drift: OnDrift = "act-on-shown",
    choices_in: ChoicesIn = "tool",
    by_id: ById = "none",
    confirm: Confirm = "ask",
    listing: Listing = "json",
) -> MCPServer:
    """The server, for `mcp.Client(server)` in-process or `.run()`; `root` is unused (all in memory)."""
    active = frozenset(flaws)
    if unknown := sorted(active - FLAWS.keys()):
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(sorted(FLAWS))}")
    if on_drift not in get_args(OnDrift):
        raise ValueError(f"bad --on-drift {on_drift!r}: use {' or '.join(get_args(OnDrift))}")
    if by_id not in get_args(ById):
        raise ValueError(f"bad --by-id {by_id!r}: use {' or '.join(get_args(ById))}")
    if confirm not in get_args(Confirm):
        raise ValueError(f"bad --confirm {confirm!r}: use {' or '.join(get_args(Confirm))}")
    if listing not in get_args(Listing):
        raise ValueError(f"bad --listing {listing!r}: use {' or '.join(get_args(Listing))}")
    store = Store()
    gate = Gate(store, active, on_drift)
    server = MCPServer(SERVER_NAME)

    def create_collection(
        title: Annotated[str, Field(description="The collection's title.")],
    ) -> dict[str, Any]:
        collection = f"c{next(store.ids)}"
        store.titles[collection] = title
        links = [store.add(f"https://example.org/{collection}/{n}", collection) for n in (1, 2)]
        return {"collection_id": collection, "links": links}

    def add_link(
        url: Annotated[str, Field(description="The link's URL.")],
        collection_id: Annotated[
            str | None, Field(description="A collection to save it in, as create_collection returned it.")
        ] = None,
    ) -> dict[str, Any]:
        if collection_id is not None and collection_id not in store.titles:
            raise ToolError("no such collection")
        return {"link_id": store.add(url, collection_id)}

    def move_link(link_id: LinkId, collection_id: CollectionId) -> dict[str, Any]:
        if link_id not in store.links or collection_id not in store.titles:
            raise ToolError("no such link or collection")
        store.links[link_id]["collection"] = collection_id
        return store.links[link_id]

    def list_links() -> dict[str, Any]:
        return {"links": [dict(v) for _, v in sorted(store.links.items())]}

    def list_links_text() -> str:
        rows = [dict(v) for _, v in sorted(store.links.items())]
        lines = [f"{r['id']} {r['url']} in {r['collection'] or 'no collection'}" for r in rows]
        return "\n".join(["Links:", *lines])

    def prune_links() -> dict[str, Any]:
        gone = len(store.links)
        store.links.clear()  # FLAW prunes-unasked: every collection's links, asking nobody
        return {"deleted": gone}

    listed = " (one of 'delete', 'keep' or 'cancel')" if choices_in == "argument" else ""
    on_links_field = Field(default=None, description=f"What becomes of the collection's links{listed}.")

    def chosen(collection_id: str, on_links: str | None) -> tuple[str, str | None]:
        """What becomes of the links, and what the tool says at once (a cancel, the caller's word)."""
        choice = (on_links or "delete").strip().lower()
        if choice not in ON_LINKS:
            raise ToolError(f"on_links is one of {', '.join(ON_LINKS)}")
        if choice == "cancel":
            return choice, json.dumps({"status": "cancelled", "deleted": False, "collection": collection_id})
        if on_links is not None and "on-links-skips-question" in active:
            return choice, gate.act(
                collection_id, gate.subject(collection_id), choice
            )  # FLAW: the caller's word
        return choice, None

    token_field = Field(default="", description="The confirm_token a preview returned; leave out to preview.")

    async def delete_collection_by_token(
        collection_id: CollectionId, on_links: str | None = on_links_field, confirm_token: str = token_field
    ) -> str:
        choice, said = chosen(collection_id, on_links)
        return said if said is not None else _token(gate, collection_id, choice, confirm_token)

    async def delete_collection(
        collection_id: CollectionId, ctx: Context, on_links: str | None = on_links_field
    ) -> str | types.InputRequiredResult:
        choice, said = chosen(collection_id, on_links)
        if said is not None:
            return said
        if _modern(ctx):
            return _mrtr(gate, ctx, collection_id, choice)
        return await _legacy(gate, ctx, collection_id, choice)

    def delete_links(
        link_ids: Annotated[list[str], Field(description="The ids of the links to delete.")],
    ) -> dict[str, Any]:
        unknown = [k for k in link_ids if k not in store.links]
        if unknown:
            raise ToolError(f"no such link: {', '.join(unknown)}")
        members = [k for k in link_ids if store.links[k]["collection"] is not None]
        if members and "deletes-links-unasked" not in active:
            raise ToolError(
                f"not deleted: {', '.join(members)} belong to a collection; they go only with it, "
                "through delete_collection, which asks the person to confirm"
            )
        for link in link_ids:  # FLAW deletes-links-unasked: a collection's links, asking nobody
            del store.links[link]
        return {"deleted": len(link_ids)}

    add = server.add_tool
    if by_id != "none" or "deletes-links-unasked" in active:
        add(delete_links, description="Delete links by their ids.", annotations=_DELETES)
    if "prunes-unasked" in active:
        add(prune_links, description="Delete every link.", annotations=_DELETES)
    add(
        create_collection, description="Make a collection with two links; returns its id.", annotations=_EDITS
    )
    add(add_link, description="Add a link to no collection; returns its id.", annotations=_EDITS)
    add(move_link, description="Move a link into a collection.", annotations=_EDITS)
    add(
        list_links_text if listing == "text" else list_links,
        name="list_links",
        description="Every link and the collection it is in.",
        annotations=_READ_ONLY,
    )
    add(
        delete_collection_by_token if confirm == "token" else delete_collection,
        name="delete_collection",
        description=(
            "Delete a collection and its links. "
            + (
                "Call once to preview it, naming every link, then again with the confirm_token to delete."
                if confirm == "token"
                else "Asks the person first, naming every link."
            )
            + (
                ""
                if choices_in == "argument"
                else " Say what becomes of them with on_links='delete'|'keep'|'cancel'."
            )
        ),
        annotations=_DELETES,
    )
    return server


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, metavar="DIR", help="unused: everything is in memory")
    parser.add_argument("--on-drift", default="act-on-shown", choices=get_args(OnDrift))
    parser.add_argument("--flaw", action="append", default=[], choices=sorted(FLAWS), metavar="NAME")
    parser.add_argument("--choices-in", default="tool", choices=get_args(ChoicesIn))
    parser.add_argument("--confirm", default="ask", choices=get_args(Confirm))
    parser.add_argument("--by-id", default="none", choices=get_args(ById))
    parser.add_argument("--listing", default="json", choices=get_args(Listing))
    args = parser.parse_args(argv)
    try:
        server = build_server(
            args.root,
            flaws=args.flaw,
            on_drift=args.on_drift,
            choices_in=args.choices_in,
            by_id=args.by_id,
            confirm=args.confirm,
            listing=args.listing,
        )
    except ValueError as exc:
        parser.error(str(exc))
    server.run(transport="stdio")


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
