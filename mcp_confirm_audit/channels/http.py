"""`http:` the person's own client calls the approval endpoint, and `follow:` opens a link they were sent.

    - http: {url: "{url}/approvals/{id}", method: POST, json: {decision: approved},
             headers: {Authorization: "Bearer ${APPROVER_TOKEN}"}}
    - follow: {link: approve_url, method: POST,     # a URL saved by an earlier step
               headers: {Cookie: "session=${APPROVER_SESSION}"}}

Every request goes to this machine only (127.0.0.1, ::1, localhost), with no
proxy from the environment and no redirect followed (either could take it
elsewhere), within the step's bound. A request carries only the headers its
own step names: the credentials the agent's connection is given are not the
person's. A value put into a URL is quoted, so it adds no path, query or
host; a followed link is the one value taken whole, and checked like a URL.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import re
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Annotated, Any, ClassVar
from urllib.parse import quote, urlsplit

import anyio
from pydantic import Discriminator, Field, Tag, field_validator

from ..profile import headers as http_headers
from ..profile.contract import Keys, key
from ..profile.headers import Header
from .base import KEPT, SAID, HumanFailed, Save, StepKeys, Taken, Where, one_line, step_kind

if TYPE_CHECKING:
    import httpx2

METHODS = ("POST", "PUT", "PATCH", "GET", "DELETE")
URL_NAMES = ("url", "id")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, slots=True)
class HttpCall:
    """A request the person's own client sends: `{url}` and saved values in the URL and in the body."""

    url: str
    method: str = "POST"
    json: Mapping[str, Any] | None = None
    # Never in a repr: they are credentials (see headers.py).
    headers: tuple[Header, ...] = ()
    save: Save = field(default_factory=Save)
    # The URL is one saved value taken whole (`follow:`), not a template.
    link: str | None = None
    # With servers:, the server whose base URL `{url}` is (unset: the first).
    server: str | None = None

    @property
    def kind(self) -> str:
        return "follow" if self.link else "http"

    def with_id(self, pending_id: str) -> HttpCall:
        body = None if self.json is None else _filled(self.json, {"id": pending_id})
        # Quoted in the URL: an id the target chose cannot add a path, a query or another host.
        return replace(self, url=self.url.replace("{id}", quote(pending_id, safe="")), json=body)

    async def take(self, where: Where) -> Taken:
        if self.link is not None:
            url = where.values.get(self.link)
            if url is None:
                raise HumanFailed(f"no step before this one saved {self.link!r}, the link to follow")
            url = url.strip()
        else:
            url = where.filled_url(self.url)
        if problem := loopback_problem(url):
            raise HumanFailed(f"the human's URL {problem}")
        body = None if self.json is None else _filled(self.json, where.values)
        status, text = await _send(self.method, url, body, self.headers, where.timeout)
        said = one_line(http_headers.scrub(text, self.headers))[:SAID]
        what = f"{self.method} {url}"
        if not 200 <= status < 300:
            raise HumanFailed(f"the approval endpoint answered {what} with HTTP {status}: {said}")
        sent = " ".join(f"({h.redacted})" for h in self.headers)
        line = f"{what}{' ' + sent if sent else ''}: HTTP {status} {said}".rstrip()
        return Taken(line, self.save.values(text, f"the answer to {what}"), shown=text if self.link else None)


@functools.cache
def certificate_checks(*, trust_env: bool) -> ssl.SSLContext:
    """The client's default certificate checks, built once per process and shared by every client.

    Building them (reading and parsing the CA bundle) costs tens of milliseconds of CPU, more than a
    loopback exchange; a person's step or page opens a client for every exchange."""
    import httpx2  # here, not above: a profile's keys are read without the HTTP client

    return httpx2.create_ssl_context(trust_env=trust_env)


