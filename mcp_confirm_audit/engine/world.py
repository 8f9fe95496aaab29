"""The world an audit's attacks run in: the target's processes and the sandbox they run on.

One event loop for the whole session, run by the thread that began the world (pytest's) whenever
it waits for something the loop does, and standing still in between; the sandbox and the target's
files in it; every process and client of the target, opened by `ConnectionKey` the first time
something asks and kept, opened again when lost; the processes
started ahead of need (another process, the other era's, a client that declares less); with
`isolation: process`, the fresh worlds started ahead and the used ones retired beside the next
attack; the zygote processes are forked from; the loopback sink; and, at the end, every process
reaped and every sandbox removed. It decides nothing about controls or attacks: the session
(`engine/session.py`) asks it for connections and for a fresh world.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import threading
from collections import deque
from collections.abc import Callable, Coroutine, Iterable, Mapping
from concurrent.futures import CancelledError, Future
from contextlib import AbstractAsyncContextManager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio

from ..confirmations.elicitation import legacy_version
from ..errors import UsageError
from ..oracle.sandbox import Sandbox
from ..profile.loader import Profile
from ..target import confine, netns, reaper
from ..target.driver import Connection, Sent, attach, stderr_tail
from ..target.routed import connect_servers
from ..target.zygote import Zygote, open_zygote, release_zygote, split_command
from .connection_key import PRIMARY, ConnectionKey
from .held import Held
from .phases import PhaseClock

if TYPE_CHECKING:
    from .peers import Identity

_T = TypeVar("_T")


def _declared(key: ConnectionKey) -> str:
    """The elicitation capability a connection's client declares."""
    return key.declares or "form+url"


def _forks(started: Profile, root: Path) -> tuple[tuple[str, ...], ...]:
    """Every command a zygote may fork for this target: the command, and each server's (`servers:`)."""
    commands = (
        [started.command, *(command for _, command in started.servers.commands[1:])]
        if (started.servers is not None)
        else [started.command]
    )
    return tuple(tuple(replace(started, command=c, servers=None).argv(root)) for c in commands)


# Seconds the world's close gives what is left on its loop to end once cancelled.
_STOP_GRACE = 5.0
# Signals whose Python handler raises in the main thread: Ctrl-C's KeyboardInterrupt, the plugin's SIGTERM.
_HELD_SIGNALS: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM)


def _run_until(
    loop: asyncio.AbstractEventLoop, future: asyncio.Future[_T], give_up: Callable[[], object] | None = None
) -> _T:
    """`loop.run_until_complete(future)`, a signal's exception raised once the loop stands still, not inside it.

    An exception a signal handler raises lands wherever the main thread is: inside the loop, in the
    middle of an SDK task's step or of anyio's bookkeeping, which it leaves half done (cancellations
    that never finish, a close that hangs). So while the loop runs on the main thread, a Python handler
    of SIGINT or SIGTERM is called from a stand-in that keeps what it raises, cancels what the loop was
    run for (`give_up`, else `future.cancel`), and raises it once the loop has stopped, as `asyncio.run`
    does with Ctrl-C. A handler that raises nothing (the plugin's SIGTERM while pytest finishes) cancels
    nothing. A second signal meanwhile raises at once: a person who presses Ctrl-C twice wants out now.
    """
    if threading.current_thread() is not threading.main_thread():
        return loop.run_until_complete(future)
    raised: list[BaseException] = []
    handlers: dict[int, Callable[[int, Any], Any]] = {}

    def stand_in(signum: int, frame: Any) -> None:
        try:
            handlers[signum](signum, frame)
        except BaseException as exc:
            if raised:
                raise
            raised.append(exc)
            loop.call_soon_threadsafe(give_up or future.cancel)

    for held in _HELD_SIGNALS:
        current = signal.getsignal(held)
        if callable(current):
            handlers[held] = current
            signal.signal(held, stand_in)
    try:
        return loop.run_until_complete(future)
    finally:
        for held, handler in handlers.items():
            signal.signal(held, handler)
        if raised:
            raise raised[0]


async def _in_a_scope(
    scopes: list[anyio.CancelScope], func: Callable[..., Coroutine[Any, Any, _T]], *args: Any
) -> _T:
    """`await func(*args)` in a cancel scope of its own, put in `scopes`; cancelled, it ends as a cancelled call."""
    with anyio.CancelScope() as scope:
        scopes.append(scope)
        return await func(*args)
    raise asyncio.CancelledError  # the scope was cancelled: the call was given up


