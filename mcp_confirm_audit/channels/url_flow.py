"""The person behind a URL-mode elicitation: they open the page and complete it when they consent.

An `accept` to a URL-mode question means the person consented to open the page,
not that they finished it (MCP 2026-07-28). So when an honest client accepts,
the person it stands for has gone to the page and completed it: `Pages` does
that once per question (a `requestState` and its key), before the answer is
sent, and every later answer to the same question finds it done. A technique
that judges what happens when nobody completes the page, or someone else does,
answers with `person=False` and opens the page itself.

An MRTR question approved somewhere else (`confirmation.mrtr.human`: a link
posted to a webhook) is the same thing without a page in the question: once
per question, before the client's first retry that accepts it, the person
takes the profile's steps on their own channel (`Pages.elsewhere`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

import anyio

from ..models import Outcome, Response
from ..profile.url_mode import UrlPeople
from .human import HumanFailed, Step, Taken, Where, take_all
from .url_page import Browser, Visit, visit

_Content = TypeVar("_Content")
# Who opens a page, for the evidence; the agent's browser carries nothing of the person's.
PERSON = "the person"
OTHER_PERSON = "another person"
AGENT = "the agent"


def browsers(people: UrlPeople) -> dict[str, Browser]:
    """The browsers a profile names: the person's (always), another person's (if given), the agent's."""
    found = {PERSON: Browser(PERSON, people.person), AGENT: Browser(AGENT)}
    if people.other_person is not None:
        found[OTHER_PERSON] = Browser(OTHER_PERSON, people.other_person)
    return found


def url_questions(response: Response) -> dict[str, str]:
    """The URL-mode questions of a round that asked: key -> URL."""
    if response.outcome is not Outcome.INPUT_REQUIRED:
        return {}
    return {q.key: q.url for q in response.questions if q.url is not None}


def answer_content(url: str | None, content: _Content) -> _Content | None:
    """What an accept carries: nothing for a URL-mode question (the data never passes the client)."""
    return None if url is not None else content


class Pages:
    """The URL-mode questions one attack (or one tool's controls) was asked, and the person's visits."""

    def __init__(self, people: UrlPeople, timeout: float) -> None:
        self.browsers = browsers(people)
        self.timeout = timeout
        self._urls: dict[tuple[str | None, str], str] = {}
        self._done: dict[tuple[str | None, str], anyio.Event] = {}
        self.lines: list[str] = []
        # The person's steps elsewhere (an MRTR question approved by a link) and where they take them.
        self._steps: tuple[Step, ...] = ()
        self._where: Where | None = None
        self._asked: set[str] = set()
        self._approved: dict[str, anyio.Event] = {}
        # What the person's steps showed them (a webhook's body): the text a person read.
        self.shown: list[tuple[str, str]] = []

    def elsewhere(self, steps: tuple[Step, ...], where: Where) -> None:
        """The person approves each question by `steps` on their own channel, taken with `where`."""
        self._steps, self._where = steps, where

    def remember(self, response: Response) -> None:
        # Every reply of every attack passes here: one that asked nothing is left at once.
        if response.outcome is not Outcome.INPUT_REQUIRED:
            return
        for key, url in url_questions(response).items():
            self._urls.setdefault((response.request_state, key), url)
        if self._steps and response.request_state:
            self._asked.add(response.request_state)

    def url_of(self, state: str | None, key: str) -> str | None:
        return self._urls.get((state, key))

    async def open(self, url: str, who: str = PERSON, *, complete: bool, record: bool = True) -> Visit:
        """`who` opens `url`; with `complete`, submits its form. With `record`, every page seen goes into `lines`."""
        try:
            seen = await visit(url, self.browsers[who], self.timeout, complete=complete)
        except HumanFailed as exc:
            if record:
                self.lines.append(f"{who}: {exc}")
            raise
        if record:
            self.lines.extend(seen.lines())
        return seen

    async def before_answer(self, state: str | None, responses: Mapping[str, Any] | None) -> None:
        """The person completes every page an accept in `responses` consents to, once per question.

        Concurrent answers to one question (a race) wait for the one visit, so they all
        reach the server after the person did what they do.
        """
        if not self._urls and not self._asked:
            return  # no URL-mode question and none to approve elsewhere (most targets): nothing to visit
        accepts = any(getattr(a, "action", None) == "accept" for a in (responses or {}).values())
        if state is not None and state in self._asked and accepts:
            await self._approve_elsewhere(state)
        for key, answer in (responses or {}).items():
            url = self._urls.get((state, key))
            if url is None or getattr(answer, "action", None) != "accept":
                continue
            where = (state, key)
            if where in self._done:
                await self._done[where].wait()
                continue
            self._done[where] = anyio.Event()
            try:
                await self.open(url, complete=True)
            except HumanFailed:
                pass  # in `lines`; the server's answer to the accept says the rest
            finally:
                self._done[where].set()

    async def _approve_elsewhere(self, state: str) -> None:
        """The person's steps for the question `state` came with, once (a race's retries wait for them)."""
        if state in self._approved:
            await self._approved[state].wait()
            return
        self._approved[state] = anyio.Event()
        assert self._where is not None

        def kept(done: Taken) -> None:
            if done.said:
                self.lines.append(f"the person, on their own channel: {done.said[:160]}")
            if done.shown is not None:
                self.shown.append((done.medium, done.shown))

        try:
            await take_all(self._steps, self._where, kept)
        except HumanFailed as exc:
            self.lines.append(f"the person could not approve on their own channel: {exc}")
        finally:
            self._approved[state].set()
