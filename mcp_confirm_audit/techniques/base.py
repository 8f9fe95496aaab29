"""`Attack`: what a technique holds while it runs (the world, its connections, its calls); what it saw is its `Recorder`'s.

Every request goes through here so that nothing reaches the target without
being written into the transcript. Calls made before `start_attack()` are
setup; calls after it, and only the disk changes after it, are judged.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

import anyio
from mcp import types

from ..catalogue.generation import Generation
from ..channels.human import HumanFailed, Step
from ..channels.url_flow import Pages, answer_content
from ..confirmations import answers, honest
from ..engine.action import CaseFile, Instance, SetupFailed, Victim, prepare, render
from ..engine.observation import Observer
from ..models import (
    AttackSpec,
    AtTheGate,
    Exchange,
    Outcome,
    Phase,
    Precondition,
    Question,
    Response,
    Signatures,
    Transcript,
    TreeSnapshot,
    Verdict,
)
from ..oracle.effects import at_the_gate, disk_places, is_ignored, probe_changes, probe_places
from ..oracle.grown import files, grown
from ..oracle.sandbox import VICTIM_TEXT, Case, Sandbox, decoy_text, diff, identity_of
from ..profile.headers import Header
from ..target.discovery import ToolPlan, arguments_for
from ..target.driver import CREDENTIALS_REFUSED, Connection, ToolInfo
from ._in_place import InPlace
from ._recorder import Recorder

if TYPE_CHECKING:
    from ._era_control import EraControl


@dataclass(frozen=True, slots=True)
class Mark:
    """One moment of an attack: what the probes saw, and the sandbox."""

    probes: Mapping[str, Any]
    tree: TreeSnapshot


# What an attack may name to the target: its victim (a case file or a use of the action), another
# path of the sandbox, or a string sent exactly as written.
Subject = Path | str | Instance | CaseFile


def _unwrapped(subject: Subject) -> Path | str | Instance:
    return subject.path if isinstance(subject, CaseFile) else subject


@lru_cache(maxsize=8)
def _slashed(root: Path) -> str:
    """The sandbox root's absolute text and a slash: what a path under it starts with (one root an audit)."""
    return f"{os.path.abspath(root)}/"


class Unavailable(Exception):
    """A connection an attack needs cannot exist for this target; the message says how to enable it."""


class Peers(Protocol):
    """The connections beyond the primary that some attacks need."""

    @property
    def shared_keys(self) -> bool:
        """Whether every process of the target shares one request-state key."""
        ...

    @property
    def redemptions(self) -> int:
        """How many redemptions of one approval a race sends at once."""
        ...

    @property
    def principals(self) -> Mapping[str, tuple[Header, ...]]:
        """The other identities the profile names, each its own headers (none: an empty mapping)."""
        ...

    @property
    def principal_steps(self) -> Mapping[str, tuple[Step, ...]]:
        """Second paired devices the profile names, each the steps that read its credentials."""
        ...

    @property
    def era_controls(self) -> MutableMapping[str, EraControl]:
        """The honest flow over each other era, by era: run once per tool per audit, kept here."""
        ...

    @property
    def learned(self) -> MutableMapping[str, Any]:
        """What a family learned of this tool in the world in place, by family: its other attacks read it.

        Forgotten when a fresh world begins: a new process may answer otherwise.
        """
        ...

    async def other(self) -> Connection:
        """Another process (or instance) of the target on the same root."""
        ...

    async def replicas(self) -> list[Connection]:
        """Every replica of the target on the same root, the primary first."""
        ...

    async def same_process(self, count: int) -> list[Connection]:
        """`count` connections to the primary's process (the one connection again over stdio)."""
        ...

    async def short_lived(self) -> tuple[Connection, float]:
        """A process of the target whose confirmations expire, and their lifetime in seconds."""
        ...

    async def principal(self, name: str | None = None, *, victims_claim: bool = False) -> Connection:
        """A client of the primary's process as another identity (the profile's first, or `name`).

        `victims_claim`: with that identity's credentials, but the victim's value of
        the header the target takes as the caller's identity (`identity_header`).
        """
        ...

    async def declaring(self, elicitation: str) -> Connection:
        """A client of the target that declares `elicitation`: "none" (no capability) or "url" (URL mode only)."""
        ...

    async def in_era(self, era: str) -> Connection:
        """A client of the target in `era`: "legacy" (the handshake, questions over the back channel) or "modern"."""
        ...


