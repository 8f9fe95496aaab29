"""The human's second channel: what the harness does as the person would.

Two kinds of step: a `Command` run in the sandbox's root (`{root}`
substituted), or an `HttpCall` to an approval endpoint on this machine (`{url}`
the target's own base URL when it is served over HTTP). Both are bounded like
every round trip, and what they answer is evidence, never trusted to mean
anything. An HTTP step carries only the headers it names itself: the
credentials the profile gives the agent's connection are not the person's.
"""

from __future__ import annotations

import ipaddress
import re
import shlex
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import anyio
import httpx2

from ..profile import headers as http_headers
from ..profile.headers import Header

METHODS = ("POST", "PUT", "PATCH", "GET", "DELETE")
# What the harness fills in a step; anything else in braces is a typo.
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
URL_NAMES = ("url", "id")
# Evidence, not content: an endpoint's answer is read this far, and cut to _SAID on one line.
_KEPT = 4096
_SAID = 200


class HumanFailed(Exception):
    """The human's own channel (a command, an HTTP call) did not do what it should."""


@dataclass(frozen=True, slots=True)
class Command:
    """A command line the person runs, with `{id}` (and `{root}`)."""

    line: str
    # Put in after the line is split into words: an id the target chose never adds a word of its own.
    pending_id: str | None = None

    def with_id(self, pending_id: str) -> Command:
        return replace(self, pending_id=pending_id)

    def words(self, root: Path) -> list[str]:
        words = [word.replace("{root}", str(root)) for word in shlex.split(self.line)]
        return words if self.pending_id is None else [w.replace("{id}", self.pending_id) for w in words]

    def __str__(self) -> str:
        # For evidence only: what the person typed, as they would read it.
        return self.line if self.pending_id is None else self.line.replace("{id}", self.pending_id)


@dataclass(frozen=True, slots=True)
class HttpCall:
    """A request the person's own client sends: `{url}` and `{id}` in the URL, `{id}` in the body."""

    url: str
    method: str = "POST"
    json: Mapping[str, Any] | None = None
    # Never in a repr: they are credentials (see headers.py).
    headers: tuple[Header, ...] = ()

    def with_id(self, pending_id: str) -> HttpCall:
        body = None if self.json is None else _filled(self.json, pending_id)
        # Quoted in the URL: an id the target chose cannot add a path, a query or another host.
        return replace(self, url=self.url.replace("{id}", quote(pending_id, safe="")), json=body)


HumanStep = Command | HttpCall


@dataclass(frozen=True, slots=True)
class Where:
    """What a step is run with: the sandbox root, the bound, and the target's base URL (if it is served)."""

    root: Path
    timeout: float
    target_url: str | None = None


async def run(step: HumanStep, where: Where) -> str:
    """Take `step` on the person's channel: one line saying what was done and what came back."""
    if isinstance(step, Command):
        return await _command(step, where)
    return await _request(step, where)


def base_url(endpoint: object) -> str | None:
    """`http://host:port` of a connection's endpoint when it is a URL; None over stdio or in-process."""
    if not isinstance(endpoint, str) or not endpoint.startswith(("http://", "https://")):
        return None
    parts = urlsplit(endpoint)
    return f"{parts.scheme}://{parts.netloc}"


def url_problem(url: str) -> str | None:
    """Why `url` (a profile's template) is no approval URL the harness may call; None if it is."""
    unknown = sorted(set(_PLACEHOLDER.findall(url)) - set(URL_NAMES))
    if unknown:
        return f"names {{{unknown[0]}}}; the harness fills only {{url}} (the target's base URL) and {{id}}"
    if "{url}" in url:
        if not url.startswith("{url}") or url.count("{url}") > 1:
            return "may use {url} only at its start, e.g. '{url}/approvals/{id}'"
        rest = url[len("{url}") :]
        return (
            None
            if rest[:1] in ("", "/", "?")
            else "must go on with a path after {url}, e.g. '{url}/approvals/{id}'"
        )
    return loopback_problem(url)


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


async def _command(step: Command, where: Where) -> str:
    words, command = step.words(where.root), str(step)
    if not words:
        raise HumanFailed("the human's command is empty")
    try:
        with anyio.fail_after(where.timeout):
            done = await anyio.run_process(words, cwd=where.root, check=False, stderr=subprocess.STDOUT)
    except TimeoutError:
        raise HumanFailed(
            f"the human's command did not finish within {where.timeout:g}s: {command}"
        ) from None
    except OSError as exc:
        raise HumanFailed(f"the human's command could not run ({exc}): {command}") from None
    said = done.stdout.decode(errors="replace").strip()[:300]
    if done.returncode != 0:
        raise HumanFailed(f"the human's command exited {done.returncode}: {said}")
    return f"ran {command!r}: {said}"


async def _request(step: HttpCall, where: Where) -> str:
    url = step.url
    if "{url}" in url:
        if where.target_url is None:
            raise HumanFailed(
                f"the human's URL {url} names {{url}}, but the target is not served over HTTP: give its full URL"
            )
        url = url.replace("{url}", where.target_url)
    if problem := loopback_problem(url):
        raise HumanFailed(f"the human's URL {problem}")
    what = f"{step.method} {url}"
    sent = " ".join(f"({h.redacted})" for h in step.headers)
    late = f"the approval endpoint did not answer {what} within {where.timeout:g}s"
    try:
        # No proxy from the environment (it could take the request off this machine), no redirects
        # (one could too), and the bound on the whole exchange, not only on each read.
        with anyio.fail_after(where.timeout):
            async with (
                httpx2.AsyncClient(timeout=where.timeout, trust_env=False, follow_redirects=False) as client,
                client.stream(
                    step.method, url, json=step.json, headers=http_headers.as_dict(step.headers)
                ) as answer,
            ):
                status, body = answer.status_code, await _head(answer)
    except (TimeoutError, httpx2.TimeoutException):
        raise HumanFailed(late) from None
    except httpx2.HTTPError as exc:
        why = _one_line(str(exc)) or type(exc).__name__
        raise HumanFailed(f"the approval endpoint could not be reached ({why}): {what}") from None
    said = _one_line(http_headers.scrub(body.decode(errors="replace"), step.headers))[:_SAID]
    if not 200 <= status < 300:
        raise HumanFailed(f"the approval endpoint answered {what} with HTTP {status}: {said}")
    return f"{what}{' ' + sent if sent else ''}: HTTP {status} {said}".rstrip()


async def _head(answer: httpx2.Response) -> bytes:
    """The first bytes of an answer: evidence, so an endless body costs nothing."""
    kept = b""
    async for chunk in answer.aiter_bytes():
        kept += chunk
        if len(kept) >= _KEPT:
            break
    return kept[:_KEPT]


def _filled(value: Any, pending_id: str) -> Any:
    if isinstance(value, str):
        return value.replace("{id}", pending_id)
    if isinstance(value, Mapping):
        return {k: _filled(v, pending_id) for k, v in value.items()}
    if isinstance(value, list):
        return [_filled(v, pending_id) for v in value]
    return value


def _one_line(text: str) -> str:
    return " ".join(text.split())
