"""The controls of every mechanism but MRTR: the honest flow first, exactly as for MRTR.

preview -> confirm -> the effect happens (this also learns the path style);
the preview alone -> nothing happens. If the honest flow cannot be completed,
every attack on the tool is inconclusive.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..models import ControlResult, Exchange, Phase, Response
from ..oracle.sandbox import Sandbox, identity_of
from . import human
from .base import AgentFlow, HumanFailed

if TYPE_CHECKING:
    from ..target.driver import Connection


@dataclass(frozen=True, slots=True)
class Honest:
    style: str | None
    results: tuple[ControlResult, ...]


class RecordingChannel:
    """A Channel over one connection, every exchange handed to `record`."""

    def __init__(
        self, conn: Connection, phase: Phase, record: Callable[[Exchange], None], root: Path, timeout: float
    ) -> None:
        self.conn, self.phase, self.record = conn, phase, record
        self.root, self.timeout = root, timeout
        self.said: list[str] = []

    async def call(self, label: str, tool: str, arguments: Mapping[str, Any]) -> Response:
        exchange = await self.conn.call(self.phase, label, tool, arguments)
        self.record(exchange)
        return exchange.response

    async def human(self, label: str, step: human.HumanStep) -> str:
        where = human.Where(self.root, self.timeout, human.base_url(self.conn.endpoint))
        said = await human.run(step, where)
        self.said.append(f"{label}: {said[:160]}")
        return said


async def run(
    mechanism: AgentFlow,
    arguments: Callable[[str], dict[str, Any]],
    styles: tuple[str, ...],
    sandbox: Sandbox,
    channel: RecordingChannel,
) -> Honest:
    """`arguments(path_value)`: the tool's arguments naming a file."""
    tool, tried = mechanism.tool, []
    for style in styles:
        case = sandbox.new_case(f"control-{mechanism.kind}-{style}")
        value = str(case.victim) if style == "absolute" else case.victim.relative_to(sandbox.root).as_posix()
        before = identity_of(case.victim)
        preview = await mechanism.preview(channel, arguments(value))
        if identity_of(case.victim) != before:
            detail = f"the preview itself acted ({style} paths): {mechanism.describe()}"
            return Honest(None, (ControlResult(tool, "approve", False, True, detail),))
        try:
            done = await mechanism.confirm(channel, arguments(value), preview.handle)
        except HumanFailed as exc:
            tried.append(f"{style}: {exc}")
            continue
        if identity_of(case.victim) != before:
            how = f"previewed, confirmed, acted ({style} paths) through {mechanism.kind}"
            alone = await _preview_alone(mechanism, arguments, style, sandbox, channel)
            if not alone.passed:
                # A gate its own preview opens cannot be judged: every attack would act.
                return Honest(None, (ControlResult(tool, "approve", False, True, alone.detail), alone))
            approve = ControlResult(tool, "approve", True, True, how)
            # The MRTR answers have no counterpart here; the preview alone is this flow's "no".
            skipped = tuple(
                ControlResult(
                    tool,
                    name,
                    True,
                    False,
                    f"a {mechanism.kind} flow has no {name}: the preview alone was checked",
                )
                for name in ("decline", "cancel", "negative")
            )
            return Honest(style, (approve, alone, *skipped))
        said = preview.response.text[:120]
        tried.append(f"{style}: confirmed but nothing happened (preview: {said}; confirm: {done.text[:160]})")
    detail = f"{mechanism.describe()}; " + "; ".join(tried)
    return Honest(None, (ControlResult(tool, "approve", False, True, detail),))


async def _preview_alone(
    mechanism: AgentFlow,
    arguments: Callable[[str], dict[str, Any]],
    style: str,
    sandbox: Sandbox,
    channel: RecordingChannel,
) -> ControlResult:
    case = sandbox.new_case(f"control-{mechanism.kind}-preview-alone")
    value = str(case.victim) if style == "absolute" else case.victim.relative_to(sandbox.root).as_posix()
    before = identity_of(case.victim)
    preview = await mechanism.preview(channel, arguments(value))
    if identity_of(case.victim) != before:
        return ControlResult(mechanism.tool, "preview-alone", False, True, "the preview alone acted")
    said = f"{preview.response.outcome}: {preview.response.text[:160]}"
    return ControlResult(mechanism.tool, "preview-alone", True, True, f"no effect ({said})")