async def _send(
    method: str, url: str, body: Any, headers: tuple[Header, ...], timeout: float
) -> tuple[int, str]:
    import httpx2

    what = f"{method} {url}"
    try:
        # No proxy from the environment, no redirects, and the bound on the whole exchange.
        with anyio.fail_after(timeout):
            async with (
                httpx2.AsyncClient(
                    timeout=timeout,
                    trust_env=False,
                    follow_redirects=False,
                    verify=certificate_checks(trust_env=False),
                ) as client,
                client.stream(method, url, json=body, headers=http_headers.as_dict(headers)) as answer,
            ):
                status, kept = answer.status_code, await _head(answer)
    except (TimeoutError, httpx2.TimeoutException):
        raise HumanFailed(f"the approval endpoint did not answer {what} within {timeout:g}s") from None
    except httpx2.HTTPError as exc:
        why = one_line(str(exc)) or type(exc).__name__
        raise HumanFailed(f"the approval endpoint could not be reached ({why}): {what}") from None
    return status, kept.decode(errors="replace")


async def _head(answer: httpx2.Response) -> bytes:
    """The first bytes of an answer: evidence, so an endless body costs nothing."""
    kept = b""
    async for chunk in answer.aiter_bytes():
        kept += chunk
        if len(kept) >= KEPT:
            break
    return kept[:KEPT]


def base_url(endpoint: object) -> str | None:
    """`http://host:port` of a connection's endpoint when it is a URL; None over stdio or in-process."""
    if not isinstance(endpoint, str) or not endpoint.startswith(("http://", "https://")):
        return None
    parts = urlsplit(endpoint)
    return f"{parts.scheme}://{parts.netloc}"


def url_problem(url: str, names: tuple[str, ...] | None = URL_NAMES) -> str | None:
    """Why `url` (a profile's template) is no approval URL the harness may call; None if it is.

    `names`: the values it may name; None for a step in a list, whose names are checked there.
    """
    unknown = sorted(set(_PLACEHOLDER.findall(url)) - set(names or ()) - {"url"}) if names is not None else []
    if unknown and names is not None:
        known = ", ".join("{" + n + "}" for n in names if n != "url")
        return f"names {{{unknown[0]}}}; the harness fills only {{url}} (the target's base URL) and {known}"
    if "{url}" in url:
        if not url.startswith("{url}") or url.count("{url}") > 1:
            return "may use {url} only at its start, e.g. '{url}/approvals/{id}'"
        rest = url[len("{url}") :]
        return (
            None
            if rest[:1] in ("", "/", "?")
            else "must go on with a path after {url}, e.g. '{url}/approvals/{id}'"
        )
    if _PLACEHOLDER.match(url):
        return "must start with {url} or a loopback URL; to open a link a step read, use follow: {link: NAME}"
    return loopback_problem(_PLACEHOLDER.sub("x", url))