def _done_on(loop: asyncio.AbstractEventLoop, future: Future[Any]) -> asyncio.Future[None]:
    """A future of the loop's that is done once `future` is, whatever it holds; cancelling it leaves `future` be."""
    done: asyncio.Future[None] = loop.create_future()

    def mark() -> None:
        if not done.done():
            done.set_result(None)

    def ended(_: Future[Any]) -> None:
        # A loop closed meanwhile (the world's close) has nobody waiting on it any more.
        with suppress(RuntimeError):
            loop.call_soon_threadsafe(mark)

    future.add_done_callback(ended)
    return done


def era_of(key: ConnectionKey, pinned: str) -> str | None:
    """The protocol a connection asks for; None: the profile's (`protocol:`)."""
    if key.era == "legacy":
        return legacy_version(pinned)
    if key.era == "modern":
        # Discovered, not pinned: pinned, the SDK adopts 2026-07-28 without asking the server, and a
        # server that only knows the handshake would look modern until its first call.
        return "auto"
    return None


@dataclass
class _Live:
    connection: Connection
    # Its context, held open on the session's loop (engine/held.py).
    held: Held[Connection]
    # The connection whose process this one attached to (its clients close with it).
    parent: str | None = None


@dataclass(frozen=True, slots=True)
class _World:
    """A sandbox and the one process of the target started on it (`isolation: process`)."""

    sandbox: Sandbox
    primary: _Live


# Worlds started ahead of the attack that will use them. A start that mostly waits (on a
# database, a model, the network) overlaps this many attacks; one that burns CPU is bounded by
# the cores whatever the number.
_WARM_WORLDS = 6
# Forked from a zygote, a start costs little CPU and mostly waits (the server's own start-up):
# more of them overlap, and the cores are still free for the attacks.
_WARM_FORKED = 16


@dataclass
class Stats:
    processes_started: int = 0
    attacks_run: int = 0
    # Requests sent, over every connection closed so far (tools/list included).
    round_trips: int = 0
    tool_listings: int = 0
    # Wall seconds the harness waited on its tools/call requests (each connection's, overlaps once).
    in_round_trips: float = 0.0
    # Seconds the attacks had to let pass by design (an expiry's lifetime).
    waited: float = 0.0
    notes: list[str] = field(default_factory=list)
    # Where the wall time went (what `bench` prints).
    clock: PhaseClock = field(default_factory=PhaseClock)
    # Every tools/call sent, in the order sent, when asked for (`bench` sends them again as its floor).
    sent: list[Sent] | None = None