class NoPeers:
    """Peers of a target that has only its primary connection."""

    shared_keys = False
    redemptions = 8
    principals: Mapping[str, tuple[Header, ...]] = MappingProxyType({})
    principal_steps: Mapping[str, tuple[Step, ...]] = MappingProxyType({})

    def __init__(self) -> None:
        self.era_controls: MutableMapping[str, EraControl] = {}
        self.learned: MutableMapping[str, Any] = {}

    async def other(self) -> Connection:
        raise Unavailable("no other process of the target can be started here")

    async def replicas(self) -> list[Connection]:
        raise Unavailable("no replicas of the target can be started here")

    async def same_process(self, count: int) -> list[Connection]:
        raise Unavailable("no more connections to the target can be opened here")

    async def short_lived(self) -> tuple[Connection, float]:
        raise Unavailable("no short-lived process of the target can be started here")

    async def principal(self, name: str | None = None, *, victims_claim: bool = False) -> Connection:
        raise Unavailable("no other identity can connect to the target here")

    async def declaring(self, elicitation: str) -> Connection:
        raise Unavailable("no client with other capabilities can be opened here")

    async def in_era(self, era: str) -> Connection:
        raise Unavailable("no client of another protocol era can be opened here")


class Attack(Recorder):
    def __init__(
        self,
        spec: AttackSpec,
        plan: ToolPlan,
        style: str,
        sandbox: Sandbox,
        case: Case | str,
        primary: Connection,
        open_other: Callable[[], Awaitable[Connection]],
        *,
        tools: Sequence[ToolInfo] = (),
        answer_template: Mapping[str, Any] | None = None,
        negative_template: Mapping[str, Any] | None = None,
        generation: Generation | None = None,
        peers: Peers | None = None,
        observer: Observer | None = None,
        bookkeeping: Sequence[str] = (),
        values: Mapping[str, Any] | None = None,
        pages: Pages | None = None,
        gated_places: Sequence[str] = (),
        items_per_effect: int = 1,
        gated_reworded: Mapping[str, tuple[frozenset[str], frozenset[str]]] | None = None,
    ) -> None:
        super().__init__(items_per_effect)
        self.spec = spec
        self.plan = plan
        self.style = style
        self.sandbox = sandbox
        self._root_slash = _slashed(sandbox.root)
        self._root_length = len(self._root_slash)
        # A case, or the name reserved for it (`Sandbox.reserve_case`): made when first needed, so an
        # attack that sends nothing (not applicable before its first request) makes no files.
        self._case = case if isinstance(case, Case) else None
        self._case_name = case.name if isinstance(case, Case) else case
        self.primary = primary
        self._open_other = open_other
        self.tools = tuple(tools)
        self._answer_template = answer_template
        self._negative_template = negative_template
        self.generation = generation or Generation()
        self._phase = Phase.SETUP
        self._before: TreeSnapshot | None = None
        self.peers: Peers = peers or NoPeers()
        self.observer = observer
        self.bookkeeping = tuple(bookkeeping)
        # What `{sink}` and other harness-provided names stand for in the templates.
        self._values = dict(values or {})
        self._instance: Instance | None = None
        self._variants = 0
        # Every connection a request went over, the primary first: effects are looked for on each.
        self._used: list[Connection] = [primary]
        self._observed_before: dict[str, Any] | None = None
        self._observed_after: dict[str, Any] | None = None
        # URL-mode questions and the person's visits; while `person_completes`, an accept sent
        # to one is preceded by the person completing its page (channels/url_flow.py).
        self.pages = pages
        self.person_completes = True
        # An MRTR question approved elsewhere (a link at the webhook): the same hook takes the person's steps.
        sink = observer.sink if observer is not None else None
        honest.elsewhere(
            plan.mechanism,
            pages,
            lambda: honest.person_where(
                primary, sandbox.root, sink.requests if sink is not None else None, primary.call_timeout
            ),
        )
        # Seconds the attack had to let pass by design (a lifetime running out): no client is faster.
        self.waited = 0.0
        # Where and how the honest approval's effect showed, as the controls saw it.
        self.gated_places = tuple(gated_places)
        # Of those, how each one-line text changed word by word (oracle.effects.reworded).
        self.gated_reworded = dict(gated_reworded or {})
        self._at_the_gate = False
        self._staged_at_the_gate = False
        self._staging_tools: set[str] = set()
        # What the last setup that could not be made said (`staged_with`), for the attack's reason.
        self.staging_failed = ""
        # Why the honest flow did not complete, for a family that runs without one (None: it completed).
        self.honest_flow_failed: str | None = None
        # The use of the action the attack proper is about when it is not the victim (a hostile path
        # staged by a setup call): what follows the attack (an offered flow) names it, not the victim.
        self.aimed: Instance | None = None

    @property
    def case(self) -> Case:
        """This attack's case: its directories, victim and canaries, made the first time they are needed.

        They are there before anything reaches the target: any request, any connection the attack
        uses, and the snapshot that starts the attack proper make them first.
        """
        return self._case or self._make_case()

    def _make_case(self) -> Case:
        if self._case is None:
            self._case = self.sandbox.make_case(self._case_name)
        return self._case

    # -- what the user is asked about -------------------------------------

    @property
    def names_file(self) -> bool:
        """Whether the action names a case file (else its subject is an `Instance`)."""
        return self.style in ("relative", "absolute")

    @property
    def victim(self) -> CaseFile | Instance:
        """What this attack's question is about: the case file, or one prepared use of the action."""
        if self.names_file:
            return self._case_file(self.case.victim)
        assert self._instance is not None, "prepare() runs before the technique"
        return self._instance

    @property
    def use_of_action(self) -> Instance:
        """The victim of an action that names no file, for a family whose strings go into its arguments."""
        assert self._instance is not None, "an action that names no file is prepared before the technique"
        return self._instance

    def _case_file(self, path: Path, text: str = VICTIM_TEXT) -> CaseFile:
        return CaseFile(
            path,
            self.path_value(path),
            self.sandbox.keep / f"{self.case.name}-{path.name}",
            self.case.rel(path),
            text,
        )

    async def prepare(self) -> None:
        """Run the action's setup calls for this attack's subject (nothing to do for a file action)."""
        if not self.names_file and self._instance is None:
            self._instance = await self._new_instance(0)

    async def another(
        self, label: str, *, connection: Connection | None = None
    ) -> CaseFile | Instance | None:
        """Another subject of the same action: another file, or the setup again with other values.

        It differs from the victim in everything a token or state may bind: another
        file has another name, content and size; another use of the action other
        argument values, each still valid for its schema.
        """
        if self.names_file:
            text = decoy_text(label)
            return self._case_file(self.case.add_file(f"{label}.txt", text), text)
        self._variants += 1
        try:
            return await self._new_instance(self._variants, connection)
        except SetupFailed as exc:
            self.setup_failed(str(exc))
            return None

    async def again(self) -> Instance | None:
        """The setup again with the same values: a fresh use of the action (a staged id not yet spent)."""
        try:
            return await self._new_instance(0)
        except SetupFailed as exc:
            self.setup_failed(str(exc))
            return None

    async def subject_on(self, connection: Connection) -> CaseFile | Instance | None:
        """This attack's subject as another process knows it: a handle is minted there again."""
        if self.names_file or not self.plan.setup or connection is self.primary:
            return self.victim
        try:
            return await self._new_instance(0, connection)
        except SetupFailed as exc:
            self.setup_failed(str(exc))
            return None

    async def staged_with(self, step: int, argument: str, value: Any) -> Instance | None:
        """A new use of the action whose setup call `step` got `argument=value` (what the question shows)."""
        return await self.staged_as(step, {argument: value})

    async def staged_as(self, step: int, fields: Mapping[str, Any]) -> Instance | None:
        """A new use of the action whose setup call `step` got each of `fields` in place of its own."""
        try:
            return await self._new_instance(0, None, {step: fields})
        except SetupFailed as exc:
            # Which setup call said no is in its words: the value goes into one call, but a later
            # one (a duplicate the world kept) may be the one that refused.
            self.staging_failed = str(exc)
            self.note(f"staging a value failed: {exc}")
            return None

    async def _new_instance(
        self,
        variant: int,
        connection: Connection | None = None,
        overrides: Mapping[int, Mapping[str, Any]] | None = None,
    ) -> Instance:
        conn = connection or self.primary
        self._track(conn)

        async def call(label: str, tool: str, args: Mapping[str, Any]) -> Response:
            exchange = await conn.call(self._phase, label, tool, args)
            self._exchanges.append(exchange)
            return exchange.response

        template = self.plan.arguments(self._values)
        schemas = {t.name: t.input_schema for t in self.tools}
        if self.plan.name in schemas and self.plan.learned:
            # What a refusal taught (the two tanks it named) bounds another use as the schema would.
            schemas[self.plan.name] = with_learned(schemas[self.plan.name], self.plan.learned)
        # A setup call may name this attack's case file ({path}): a preview of deleting it, say.
        # Another use of the action names another file of the case: a control that acts on it
        # (deletes it) leaves the victim there for the attack's own use.
        staged = self.case.victim
        if variant and any("{path}" in repr(step.args) for step in self.plan.setup):
            staged = self.case.add_file(f"use-{variant}.txt", decoy_text(f"use-{variant}"))
        values = {**self._values, "path": os.path.relpath(staged, self.sandbox.root)}
        instance = await prepare(
            call,
            self.plan.name,
            self.plan.setup,
            template,
            values,
            variant=variant,
            schemas=schemas,
            overrides=overrides,
            fixed=self.plan.fixed,
            mark=Sandbox.number(self._case_name),
        )
        keep_at = self.sandbox.keep / (
            self.case.name if staged == self.case.victim else f"{self.case.name}-{staged.name}"
        )
        return replace(instance, staged=staged, keep_at=keep_at)

    def filled(self, template: Mapping[str, Any], instance: Instance) -> dict[str, Any]:
        """`template` with {NAME} saved by this use's setup calls and the harness's own values.

        {path} is this attack's case file, as the setup calls were given it.
        """
        values = {**self._values, "path": os.path.relpath(self.case.victim, self.sandbox.root)}
        rendered = render(dict(template), {**values, **instance.saved})
        assert isinstance(rendered, dict)
        return rendered

    def file_only(self) -> bool:
        """True for a file action; else the attack is not applicable, saying why."""
        if not self.names_file:
            self.not_applicable(
                f"the {self.spec.family} family needs an argument that names a file, and "
                f"{self.plan.name!r} names none "
                "(set path_arg, or {path} in args:, if one does)"
            )
        return self.names_file

    def resolved_by_the_tool(self) -> bool:
        """True unless the path goes into a command line the tool runs; then not applicable, saying why.

        Which file a path reaches, inside the root or out of it, through a link or onto another file,
        is a file tool's promise. A tool that runs command lines makes none: the person approves the
        line as it reads, and the shell resolves its paths as written.
        """
        if self.plan.path_in_command:
            self.not_applicable(
                f"{self.plan.name!r} runs a command line with the path in it: the person approves the line "
                f"as shown, and which file its path reaches is the shell's, not a promise of the tool, so "
                f"{self.spec.family} does not apply (confines_paths: true in the profile if the tool "
                "promises to keep the paths in its lines inside its root)"
            )
            return False
        return True

    # -- naming files to the target -------------------------------------

    def path_value(self, path: Subject) -> str:
        """A sandbox path as this tool expects it; a str is sent exactly as written."""
        path = _unwrapped(path)
        if isinstance(path, Instance):
            return path.label
        return path if isinstance(path, str) else self.path_text(str(path))

    def path_text(self, text: str) -> str:
        """`path_value` of the sandbox path whose text (`str(path)`, absolute) is `text`.

        For a caller that has a path's text and no `Path` (prompt-forging makes a file per name).
        """
        if self.style == "absolute":
            return text
        # Most paths are plain children of the root: cut the root off (what relpath gives them).
        if text.startswith(self._root_slash) and "/.." not in text:
            return text[self._root_length :]
        return os.path.relpath(text, self.sandbox.root)

    def arguments(self, path: Subject, **overrides: Any) -> dict[str, Any]:
        # Every request's arguments are made here: a str (sent as written: prompt-forging's hundreds of
        # names) is told by its type, the rest unwrapped and named as `path_value` does, inline.
        if type(path) is str:
            value = path
        else:
            path = path.path if isinstance(path, CaseFile) else path
            if isinstance(path, Instance):
                return {**path.arguments, **overrides}
            value = path if isinstance(path, str) else self.path_text(str(path))
        assert self.plan.path_arg is not None
        if self.plan.template is not None:
            # {path} the case file; {root} and {sink} what the harness gives.
            rendered = render(
                self.plan.arguments(self._values), {**self._values, "path": self.plan.placed(value)}
            )
            return {**rendered, self.plan.path_arg: rendered.get(self.plan.path_arg, value), **overrides}
        return {**self.plan.extra_args, self.plan.path_arg: value, **overrides}

    def other_tool(self) -> tuple[str, dict[str, Any]] | None:
        """Another tool of the target that may act, with arguments naming the same victim.

        A tool that declares itself read-only is never one: an approval presented to it has nothing
        to act on, and its normal answer would leave the attack neither refused nor found.
        """
        others = [t for t in self.tools if t.name != self.plan.name and t.read_only is not True]
        if not others:
            return None
        value = self.path_value(self.case.victim) if self.names_file else None
        return others[0].name, arguments_for(others[0], value)

    # -- talking ----------------------------------------------------------

    async def other_connection(self) -> Connection:
        """A second process of the same target, on the same sandbox."""
        other = await self._open_other()
        self._track(other)
        return other

    async def peer(self, get: Callable[[], Awaitable[Any]]) -> Any:
        """`await attack.peer(attack.peers.replicas)`: the connections, or None (not applicable, with why).

        Every process it returns is watched from the start of the attack proper: a payment made
        on a replica shows only in that replica's read-only tool.
        """
        try:
            found = await get()
        except Unavailable as exc:
            self.not_applicable(str(exc))
            return None
        for item in found if isinstance(found, list | tuple) else [found]:
            if isinstance(item, Connection):
                self._track(item)
        return found

    async def call(
        self,
        label: str,
        path: Subject,
        *,
        state: str | None = None,
        responses: Mapping[str, Any] | None = None,
        arguments: Mapping[str, Any] | None = None,
        tool: str | None = None,
        connection: Connection | None = None,
        unanswered: bool = False,
        staging: bool = False,
    ) -> Response:
        """One round; `unanswered`: nobody answers while it waits (bounded by the target's own deadline).

        `staging`: the harness making a use of the action inside the attack (ungated calling the
        action's own setup tool): it may count as tried, but what held is quoted from another call.
        """
        exchange = await self.exchange(
            label,
            path,
            state=state,
            responses=responses,
            arguments=arguments,
            tool=tool,
            connection=connection,
            unanswered=unanswered,
            staging=staging,
        )
        return exchange.response

    async def exchange(
        self,
        label: str,
        path: Subject,
        *,
        state: str | None = None,
        responses: Mapping[str, Any] | None = None,
        arguments: Mapping[str, Any] | None = None,
        tool: str | None = None,
        connection: Connection | None = None,
        unanswered: bool = False,
        staging: bool = False,
    ) -> Exchange:
        """`call`, returning the recorded exchange itself."""
        conn = connection or self.primary
        args = arguments if arguments is not None else self.arguments(path)
        self._track(conn)
        if self.pages is not None and self.person_completes:
            await self.pages.before_answer(state, responses)
        exchange = await conn.call(
            self._phase,
            label,
            tool or self.plan.name,
            args,
            state=state,
            responses=responses,
            unanswered=unanswered,
        )
        # A plain dict (every call but a profile's filled template) holds neither list: not looked up.
        if type(args) is not dict:
            for name in getattr(args, "emptied", ()):
                self.note(f"the agent has no {{{name}}}, which only the person can make: it sends it empty")
            unfilled = getattr(args, "unfilled", ())
            if unfilled:
                # The profile's call still says `{NAME}` where nothing was saved: recorded, never judged a refusal.
                exchange = replace(exchange, unfilled=tuple(unfilled))
        if not self.spec.any_refusal and (wrong := self._malformed(tool or self.plan.name, args)):
            # The harness's own call was wrong by the tool's schema: recorded, never judged a refusal.
            exchange = replace(exchange, malformed=wrong)
        self._record(exchange)
        if staging:
            self._staging_tools.add(tool or self.plan.name)
        return exchange

    def _malformed(self, tool: str, args: Mapping[str, Any]) -> str:
        """What is wrong with `args` by `tool`'s own schema; a mechanism's own argument may be left out."""
        for info in self.tools:  # the first of that name; a loop, as every call passes here
            if info.name == tool:
                break
        else:
            return ""
        mechanism = self.plan.mechanism
        own = set(mechanism.own_arguments) if mechanism is not None else set()
        return malformed_call(info.input_schema, args, may_omit=own)

    def _track(self, conn: Connection) -> None:
        if self._case is None:  # every request passes here: the case is made once, before the first
            self._make_case()
        # `in` compares by identity here: a Connection has no `__eq__`.
        if self._phase is Phase.SETUP and conn not in self._used:
            self._used.append(conn)

    async def call_raw(
        self, label: str, params: Mapping[str, Any], *, connection: Connection | None = None
    ) -> Response:
        self._track(connection or self.primary)
        exchange = await (connection or self.primary).call_raw(self._phase, label, params)
        self._record(exchange)
        return exchange.response

    def _record(self, exchange: Exchange) -> None:
        self._exchanges.append(exchange)
        response = exchange.response
        if self.pages is not None:
            self.pages.remember(response)
        if response.outcome is Outcome.TRANSPORT and response.text.startswith(CREDENTIALS_REFUSED):
            # The request never reached the tool: whatever the attack does next, it is not judged refused.
            self.setup_failed(response.text)

    async def ask(
        self, path: Subject, *, connection: Connection | None = None, label: str = "ask"
    ) -> Response:
        """Round one; marks the attack as set up wrong if the target did not ask."""
        response = await self.call(label, path, connection=connection)
        if response.outcome is not Outcome.INPUT_REQUIRED or not response.questions:
            self.setup_failed(f"round one did not ask for confirmation ({response.outcome}: {response.text})")
        return response

    # -- answering --------------------------------------------------------

    def names(self, path: Subject) -> tuple[str, str]:
        """How an answer template names the subject: ({name}, {path})."""
        return self._names(path)

    def _names(self, path: Subject) -> tuple[str, str]:
        value = self.path_value(path)
        return (value if isinstance(_unwrapped(path), Instance) else Path(value).name), value

    def yes(self, question: Question, path: Subject) -> dict[str, Any]:
        name, value = self._names(path)
        return answers.affirmative(question.schema, name, value, self._answer_template)

    def no(self, question: Question, path: Subject) -> dict[str, Any] | None:
        name, value = self._names(path)
        return answers.negative(question.schema, name, value, self._negative_template)

    def accept(self, response: Response, path: Subject) -> dict[str, types.ElicitResult]:
        """The honest "yes" to every question in a round-one response."""
        return {
            q.key: types.ElicitResult(action="accept", content=answer_content(q.url, self.yes(q, path)))
            for q in response.questions
        }

    async def shown(self, response: Response) -> str:
        """What the person read: every question's message, and each URL-mode page as it reads (opened, not completed)."""
        shown = []
        for q in response.questions:
            shown.append(q.message or "")
            if q.url is not None and self.pages is not None:
                try:
                    seen = await self.pages.open(q.url, complete=False, record=False)
                except HumanFailed:
                    continue
                shown.append(seen.shown)
        return "\n".join(shown)

    def reply(
        self, response: Response, action: str, content: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        return {q.key: types.ElicitResult(action=action, content=content) for q in response.questions}  # type: ignore[arg-type]

    # -- the disk ---------------------------------------------------------

    def attack_under_way(self) -> None:
        """Requests from here on are the attack proper, though its snapshot is taken later (`start_attack`).

        A waits flow's one call is under way while the harness makes its change; the change is the
        harness's own, so the snapshot comes after it, the call already counted as the attack.
        """
        self._make_case()
        self._phase = Phase.ATTACK

    async def start_attack(self) -> None:
        """From here on, every request and every change on disk or through a probe is judged."""
        self._make_case()  # in the snapshot that starts the attack proper
        self._observed_before = await self.observe()
        self._before = self.sandbox.snapshot()
        self._phase = Phase.ATTACK

    async def observe_at_start(self) -> dict[str, Any]:
        """What the probes saw when the attack proper started."""
        return dict(self._observed_before or {})

    async def observe(self) -> dict[str, Any]:
        """What the action's effect probes see now, on every process this attack talked to."""
        if self.observer is None:
            return {}
        return await self.observer.observe(self._used)

    async def mark(self) -> Mark:
        """What the probes and the sandbox show now: what `took_effect` compares with."""
        return Mark(await self.observe(), self.sandbox.snapshot())

    async def took_effect(self, subject: Victim | Path, since: Mark) -> bool:
        """Whether the action happened since `since`: the file went or changed, a probe moved, the sandbox changed."""
        path = subject.path if isinstance(subject, CaseFile) else subject
        if isinstance(path, Path):
            now = identity_of(path)
            return now is None or now != since.tree.entries.get(self.case.rel(path), now)
        return bool(self.changes(since, await self.mark()))

    def judged_at_the_gate(self, verdict: Verdict, why: str) -> bool:
        """Count only changes where the gated action's effect shows; its own kind of change is vulnerable.

        Another change there means `verdict` (and `why`); a change anywhere else
        is no effect of this attack. False (and judged as any attack) when the
        controls saw no place, so nothing is ever left out unseen.
        """
        self.effect_means(verdict, why)
        self._at_the_gate = bool(self.gated_places)
        return self._at_the_gate

    def stages_at_the_gate(self) -> bool:
        """The attack runs the action's setup calls after its snapshot: only the gated kind of change counts.

        What those calls change where the gated effect shows (a collection created, a draft staged)
        is the harness's own doing; the action acting is still vulnerable. False (judged as any
        attack) when the controls saw no place.
        """
        self._at_the_gate = bool(self.gated_places)
        self._staged_at_the_gate = self._at_the_gate
        return self._at_the_gate

    def at_the_gate(self, before: Mark, after: Mark) -> tuple[list[str], list[str]]:
        """(changes of the gated action's own kind and place, other changes at its places) between two marks."""
        places = [
            *disk_places(*self._disk(before, after), self.case.rel(self.case.directory)),
            *probe_places(before.probes, after.probes, self.bookkeeping),
        ]
        return at_the_gate(places, self.gated_places)

    def _disk(self, before: Mark, after: Mark) -> tuple[list[str], list[str]]:
        disk = diff(before.tree, after.tree)
        keep = [p for p in (*disk.removed, *disk.changed) if not is_ignored(p, self.bookkeeping)]
        return [p for p in disk.removed if p in keep], [p for p in disk.changed if p in keep]

    def changes(self, before: Mark, after: Mark) -> list[str]:
        """What counts as an effect between two marks, by the verdict's own rules (bookkeeping left out)."""
        counted, _ = probe_changes(before.probes, after.probes, self.bookkeeping)
        disk = diff(before.tree, after.tree)
        counted += [p for p in (*disk.removed, *disk.changed) if not is_ignored(p, self.bookkeeping)]
        return counted

    def root_files(self) -> dict[str, bytes]:
        """The root's small files now (`learn_grown` compares them): enough to tell a log that only grew."""
        return files(self.sandbox.root)

    def learn_grown(self, before: Mapping[str, bytes], why: str) -> list[str]:
        """Files of the root that only grew since `before` (appended to, or new) become bookkeeping.

        Only for a call that must not act: a log the target writes on every call, asked or not. The
        attack's own case files are what it acts on, never bookkeeping. Returns the names learned.
        """
        appended, _ = grown(before, files(self.sandbox.root))
        case = f"{self._case_name}/"
        learned = [
            f"root/{name}"
            for name in sorted(appended)
            if not name.startswith(case) and not is_ignored(f"root/{name}", self.bookkeeping)
        ]
        if learned:
            self.bookkeeping = (*self.bookkeeping, *learned)
            self.note(f"{', '.join(learned)}: {why}")
        return learned

    async def since_start(self) -> list[str]:
        """Every effect since the attack proper started (`start_attack`)."""
        assert self._before is not None
        return self.changes(Mark(dict(self._observed_before or {}), self._before), await self.mark())

    async def finish(self) -> None:
        """The attack's end: what the probes see now (the sandbox is snapshot with the transcript)."""
        self._observed_after = await self.observe() if self._before is not None else None

    @property
    def may_be_parked(self) -> bool:
        """Whether `settle` has anything to do: only a legacy connection parks a call at its question."""
        return any(conn.legacy for conn in self._used)

    async def settle(self) -> None:
        """After the transcript: a call still parked at a legacy question is cancelled by the person.

        It is given its time to end before the next attack starts, every connection at once
        (so the whole settles within one call timeout). What a cancel does is the consent
        family's to judge; here the attack that left the question open is already judged.
        """
        async with anyio.create_task_group() as settling:
            for conn in self._used:
                settling.start_soon(conn.settle)

    def changed_in_place(self, path: Path) -> None:
        """Record that `path` was rewritten in place: still the confirmed inode, not what was shown."""
        known = self.recorded(InPlace)
        self.record(InPlace((*(known.paths if known else ()), self.case.rel(path))))

    def restore_victim(self, path: Path | None = None) -> None:
        target = path or self.case.victim
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(VICTIM_TEXT)

    # -- what cannot be judged ---------------------------------------------

    async def wait_out(self, seconds: float) -> None:
        """Let `seconds` pass, as the attack must (an answer given after a lifetime); `bench` counts it."""
        self.waited += seconds
        timed = self.observer.clock.phase("waits") if self.observer is not None else nullcontext()
        with timed:
            await anyio.sleep(seconds)

    def transcript(
        self, precondition: Precondition, *, signatures: Signatures | None = None, upstream: str | None = None
    ) -> Transcript:
        """What the attack recorded; `signatures` and `upstream` are the session's (its controls', its profile's)."""
        after = self.sandbox.snapshot() if self._before is not None else None
        return Transcript(
            attack_id=self.spec.id,
            tool=self.plan.name,
            precondition=precondition,
            signatures=signatures,
            upstream=upstream,
            exchanges=tuple(self._exchanges),
            before=self._before,
            after=after,
            notes=(*self._notes, *(self.pages.lines if self.pages is not None else ())),
            setup_failure=self._setup_failure,
            not_applicable=self._not_applicable,
            findings=tuple(self._findings),
            finding_layer=self._finding_layer,
            observed_before=self._observed_before,
            observed_after=self._observed_after,
            bookkeeping=self.bookkeeping,
            mechanism=self.plan.mechanism.kind if self.plan.mechanism is not None else None,
            # Every era the attack drove, the primary's first (protocol-downgrade drives two).
            era=", ".join(dict.fromkeys([conn.era for conn in self._used])),
            effect_verdict=self._effect_verdict,
            case_dir=self.sandbox.case_dir(self._case_name),
            only_the_case_counts=self._only_the_case_counts,
            gate=(
                AtTheGate(
                    self.gated_places,
                    self._staged_at_the_gate,
                    tuple(sorted(self._staging_tools)),
                    self.gated_reworded,
                )
                if self._at_the_gate
                else None
            ),
            parts=tuple(self._parts.values()),
            effect_places=self.gated_places,
        )


def on_the_wire(responses: Mapping[str, Any]) -> dict[str, Any]:
    """Typed answers as the JSON a raw request carries."""
    return {k: v.model_dump(by_alias=True, mode="json", exclude_none=True) for k, v in responses.items()}


# A schema's scalar types, and the JSON values that are none of them.
_SCALARS = {"string", "integer", "number", "boolean"}
# The Python types of JSON's scalars: none of them is a Mapping or a list.
_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def malformed_call(
    schema: Mapping[str, Any], args: Mapping[str, Any], *, may_omit: Iterable[str] = ()
) -> str:
    """What is wrong with a call's `args` by its tool's input `schema`, in one line ("" if nothing).

    Only what no reading can excuse: a required argument left out (but those in `may_omit`, a
    mechanism's own, which attacks leave out on purpose), and an object or a list where the
    schema takes only a scalar (a challenge object where a string token belongs).
    """
    # Every call an attack sends is checked: a dict is told a Mapping without the ABC's own check.
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict | Mapping) else {}
    required = schema.get("required")
    skip = set(may_omit)
    for name in required if isinstance(required, list) else ():
        if isinstance(name, str) and name not in args and name not in skip:
            return f"the call left out {name!r}, which the tool's schema requires"
    for name, value in args.items():
        declared = properties.get(name)
        kinds = declared.get("type") if isinstance(declared, dict | Mapping) else None
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not isinstance(kinds, list) or not kinds or not set(kinds) <= _SCALARS:
            continue
        if type(value) in _JSON_SCALARS or not isinstance(value, dict | list | tuple | Mapping):
            continue
        shape = "an object" if isinstance(value, Mapping) else "a list"
        return f"the call sent {shape} as {name!r}, where the tool's schema takes {' or '.join(kinds)}"
    return ""


def with_learned(schema: Mapping[str, Any], learned: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """`schema` with the facets zero configuration learned from refusals added to its properties."""
    props = dict(schema.get("properties") or {})
    for arg, facets in learned.items():
        own = props.get(arg)
        props[arg] = {**(own if isinstance(own, Mapping) else {}), **facets}
    return {**schema, "properties": props}