def loopback_problem(url: str) -> str | None:
    """Why `url` is not on this machine; None if it is. The harness's requests stay on loopback."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
        _ = parts.port  # a port that is not a number raises here
    except ValueError:
        return f"{url!r} is not a URL"
    if parts.scheme not in ("http", "https") or not host:
        return f"{url!r} is not an http:// or https:// URL"
    if host == "localhost":
        return None
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        return f"{url!r} is not on loopback (127.0.0.1, ::1, localhost): the harness sends requests to this machine only"
    return None


def _filled(value: Any, values: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), value)
    if isinstance(value, Mapping):
        return {k: _filled(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v, values) for v in value]
    return value


class RequestKeys(Keys):
    """A request the person's own client sends to an approval endpoint on this machine."""

    # The names the URL may say; None: a step of a list, whose names the list checks.
    url_names: ClassVar[tuple[str, ...] | None] = None

    url: str = key(
        ...,
        "The approval endpoint: {url} (at its start) is the target's base URL when it is served over HTTP; "
        "{id} and names saved by earlier steps are put in quoted; any fixed URL must be on loopback.",
        accepts="a URL starting with {url}, or a loopback URL",
        example="{url}/approvals/{id}",
    )
    method: str = key(
        "POST",
        "The request's method.",
        accepts=f"one of {', '.join(METHODS)}",
        example="POST",
    )
    body: dict[str, Any] | None = key(
        None,
        "A JSON body; a {NAME} in a string value is filled in ({id}: the pending id).",
        accepts="a mapping",
        example={"decision": "approved"},
        alias="json",
    )
    headers: dict[str, str] | None = key(
        None,
        "The person's own headers, ${NAME} read from the environment; never shown, and never the agent's.",
        accepts="a mapping of header names to strings",
        example={"Authorization": "Bearer ${APPROVER_TOKEN}"},
        secret=True,
    )

    @field_validator("url")
    @classmethod
    def _on_this_machine(cls, url: str) -> str:
        if problem := url_problem(url, cls.url_names):
            raise ValueError(f"the url {problem}")
        return url

    @field_validator("method")
    @classmethod
    def _a_method(cls, method: str) -> str:
        if method.upper() not in METHODS:
            raise ValueError(f"{method} is no method the harness sends")
        return method

    def call(self, where: str, save: Save | None = None) -> HttpCall:
        """The request; `where` names it if a header's `${NAME}` is not set."""
        sent: tuple[Header, ...] = ()
        if self.headers is not None:
            # The person's own credentials, read and redacted as the target's are; never the target's own.
            sent = http_headers.from_mapping(self.headers, source=where, environ=os.environ)
        body = None if self.body is None else dict(self.body)
        return HttpCall(self.url, self.method.upper(), body, sent, save or Save())


@step_kind("http")
class HttpStep(StepKeys):
    """`http:` a request to the approval endpoint."""

    http: RequestKeys = key(
        ...,
        "A request to the approval endpoint.",
        accepts="a mapping with url (and method, json, headers)",
        example={"url": "{url}/approvals/{id}", "json": {"decision": "approved"}},
    )

    reaches_server: ClassVar[bool] = True

    def step(self, where: str) -> HttpCall:
        return self.http.call(f"{where}.http", self.saved())


class LinkKeys(Keys):
    """A link an earlier step saved, and how to open it."""

    link: str = key(
        ...,
        "The name an earlier step saved the link under.",
        accepts="a NAME saved before",
        example="approve_url",
        min_length=1,
    )
    method: str = key("GET", "The request's method.", accepts=f"one of {', '.join(METHODS)}", example="POST")
    headers: dict[str, str] | None = key(
        None,
        "The person's browser session (a cookie, a bearer token): who follows the link, ${NAME} read from "
        "the environment; never shown, and never the agent's.",
        accepts="a mapping of header names to strings",
        example={"Cookie": "session=${APPROVER_SESSION}"},
        secret=True,
    )

    @field_validator("method")
    @classmethod
    def _a_method(cls, method: str) -> str:
        if method.upper() not in METHODS:
            raise ValueError(f"{method} is no method the harness sends")
        return method


def _link_form(value: Any) -> str:
    return "name" if isinstance(value, str) else "keys"


@step_kind("follow")
class FollowStep(StepKeys):
    """`follow:` the person opens a link they were sent."""

    follow: Annotated[
        Annotated[Annotated[str, Field(min_length=1)], Tag("name")] | Annotated[LinkKeys, Tag("keys")],
        Discriminator(_link_form),
    ] = key(
        ...,
        "Open a link an earlier step saved (checked like a URL: loopback only).",
        accepts="{link: NAME} (and method), or the NAME alone",
        example={"link": "approve_url", "method": "POST"},
    )

    reaches_server: ClassVar[bool] = True

    def step(self, where: str) -> HttpCall:
        said = LinkKeys(link=self.follow) if isinstance(self.follow, str) else self.follow
        sent: tuple[Header, ...] = ()
        if said.headers is not None:
            sent = http_headers.from_mapping(said.headers, source=f"{where}.follow", environ=os.environ)
        return HttpCall("", said.method.upper(), headers=sent, save=self.saved(), link=said.link)
