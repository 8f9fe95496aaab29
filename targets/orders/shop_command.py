"""The order desk's command line and its own question: `shop(command)` asked over MRTR or elicitation.

`--command` makes the desk's tool `shop(command)`, whose argument is a command line of the
shop, `shop cancel <order reference>`, as a CLI wrapper's tool takes one. Anything else is
refused before anything is asked or previewed, in an ordinary result ("not a shop command"),
as such a wrapper refuses what its parser does not know.

`--mechanism ask` asks the person itself: over 2026-07-28 an MRTR round (a form, a state),
over a legacy connection `elicitation/create` while the call waits (what `ctx.elicit` sends).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from typing import Annotated, Any

from mcp import types
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

__all__ = ["FORM", "PREFIX", "ShopCommand", "ask_then", "not_a_command", "order_of"]

PREFIX = "shop cancel "
ShopCommand = Annotated[
    str,
    Field(
        description="A shop command line: `shop cancel <order reference>`.", examples=["shop cancel ORD-1042"]
    ),
]
FORM: dict[str, Any] = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Cancel it", "description": "Tick to cancel"}},
    "required": ["confirm"],
}


def order_of(command: str) -> str | None:
    """The order reference a `shop cancel <reference>` command names; None: not a shop command."""
    if not command.startswith(PREFIX) or not command[len(PREFIX) :].strip():
        return None
    return command[len(PREFIX) :]


def not_a_command(command: str) -> str:
    """The refusal of what is no shop command, in an ordinary result, before anything is asked."""
    return json.dumps({"status": "refused", "error": f"not a shop command: {command}"}, ensure_ascii=False)


def _modern(ctx: Context) -> bool:
    return str(getattr(ctx, "protocol_version", None)) == "2026-07-28"


def _says_yes(action: Any, content: Any) -> bool:
    return str(action) == "accept" and isinstance(content, dict) and content.get("confirm") is True


def ask_then(
    pending: dict[str, str],
) -> Callable[[str, str, Context, Callable[[], Any]], Any]:
    """One question per call, in either era; `act` runs only on the person's yes to that very value."""

    async def ask(value: str, question: str, ctx: Context, act: Callable[[], Any]) -> Any:
        if _modern(ctx):
            if ctx.request_state is None:
                nonce = secrets.token_hex(16)
                pending[nonce] = value
                asked = types.ElicitRequest(
                    params=types.ElicitRequestFormParams(message=question, requested_schema=FORM)
                )
                return types.InputRequiredResult(input_requests={"confirm": asked}, request_state=nonce)
            if pending.pop(str(ctx.request_state), None) != value:
                raise ToolError("that confirmation is unknown, used, or for another order; ask again")
            answer = (ctx.input_responses or {}).get("confirm")
            action, content = getattr(answer, "action", None), getattr(answer, "content", None)
        else:
            session = ctx.request_context.session
            result = await session.elicit_form(question, FORM, related_request_id=ctx.request_id)
            action, content = result.action, result.content
        if not _says_yes(action, content):
            raise ToolError(f"not cancelled: the person answered {action}")
        return act()

    return ask
