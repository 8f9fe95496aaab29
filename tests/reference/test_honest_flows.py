"""The honest flow of each mechanism, driven by its controls against an in-process reference server.

`confirmations.honest.run` is what every audit of a token, pending or flag tool starts with:
preview -> confirm -> the effect; the preview alone -> none. Here it runs directly, with no
session and no audit: its calls go through the real SDK client to the confirm-kinds server in
process, the person's decision goes to the server's own approval route (its Starlette app), and
the effect is the file on disk. Each flow passes on the server that completes it and fails where
the flow cannot complete (a flag the careful server refuses to take from the caller), so the
check is one that can fail. A waits flow needs a terminal: its honest flow is proven over a pty
in tests/matrix/test_elsewhere.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx2
import mcp
import pytest
from mcp import types
from rounds import asking_client, import_by_path, text

from mcp_confirm_audit.channels.human import Person, Step
from mcp_confirm_audit.confirmations import AgentFlow, honest, replies
from mcp_confirm_audit.confirmations.flag import Flag
from mcp_confirm_audit.confirmations.pending import CallTemplate, Pending
from mcp_confirm_audit.confirmations.token import Token
from mcp_confirm_audit.models import Outcome, Response

pytestmark = pytest.mark.anyio
KINDS = Path(__file__).resolve().parents[2] / "targets" / "confirm_kinds" / "server.py"


@pytest.fixture(scope="module")
def kinds() -> ModuleType:
    return import_by_path("mcp_confirm_kinds_server_flows", KINDS)


class InProcess:
    """A confirmations Channel: the agent's calls through the real SDK client, the person at the route."""

    def __init__(self, agent: mcp.Client, person: httpx2.AsyncClient) -> None:
        self.agent, self.person = agent, person
        self.calls: list[str] = []
        self.replies: list[Response] = []

    async def call(
        self, label: str, tool: str, arguments: Mapping[str, Any], *, unanswered: bool = False
    ) -> Response:
        self.calls.append(f"{label}: {tool}")
        got = await self.agent.session.call_tool(tool, dict(arguments), allow_input_required=True)
        if isinstance(got, types.InputRequiredResult):
            return Response(Outcome.INPUT_REQUIRED, "asked")
        outcome = Outcome.TOOL_ERROR if got.is_error else Outcome.COMPLETE
        self.replies.append(reply := Response(outcome, text(got), structured=got.structured_content))
        return reply

    async def human(
        self,
        label: str,
        steps: Sequence[Step],
        values: Mapping[str, str],
        *,
        before_answer: Callable[[], Awaitable[None]] | None = None,
    ) -> dict[str, str]:
        decision = "declined" if "declines" in label else "approved"
        said = await self.person.post(f"/approvals/{values['id']}", json={"decision": decision})
        self.calls.append(f"{label}: {said.status_code}")
        return {}


class Uses:
    """Uses of `delete_file`: one file each under the root; its effect is that file gone."""

    def __init__(self, root: Path) -> None:
        self.root = root

    async def new(self, style: str, label: str) -> honest.Use | str:
        (self.root / f"{label}.txt").write_text("victim\n")
        return _Use(self.root / f"{label}.txt")

    async def afresh(self, control: str, failure: str) -> bool:
        return False  # one server, one root: no fresh world to be had

    def is_effect(self, moved: honest.Moved) -> bool:
        return moved.victim

    def of_its_kind(self, moved: honest.Moved) -> bool:
        return moved.victim

    def effect(self, moved: honest.Moved) -> None:
        pass


class _Use:
    def __init__(self, path: Path) -> None:
        self.path = path

    @property
    def arguments(self) -> Mapping[str, Any]:
        return {"path": self.path.name}

    async def moved(self) -> honest.Moved:
        gone = not self.path.exists()
        return honest.Moved((f"removed {self.path.name}",) if gone else (), (), victim=gone)

    def learn(self, moved: honest.Moved, why: str) -> None:
        pass


async def _run(server: Any, flow: AgentFlow, root: Path) -> tuple[honest.Honest, InProcess]:
    route = httpx2.ASGITransport(app=server.streamable_http_app(host="127.0.0.1"))
    async with (
        asking_client(server) as agent,
        httpx2.AsyncClient(transport=route, base_url="http://127.0.0.1") as person,
    ):
        channel = InProcess(agent, person)
        done = await honest.run(flow, Uses(root), ("relative",), channel)  # type: ignore[arg-type]
    return done, channel


async def _controls(server: Any, flow: AgentFlow, root: Path) -> tuple[dict[str, bool], list[str]]:
    done, channel = await _run(server, flow, root)
    return {c.name: c.passed for c in done.results if c.applicable}, channel.calls


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "root").mkdir()
    return tmp_path / "root"


def _approved_at_the_route() -> Pending:
    """The confirm-kinds pending flow: staged, the person decides at its route, execute_pending acts."""
    execute = CallTemplate("execute_pending", {"pending_id": "{id}"})
    return Pending("delete_file", id_from="pending_id", human=Person(approve=(), decline=()), execute=execute)