class World:
    """The target's processes and the sandbox they run on: started, kept, replaced, reaped."""

    def __init__(self, profile: Profile, stats: Stats, *, shared_net: bool = False) -> None:
        # The profile as loaded: what the world reads of it (files, root, zygote, protocol) never changes.
        self.profile = profile
        # The confined target runs in the run's shared loopback-only network namespace (target/netns.py).
        self._shared_net = shared_net
        self.stats = stats
        self.sandbox: Sandbox | None = None
        # What {sink}, {root} (and other harness-provided names) stand for in templates.
        self.values: dict[str, Any] = {}
        # Files the confined target wrote outside its root: path as it saw it, size, the start of the text.
        self.outside_writes: list[dict[str, Any]] = []
        # The loopback sink a target's outbound requests go to, when the profile uses one.
        self.sink: Any = None
        self.zygote: Zygote | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # The thread that began the world: the only one that runs its loop (see `call`).
        self._driver: int | None = None
        self._live: dict[str, _Live] = {}
        # The person's pace learned for the tool audited now (engine/controls), None: the profile's.
        self._pace: float | None = None
        # Connections being opened in the background (see `start_ahead`).
        self._pending: dict[str, Future[Connection]] = {}
        self._lock = threading.Lock()
        self._in_background = threading.local()
        # `isolation: process`: the worlds started ahead, and the used ones being closed.
        self._warm: deque[Future[_World]] = deque()
        self._untouched = False
        self._retiring: list[threading.Thread] = []
        # Told each time a fresh world begins (`when_fresh`): what was kept of the last one names nothing here.
        self._on_fresh: list[Callable[[], None]] = []
        # How many attacks will run, when it is known (`expect`); None: no bound on the worlds ahead.
        self._attacks_expected: int | None = None
        self._zygote_lock = threading.Lock()
        # Each process is named with a number, in the order they start; a name in `_unnumbered`
        # (a process started ahead of need) is used as it is.
        self._numbered = 0
        self._unnumbered: set[str] = set()
        # Every process the harness starts gets the same fresh key, as replicas
        # behind one balancer would.
        self._started = profile
        if profile.shared_key_env:
            self._started = replace(
                profile, env=profile.env.with_secret(profile.shared_key_env, secrets.token_hex(32))
            )

    def call(self, func: Callable[..., Coroutine[Any, Any, _T]], *args: Any) -> _T:
        """`func(*args)` on the session's event loop, waited for.

        From the thread that began the world (pytest's), the loop is run right here until the call
        ends, and stops then: no other thread runs it, so an attack's hop costs no thread switch
        (two wake-ups of another core each way, 0.17 ms an attack on a 2-core VM, more than a
        tenth of the in-process audit's own work). From any other thread (a background start, a
        retiring world, a worker of the loop's), the call is handed to the loop, which runs it the
        next time the driving thread runs the loop: every wait of the driving thread runs it.
        Left waiting (Ctrl-C), the call is cancelled; one left running when the world closes is
        cancelled then.
        """
        loop = self._loop
        assert loop is not None
        if threading.get_ident() != self._driver:
            future = asyncio.run_coroutine_threadsafe(func(*args), loop)
            try:
                return future.result()
            except BaseException:
                future.cancel()
                raise
        scopes: list[anyio.CancelScope] = []
        task = loop.create_task(_in_a_scope(scopes, func, *args))

        def give_up() -> None:
            # The call's own scope, not the task: a section the call shields (a process being started,
            # then kept as the world's) ends first, as it does when an attack's budget runs out.
            if scopes:
                scopes[0].cancel()
            else:
                task.cancel()

        try:
            return _run_until(loop, task, give_up)
        except asyncio.CancelledError as exc:
            # As a call handed to the loop from another thread says it (an Exception, not the loop's own).
            raise CancelledError() from exc
        except BaseException:
            task.cancel()
            raise

    def _wait(self, future: Future[_T]) -> _T:
        """`future.result()`; from the driving thread, the loop runs meanwhile (what it waits for may need it)."""
        if threading.get_ident() == self._driver and not future.done():
            loop = self._loop
            assert loop is not None
            # Not `asyncio.wrap_future`: an interrupted wait would cancel `future` itself, and the thread
            # that fills it (a world started ahead) would fail to, and leave its process to nobody.
            _run_until(loop, _done_on(loop, future))
        return future.result()

    def _join(self, thread: threading.Thread) -> None:
        """`thread.join()`, the loop run meanwhile if this thread drives it (the thread may call it)."""
        ended: Future[None] = Future()

        def watch() -> None:
            thread.join()
            ended.set_result(None)

        if threading.get_ident() == self._driver:
            threading.Thread(target=watch, name="mcp-audit-join", daemon=True).start()
            self._wait(ended)
        thread.join()

    @property
    def started(self) -> Profile:
        """The profile the target's processes are started with (a short-lived one shortens its lifetime)."""
        return self._started

    def begin(self) -> None:
        """The event loop, the sink if the profile uses one, and the first sandbox (no process yet)."""
        self._loop = asyncio.new_event_loop()
        self._driver = threading.get_ident()
        self._start_sink()
        self._new_world()

    def untouched(self, sent: bool) -> None:
        """After an attack: one that sent nothing, with no other connection opened, leaves its world fresh.

        The next attack then gets that one rather than a world of its own.
        """
        with self._lock:
            self._untouched = not sent and set(self._live) == {PRIMARY.name}

    def fresh(self) -> None:
        """`isolation: process`: a world nobody used, unless the one in place still is."""
        if not self._untouched:
            self.isolate()

    def start_ahead(
        self,
        keys: Iterable[ConnectionKey],
        *,
        unnumbered: Iterable[str] = (),
        profiles: Mapping[str, Profile] | None = None,
    ) -> None:
        """Open these connections in the background, unless open or opening already.

        A name in `unnumbered` keeps its name rather than taking the next process number; one in
        `profiles` is started with that profile (the short-lived process's shorter lifetime).
        """
        self._unnumbered.update(unnumbered)
        for key in keys:
            if key.name not in self._live and key.name not in self._pending:
                self.start_in_background(key, (profiles or {}).get(key.name))

    def _start_sink(self) -> None:
        if not self.profile.uses_sink or self.sink is not None:
            return
        from ..oracle.kinds.sink import Sink  # only a target that sends requests out needs it

        self.sink = Sink()
        url = self.sink.url
        if self._shared_net:
            # The confined target reaches it at the same address, from the run's network namespace.
            netns.shared().reverse(self.sink.port)
        self.values["sink"] = url
        started = self._started
        self._started = replace(
            started,
            command=started.command.replace("{sink}", url),
            env=started.env.replaced("{sink}", url),
        )

    def _new_world(self) -> None:
        self._enter_world(self._world_sandbox())

    def _enter_world(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        # `{root}` in args: and setup:, for a tool that takes absolute paths or its directory.
        self.values["root"] = str(sandbox.root)

    def _world_sandbox(self) -> Sandbox:
        """A fresh sandbox, with the profile's files written into its root before the target starts."""
        served = self.profile.root if self.profile.is_url else None
        sandbox = Sandbox(served_root=Path(served) if served else None)
        for name, text in self.profile.files.items():
            path = sandbox.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            text = text.replace("{root}", str(sandbox.root))
            path.write_text(text.replace("{sink}", str(self.values.get("sink", "{sink}"))))
        return sandbox

    def _warm_world(self) -> Future[_World]:
        """`isolation: process`: the next attack's world, started beside the current one.

        Its own fresh sandbox and its own process, never used before and never used again: the
        process start (most of an isolated attack's cost) overlaps the attacks before it.
        """
        world: Future[_World] = Future()

        def start() -> None:
            self._in_background.active = True
            try:
                sandbox = self._world_sandbox()
                try:
                    world.set_result(_World(sandbox, self._open_process(PRIMARY, sandbox)))
                except BaseException:
                    self._discard_sandbox(sandbox)
                    raise
            except BaseException as exc:
                world.set_exception(exc)

        threading.Thread(target=start, name="mcp-audit-warm", daemon=True).start()
        return world

    def _discard_sandbox(self, sandbox: Sandbox) -> None:
        reaper.kill_now(lambda: reaper.working_in(sandbox.base))
        self._keep_outside_writes(sandbox)
        sandbox.remove()

    def _keep_outside_writes(self, sandbox: Sandbox | None) -> None:
        """What the target wrote outside the root (kept apart by its confinement), before the sandbox goes.

        A process forked from the zygote writes in the zygote's stand-ins: taken from there as well
        (and removed, so a zygote kept for the next audit does not show them again).
        """
        found = confine.outside_writes(sandbox.base) if sandbox is not None else []
        zygote = self.zygote
        if zygote is not None:
            found += confine.outside_writes(zygote.directory, take=True)
        with self._lock:
            known = {entry["path"] for entry in self.outside_writes}
            self.outside_writes += [entry for entry in found if entry["path"] not in known]

    def when_fresh(self, forget: Callable[[], None]) -> None:
        """Call `forget` each time a fresh world begins (`isolate`): a reply kept from the old one (a preview's
        change id) names what only the old target held."""
        self._on_fresh.append(forget)

    def isolate(self) -> None:
        """`isolation: process`: every connection closed, a fresh root, a fresh primary."""
        with self.stats.clock.phase("starts"):
            self._isolate_now()
        for forget in self._on_fresh:
            forget()

    def _isolate_now(self) -> None:
        self._untouched = False
        with self._lock:
            lives, self._live = self._live, {}
        old = self.sandbox
        assert old is not None
        # The world just used goes away beside the next attack: nothing waits for its processes.
        retiring = threading.Thread(
            target=self._retire, args=(lives, old), name="mcp-audit-retire", daemon=True
        )
        retiring.start()
        self._retiring.append(retiring)
        while len(self._warm) < max(1, self._worlds_ahead()):
            self._warm.append(self._warm_world())
        try:
            world = self._wait(self._warm.popleft())
        except BaseException:
            # The warm start failed: start it here, so its error is the one reported.
            self._new_world()
            self.ensure(PRIMARY)
        else:
            self._enter_world(world.sandbox)
            with self._lock:
                self._live[PRIMARY.name] = world.primary
        # This world's attack is not run yet: one fewer than that remain after it.
        if len(self._warm) < self._worlds_ahead() - 1:
            self._warm.append(self._warm_world())

    def _worlds_ahead(self) -> int:
        """How many worlds to have starting: never more than the attacks still to run would use."""
        ahead = _WARM_FORKED if self.profile.zygote else _WARM_WORLDS
        if self._attacks_expected is not None:
            ahead = min(ahead, self._attacks_expected - self.stats.attacks_run)
        return ahead

    def expect(self, attacks: int) -> None:
        """How many attacks this session will run (when known): worlds are not started for nothing."""
        self._attacks_expected = attacks

    def _retire(self, lives: dict[str, _Live], sandbox: Sandbox) -> None:
        """Close a used world: its clients before their processes, then its sandbox."""
        self._close_groups([[lives[name] for name in reversed(list(lives))]])
        self._discard_sandbox(sandbox)

    def start_in_background(self, key: ConnectionKey, profile: Profile | None = None) -> None:
        if not self.profile.zygote:
            # Nothing to start beside the loop (the process, or the in-process server, is started on
            # it either way): a task of the loop's own, and no thread waiting for it.
            assert self._loop is not None
            self._pending[key.name] = asyncio.run_coroutine_threadsafe(
                self._start_here(key, profile, background=True), self._loop
            )
            return
        pending: Future[Connection] = Future()

        def start() -> None:
            self._in_background.active = True  # beside the audit: no wall time of its own
            try:
                pending.set_result(self._ensure_now(key, profile=profile))
            except BaseException as exc:
                pending.set_exception(exc)

        self._pending[key.name] = pending
        threading.Thread(target=start, name=f"mcp-audit-start-{key.name}", daemon=True).start()

    def _adopt(self, name: str) -> None:
        """Wait for a connection being opened in the background; it is then live (or not)."""
        if (pending := self._pending.pop(name, None)) is not None:
            try:
                self._wait(pending)
            except Exception as exc:  # opened again, and reported, when it is needed
                self.stats.notes.append(f"starting {name} in the background: {exc}")

    def __enter__(self) -> World:
        """`begin`, for a caller that holds a world for a block: `close` at its end, however it ends."""
        self.begin()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self.stats.clock.phase("stops"):
            self._close_all()

    def _close_all(self) -> None:
        for name in list(self._pending):
            self._adopt(name)
        while self._warm:
            try:
                world = self._wait(self._warm.popleft())
            except BaseException:
                continue
            self._retire({PRIMARY.name: world.primary}, world.sandbox)
        for retiring in self._retiring:
            self._join(retiring)
        self._retiring.clear()
        with self._lock:
            lives, self._live = self._live, {}

        def group(root: str) -> list[_Live]:
            # Clients attached to a process close before it, as they opened after it.
            children = [n for n in reversed(list(lives)) if lives[n].parent == root]
            return [*(live for child in children for live in group(child)), lives[root]]

        groups = [group(name) for name in reversed(list(lives)) if lives[name].parent is None]
        if groups:
            self._close_groups(groups)
        if self._loop is not None:
            # Every connection is closed: what still runs on the loop is a call whose caller is gone
            # (a start the handshake of which Ctrl-C or SIGTERM interrupted, bounded only by a long
            # start_timeout). Cancelled, not awaited: a stopped run ends now, not at that bound.
            self._stop_loop(self._loop)
            self._loop = self._driver = None
        if self.zygote is not None:
            # After every process forked from it was closed: it kills whatever of them is left
            # (a kept one is left running; each of this audit's processes died with its relay).
            self._keep_outside_writes(None)
            release_zygote(self.zygote)
            self.zygote = None
        if self.sandbox is not None:
            # Last: a descendant that scrubbed its environment still works in the sandbox.
            sandbox = self.sandbox
            reaper.kill_now(lambda: reaper.working_in(sandbox.base))
            self._keep_outside_writes(sandbox)
            self.sandbox.remove()
            self.sandbox = None
        if self.sink is not None:
            if self._shared_net:
                netns.shared().release(self.sink.port)
            self.sink.close()
            self.sink = None

    @staticmethod
    def _stop_loop(loop: asyncio.AbstractEventLoop) -> None:
        """Cancel what is left on the loop, let it end, and close the loop (as `asyncio.run` ends)."""
        try:
            left = asyncio.all_tasks(loop)
            for task in left:
                task.cancel()
            if left:
                # Bounded: a task that will not end (a shielded wait on a process that ignores its stdin)
                # must not hold the run open; its processes are reaped with the sandbox either way.
                _run_until(loop, asyncio.ensure_future(asyncio.wait(left, timeout=_STOP_GRACE), loop=loop))
            _run_until(loop, asyncio.ensure_future(loop.shutdown_asyncgens(), loop=loop))
            _run_until(loop, asyncio.ensure_future(loop.shutdown_default_executor(), loop=loop))
        finally:
            loop.close()

    def ensure(
        self,
        key: ConnectionKey,
        *,
        profile: Profile | None = None,
        attach_to: ConnectionKey | None = None,
        identity: Identity | None = None,
    ) -> Connection:
        """The live connection of `key`, opened (or opened again, if lost) as needed."""
        self._adopt(key.name)
        connection = self._ensure_now(key, profile=profile, attach_to=attach_to, identity=identity)
        connection.answer_after = self._answer_after()
        return connection

    def stderr_tail(self, key: ConnectionKey) -> str:
        """How the stderr of the process behind `key`'s connection ended, secrets masked; "" if it has none.

        Nothing is opened: a connection lost (its process dead) still has its log, and none open has none.
        """
        with self._lock:
            live = self._live.get(key.name)
        if live is None:
            return ""
        connection = live.connection
        return stderr_tail(connection.stderr_path, secrets=connection.secrets)

    def pace(self, seconds: float | None) -> None:
        """The person's pace from now on: `seconds` the controls learned for one tool, None the profile's.

        Set on every connection open now and on every one opened later, until it is set again.
        """
        self._pace = seconds
        after = self._answer_after()
        with self._lock:
            lives = list(self._live.values())
        for live in lives:
            live.connection.answer_after = after

    def _answer_after(self) -> float:
        return self.profile.answer_after if self._pace is None else self._pace

    def _ensure_now(
        self,
        key: ConnectionKey,
        *,
        profile: Profile | None = None,
        attach_to: ConnectionKey | None = None,
        identity: Identity | None = None,
    ) -> Connection:
        name = key.name
        live = self._live.get(name)
        if live is not None and live.connection.alive:
            return live.connection
        if live is not None:
            self.stats.notes.append(f"{name} connection was lost; started the target again")
            self._drop(name)
        assert self._loop is not None
        assert self.sandbox is not None
        if attach_to is None:
            opened = self._open_process(key, self.sandbox, profile)
        else:
            endpoint = self.ensure(attach_to).endpoint
            opened = self._enter(self._attacher(key, endpoint, identity), attach_to.name)
        with self._lock:
            self._live[name] = opened
        return opened.connection

    def _attacher(
        self, key: ConnectionKey, endpoint: Any, identity: Identity | None
    ) -> AbstractAsyncContextManager[Connection]:
        """Another client of the process at `endpoint`, declaring what `key` declares (as `identity`, if any)."""
        era = era_of(key, self.profile.protocol)
        declares = _declared(key)
        if identity is None:
            return attach(self.profile, endpoint, key.name, protocol=era, elicitation=declares)
        return attach(
            self.profile,
            endpoint,
            key.name,
            headers=identity.headers,
            hint=identity.hint,
            protocol=era,
            elicitation=declares,
        )

    def _open_process(self, key: ConnectionKey, sandbox: Sandbox, profile: Profile | None = None) -> _Live:
        """A new process of the target on `sandbox`, and the harness's connection to it."""
        return self._enter(self._process_opener(key, sandbox, profile), None)

    def _process_opener(
        self, key: ConnectionKey, sandbox: Sandbox, profile: Profile | None = None
    ) -> AbstractAsyncContextManager[Connection]:
        """What starts a new process of the target on `sandbox` (numbered now) and connects to it.

        With `zygote:`, the zygote is started first if it is not running: that blocks.
        """
        name = key.name
        with self._lock:
            if name in self._unnumbered:
                label = name  # started ahead of need: the others keep the numbers they had without it
                self._unnumbered.discard(name)
            else:
                label = f"{name}-{self._numbered}"
                self._numbered += 1
            self.stats.processes_started += 1
        started = profile or self._started
        return connect_servers(
            started,
            sandbox.root,
            sandbox.logs,
            label,
            ablate=key.ablated,
            elicitation=_declared(key),
            protocol=era_of(key, self.profile.protocol),
            zygote=self._zygote_for(started, sandbox),
        )

    def _zygote_for(self, started: Profile, sandbox: Sandbox) -> Zygote | None:
        """`zygote:`: the one parent every process of the target is forked from, started the first time."""
        if not self.profile.zygote:
            return None
        with self._zygote_lock:
            if self.zygote is not None and not self.zygote.running:
                # Gone (killed by a process of the target, say): the worlds after it need another.
                self._keep_outside_writes(None)
                release_zygote(self.zygote)
                self.zygote = None
                self.stats.notes.append("the target's zygote exited; it was started again")
            if self.zygote is None:
                # With servers:, the first is the command; each other one is forked if it can be.
                if started.is_url or started.is_in_process or started.serves_http or started.tty:
                    raise UsageError(
                        "zygote: forks a Python target started over stdio; this one is not (a URL, py:, "
                        "{port} or tty:): remove zygote: from the profile"
                    )
                interpreter, _ = split_command(started.argv(sandbox.root))
                self.zygote = open_zygote(
                    interpreter,
                    self.profile.zygote,
                    {**os.environ, **started.env},
                    self.profile.start_timeout,
                    own_env=started.env,
                    confined=confine.Confined(
                        confine.regime(started),
                        (str(sandbox.base.parent),),
                        # {root} as the worlds' folder (writable already): the same for every audit, so a
                        # kept zygote is found again by the next one.
                        _forks(started, sandbox.base.parent),
                    ),
                )
            return self.zygote

    def _enter(self, opener: AbstractAsyncContextManager[Connection], parent: str | None) -> _Live:
        """Open a connection from a thread other than the loop's; its context is held on the loop."""
        held = Held(opener)
        if getattr(self._in_background, "active", False):
            connection = self._entered(held)
        else:
            with self.stats.clock.phase("starts"):
                connection = self._entered(held)
        return self._live_of(connection, held, parent)

    def _entered(self, held: Held[Connection]) -> Connection:
        """`held` begun on the loop and its entry waited for here.

        Given up on (Ctrl-C, SIGTERM), the entry is cancelled with the wait: the held task is no
        task of the loop's that the world's close would cancel.
        """
        assert self._loop is not None
        loop = self._loop
        loop.call_soon_threadsafe(held.start)
        try:
            return self._wait(held.entered)
        except BaseException:
            if not held.entered.done():
                # A loop closed already (RuntimeError) runs nothing of it any more.
                with suppress(RuntimeError):
                    loop.call_soon_threadsafe(held.cancel)
            raise

    def _live_of(self, connection: Connection, held: Held[Connection], parent: str | None) -> _Live:
        if self.stats.sent is not None:
            for part in (connection, *getattr(connection, "parts", {}).values()):
                part.sent = self.stats.sent
        return _Live(connection, held, parent)

    def _drop(self, name: str) -> None:
        """Close a connection and every client attached to its process."""
        with self._lock:
            children = [n for n, live in self._live.items() if live.parent == name]
        for child in children:
            self._drop(child)
        with self._lock:
            live = self._live.pop(name, None)
        if live is not None:
            self._close_groups([[live]])

    def _close_groups(self, groups: list[list[_Live]]) -> None:
        """Close connections from a thread other than the loop's, in one call to the loop.

        Each group in turn (a process's clients, then it), the groups side by side: each close
        waits for its own process to exit.
        """
        try:
            self.call(self._close_side_by_side, groups)
        except RuntimeError as exc:  # the loop is closed already: what it held went with it
            names = ", ".join(live.connection.name for members in groups for live in members)
            self.stats.notes.append(f"closing {names}: {type(exc).__name__}: {exc}")

    async def _close_side_by_side(self, groups: list[list[_Live]]) -> None:
        async with anyio.create_task_group() as closing:
            for members in groups:
                closing.start_soon(self._close_in_turn, members)

    async def _close_in_turn(self, lives: list[_Live]) -> None:
        for live in lives:
            await self._close(live)

    async def _close(self, live: _Live) -> None:
        with self._lock:
            self.stats.round_trips += live.connection.round_trips
            self.stats.tool_listings += live.connection.listings
            self.stats.in_round_trips += live.connection.waited_on
        try:
            await live.held.close()
        except Exception as exc:  # a dead target may fail to close cleanly; it is killed either way
            self.stats.notes.append(f"closing {live.connection.name}: {type(exc).__name__}: {exc}")

    async def open(
        self,
        key: ConnectionKey,
        *,
        profile: Profile | None = None,
        attach_to: ConnectionKey | None = None,
        identity: Identity | None = None,
    ) -> Connection:
        """`ensure`, for an attack on the loop: opened there, with no thread, unless something blocks."""
        live = self._live.get(key.name)
        if live is not None and live.connection.alive and key.name not in self._pending:
            # Open already (most asks are for a connection an earlier attack opened): no thread hop.
            return live.connection
        if key.name in self._pending:
            # Started in the background: waited for here, without blocking the loop.
            await self._adopted(key.name)
            live = self._live.get(key.name)
            if live is not None and live.connection.alive:
                live.connection.answer_after = self._answer_after()
                return live.connection
        parent = self._live.get(attach_to.name) if attach_to is not None else None
        if (
            live is None
            and attach_to is not None
            and parent is not None
            and parent.connection.alive
            and attach_to.name not in self._pending
        ):
            # Another client of a process running already: opened here, on the loop, no thread.
            return await self._attach_here(key, attach_to, parent.connection, identity)
        if live is None and attach_to is None and not self.profile.zygote:
            # Another process (or in-process server), with no zygote to start first: started here too.
            # As a worker thread's `ensure` is: an attack cancelled meanwhile is so once it is open and
            # kept (it closes with the others), not while it opens.
            with anyio.CancelScope(shield=True):
                connection = await self._start_here(key, profile)
            connection.answer_after = self._answer_after()
            return connection
        # Anything else may start a zygote or close a lost connection first (blocking calls): from a
        # worker thread, and its context held in a task of its own, not the attack's.
        return await anyio.to_thread.run_sync(
            lambda: self.ensure(key, profile=profile, attach_to=attach_to, identity=identity)
        )

    async def _adopted(self, name: str) -> None:
        """`_adopt`, on the loop: the start in the background waited for without blocking the loop."""
        if (pending := self._pending.pop(name, None)) is not None:
            try:
                with anyio.CancelScope(shield=True):
                    await asyncio.wrap_future(pending)
            except Exception as exc:  # opened again, and reported, when it is needed
                self.stats.notes.append(f"starting {name} in the background: {exc}")

    async def _attach_here(
        self, key: ConnectionKey, attach_to: ConnectionKey, parent: Connection, identity: Identity | None
    ) -> Connection:
        """`ensure(key, attach_to=...)` for a parent that is live, from the loop: the same connection."""
        # As a worker thread's `ensure` is: an attack cancelled meanwhile is so once the client is open
        # and kept (it closes with the others), not while it opens.
        with anyio.CancelScope(shield=True):
            connection = await self._held_here(
                key, self._attacher(key, parent.endpoint, identity), attach_to.name
            )
        parent.answer_after = connection.answer_after = self._answer_after()
        return connection

    async def _start_here(
        self, key: ConnectionKey, profile: Profile | None, *, background: bool = False
    ) -> Connection:
        """`ensure(key)` for a new process with no zygote to start, from the loop: the same connection."""
        assert self.sandbox is not None
        return await self._held_here(
            key, self._process_opener(key, self.sandbox, profile), None, background=background
        )

    async def _held_here(
        self,
        key: ConnectionKey,
        opener: AbstractAsyncContextManager[Connection],
        parent: str | None,
        *,
        background: bool = False,
    ) -> Connection:
        """`opener`'s connection, held from the loop itself (no thread hop), and kept as `key`'s."""
        held = Held(opener)
        held.start()
        if background:
            connection = await asyncio.wrap_future(held.entered)  # beside the audit: no wall time of its own
        else:
            with self.stats.clock.phase("starts"):
                connection = await asyncio.wrap_future(held.entered)
        opened = self._live_of(connection, held, parent)
        with self._lock:
            self._live[key.name] = opened
        return connection
