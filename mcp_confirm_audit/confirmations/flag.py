"""`flag`: an argument the caller sets (`human_approved: true`) says the action was approved.

The caller's word is the whole gate: the flow is complete the moment an agent
sets it. The call without it is the preview, and must not act.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..models import Response
from .base import Channel, FlowDefaults, Preview

# A boolean argument that claims an approval: confirm, confirmed, approved, human_*, user_approved...
FLAG_ARG = re.compile(
    r"^(confirm(ed)?|approved?|human_\w+|user_?(confirmed|approved)|consent(ed)?|acknowledged?|"
    r"i_?understand\w*|yes|is_approved|authori[sz]ed)$",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Flag(FlowDefaults):
    tool: str = ""
    arg: str = "confirm"
    value: Any = True
    source: str = "detected"

    @property
    def kind(self) -> str:
        return "flag"

    def describe(self) -> str:
        return f"flag: the caller sets {self.arg}={self.value!r} to say the action was approved"

    def for_tool(self, tool: str) -> Flag:
        return replace(self, tool=tool)

    @property
    def own_arguments(self) -> tuple[str, ...]:
        return (self.arg,)

    @property
    def caller_approves(self) -> bool:
        return True

    async def preview(self, channel: Channel, arguments: Mapping[str, Any]) -> Preview:
        unset = {k: v for k, v in arguments.items() if k != self.arg}
        return Preview(await channel.call(f"without {self.arg}", self.tool, unset))

    async def confirm(
        self,
        channel: Channel,
        arguments: Mapping[str, Any],
        handle: str | None,
        *,
        tool: str | None = None,
        as_agent: bool = False,
    ) -> Response:
        sent = {**arguments, self.arg: self.value}
        return await channel.call(f"with {self.arg}={self.value!r}", tool or self.tool, sent)