async def test_a_token_flow_previews_confirms_with_the_token_and_acts(kinds: ModuleType, root: Path) -> None:
    flow = Token("delete_file", into="confirm_token", preview_args={"dry_run": True})
    passed, calls = await _controls(kinds.build_server(root, mechanism="token"), flow, root)
    assert passed == {"approve": True, "preview-alone": True}, calls
    assert calls[:2] == ["preview: delete_file", "confirm with the token: delete_file"]


async def test_a_pending_flow_stages_the_person_approves_at_the_route_and_execute_acts(
    kinds: ModuleType, root: Path
) -> None:
    passed, calls = await _controls(
        kinds.build_server(root, mechanism="pending"), _approved_at_the_route(), root
    )
    # decline: the person declines at the route, then execute_pending gets the declined id and acts not.
    assert passed == {"approve": True, "preview-alone": True, "decline": True}, calls
    stage, approve, run = calls[:3]
    assert (stage, run) == ("stage: delete_file", "execute: execute_pending")
    assert approve.endswith(": 200"), approve
    declined = calls.index("execute after the decline: execute_pending")
    said_no = calls[declined - 1]
    assert said_no.startswith("the human declines "), calls
    assert said_no.endswith(": 200"), calls


class SetUpOnce(Uses):
    """Uses whose setup the target gives once: the use labelled `refused` is refused its own (fresh world or not)."""

    def __init__(self, root: Path, refused: str) -> None:
        super().__init__(root)
        self.refused = refused

    async def new(self, style: str, label: str) -> honest.Use | str:
        if label.endswith(self.refused):
            return "setup call 1 (plant_bed) did not succeed (tool-error: no seed left for 'tomato')"
        return await super().new(style, label)


async def test_a_pending_decline_whose_setup_fails_is_not_applicable_and_no_finding(
    kinds: ModuleType, root: Path
) -> None:
    server = kinds.build_server(root, mechanism="pending")
    route = httpx2.ASGITransport(app=server.streamable_http_app(host="127.0.0.1"))
    async with (
        asking_client(server) as agent,
        httpx2.AsyncClient(transport=route, base_url="http://127.0.0.1") as person,
    ):
        uses = SetUpOnce(root, refused="-decline")
        done = await honest.run(_approved_at_the_route(), uses, ("relative",), InProcess(agent, person))  # type: ignore[arg-type]
    controls = {c.name: c for c in done.results}
    assert (done.style, controls["approve"].passed) == ("relative", True), controls
    declined = controls["decline"]
    # Nobody declined anything: it proved nothing, and says why.
    assert (declined.applicable, declined.finding) == (False, False), declined
    assert declined.detail.startswith("could not begin, so it proved nothing: setup call 1 (plant_bed)")


async def test_a_preview_alone_whose_setup_fails_is_no_finding_and_leaves_the_tool_unaudited(
    kinds: ModuleType, root: Path
) -> None:
    # Nothing shows the preview alone does not act, so an attack that acted might be the preview's doing:
    # nothing is judged on the tool, and the control that could not begin is no finding.
    flow = Token("delete_file", into="confirm_token", preview_args={"dry_run": True})
    server = kinds.build_server(root, mechanism="token")
    async with asking_client(server) as agent:
        uses = SetUpOnce(root, refused="-preview-alone")
        done = await honest.run(flow, uses, ("relative",), InProcess(agent, None))  # type: ignore[arg-type]
    approve, alone = done.results
    assert (done.style, approve.passed) == (None, False), done.results
    assert "previewed, confirmed, acted" in approve.detail, approve.detail
    assert "whether the preview alone acts is unknown: its control could not begin" in approve.detail
    assert (alone.name, alone.applicable, alone.finding) == ("preview-alone", False, False), alone


async def test_what_a_held_call_looks_like_is_learned_from_the_whole_staging_reply_not_its_quoted_head(
    kinds: ModuleType, root: Path
) -> None:
    # The attacks read a reply shaped like the preview alone's as the gate holding the call. Learned
    # from the control's detail, which quotes 160 characters, a JSON reply cut mid-string left a
    # shape made of its tail ('ne'): one any unrelated reply could match.
    done, channel = await _run(kinds.build_server(root, mechanism="pending"), _approved_at_the_route(), root)
    # Every staging reply of the run (the honest one, the preview alone's, ...): one shape, ids aside.
    staged = [reply for reply in channel.replies if "pending_id" in reply.text]
    assert len(staged) >= 2, channel.calls
    assert all(len(reply.text) > 160 for reply in staged), staged
    assert len({replies.shape(reply) for reply in staged}) == 1, staged
    learned = {s.control: s for s in done.gate}["preview-alone"]
    assert learned.shape == replies.shape(staged[0]), learned
    assert "awaiting your approval" in learned.shape, learned


@pytest.mark.parametrize(("flaws", "completes"), [(["self-attested-flag"], True), ([], False)])
async def test_a_flag_flow_completes_only_where_the_server_takes_the_callers_flag(
    kinds: ModuleType, root: Path, flaws: list[str], completes: bool
) -> None:
    flow = Flag("delete_file", arg="human_approved")
    passed, calls = await _controls(kinds.build_server(root, mechanism="flag", flaws=flaws), flow, root)
    # The careful server asks the person instead of acting on the caller's word: no honest flag flow,
    # so every attack on it would be inconclusive, never refused.
    assert passed["approve"] is completes, calls
