"""Reference MCP server: a photo organiser whose actions move files and edit a settings file in its root.

    python targets/photos/server.py --root DIR [--flaw revert-unasked] [--flaw settings-unasked]

The root holds batches of photos the organiser sorted (`sorted/<batch>/IMG_*.jpg`)
and its options (`settings.json`). `revert_batch(batch_id)` moves one batch's
photos back to `inbox/`: an action that names no file, whose effect is files
moving in the sandbox. `set_option(option, value)` writes one key of
`settings.json`. Both ask first (an MRTR form, the SDK's sealed state around a
nonce spent on first use), each argument shown escaped in a code span as the reference
server's code-span style shows a name; `list_batches` shows the batches not yet reverted.

Flaws (each removes one defence):
  revert-unasked    revert_batch moves the photos at once, asking nobody
  settings-unasked  set_option writes settings.json at once, asking nobody
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import secrets
import sys
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Annotated

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
from styles.code_span import ESCAPING, code_span  # noqa: E402

FLAWS = ("revert-unasked", "settings-unasked")
BATCHES = 8


def shown(text: str) -> str:
    """An argument as the question shows it: escaped as the reference server's code-span style does."""
    return code_span(prompt.shown_name(text, escaping=ESCAPING))


_FORM = {"type": "object", "properties": {"yes": {"type": "boolean"}}, "required": ["yes"]}


def build_server(root: str | Path, *, flaws: Collection[str] = ()) -> MCPServer:
    unknown = sorted(set(flaws) - set(FLAWS))
    if unknown:
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(FLAWS)}")
    root = Path(root)
    settings = root / "settings.json"
    _seed(root, settings)
    issued: set[str] = set()
    server = MCPServer("photos-reference", request_state_security=RequestStateSecurity.ephemeral(ttl=300))

    async def confirmed(ctx: Context, question: str, act: Callable[[], str]) -> str | InputRequiredResult:
        """Ask `question` on round one; act on an accepted yes with a state this server issued."""
        answer = (ctx.input_responses or {}).get("confirm")
        if answer is None:
            require_form_elicitation(ctx.client_capabilities)
            nonce = secrets.token_hex(16)
            issued.add(nonce)
            request = ElicitRequest(
                params=ElicitRequestFormParams(mode="form", message=question, requested_schema=_FORM)
            )
            return InputRequiredResult(input_requests={"confirm": request}, request_state=nonce)
        if ctx.request_state is None or ctx.request_state not in issued:
            raise ToolError("that confirmation is unknown or already used")
        issued.discard(ctx.request_state)
        if not isinstance(answer, ElicitResult) or answer.action != "accept":
            return "Nothing was changed."
        if (answer.content or {}).get("yes") is not True:
            return "Nothing was changed."
        return act()

    def list_batches() -> dict[str, object]:
        """The batches the organiser sorted and that were not reverted yet."""
        folders = sorted(p for p in (root / "sorted").iterdir() if p.is_dir() and any(p.iterdir()))
        return {"batches": [{"batch_id": p.name, "photos": len(list(p.iterdir()))} for p in folders]}

    server.add_tool(list_batches, annotations=ToolAnnotations(read_only_hint=True))

    async def revert_batch(
        batch_id: Annotated[str, Field(description="A batch list_batches shows")], ctx: Context
    ) -> str | InputRequiredResult:
        """Move one sorted batch's photos back to inbox/, after the user confirms."""
        folder = root / "sorted" / batch_id
        if "/" in batch_id or batch_id.startswith(".") or not folder.is_dir():
            raise ToolError(f"no batch {batch_id!r}")
        photos = sorted(folder.iterdir())
        if not photos:
            raise ToolError(f"batch {batch_id!r} was already reverted")

        def move() -> str:
            (root / "inbox").mkdir(exist_ok=True)
            for photo in photos:
                os.replace(photo, root / "inbox" / photo.name)
            return f"Moved {len(photos)} photos of {batch_id} back to inbox/."

        if "revert-unasked" in flaws:
            return move()  # FLAW revert-unasked
        question = f"Move the {len(photos)} photos of batch {shown(batch_id)} back to inbox/?"
        return await confirmed(ctx, question, move)

    server.add_tool(revert_batch, annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))

    async def set_option(
        option: Annotated[str, Field(pattern=r"^[a-z_]{1,32}$")], value: str, ctx: Context
    ) -> str | InputRequiredResult:
        """Set one option of the organiser (written to settings.json), after the user confirms."""

        def write() -> str:
            options = json.loads(settings.read_text())
            options[option] = value
            settings.write_text(json.dumps(options, sort_keys=True))
            return f"{option} is now {value!r}."

        if "settings-unasked" in flaws:
            return write()  # FLAW settings-unasked
        return await confirmed(ctx, f"Set the option {shown(option)} to {shown(value)}?", write)

    server.add_tool(set_option, annotations=ToolAnnotations(read_only_hint=False))
    return server


def _seed(root: Path, settings: Path) -> None:
    if not settings.exists():
        settings.write_text(json.dumps({"sort_by": "month"}))
    for number in range(1, BATCHES + 1):
        folder = root / "sorted" / f"B{number}"
        if folder.exists():
            continue
        folder.mkdir(parents=True)
        for photo in (1, 2):
            (folder / f"IMG_{number:02d}{photo:02d}.jpg").write_bytes(b"\xff\xd8\xff\xe0 photo\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--flaw", action="append", default=[], choices=FLAWS)
    args = parser.parse_args()
    build_server(args.root, flaws=args.flaw).run()


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
