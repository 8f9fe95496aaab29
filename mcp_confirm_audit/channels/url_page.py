"""A URL-mode elicitation's page, opened as a person's browser would (loopback only).

The server sends a URL; the person opens it, reads the page and submits its
form. The harness does the same with a browser of its own: one cookie jar per
visit, the headers that browser carries (a person's session, or none at all for
the agent), no redirect followed off this machine, every request bounded. What
the page showed is kept as the person reads it (`page_text`: the visible text,
a live link written as a markdown link), so the question's checks can judge it.
Nothing the page says is trusted to mean anything: the effect is what counts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import TYPE_CHECKING
from urllib.parse import urljoin

import anyio

from ..profile import headers as http_headers
from ..profile.headers import Header
from .http import certificate_checks
from .human import HumanFailed, loopback_problem

if TYPE_CHECKING:
    import httpx2

# A page is read this far: evidence, not content.
_KEPT = 65536
_SAID = 240
_REDIRECTS = 3
_SPACES = re.compile(r"[ \t\r\f]+")
# Elements whose text a person never sees.
_HIDDEN = frozenset({"script", "style", "template", "noscript"})
# Elements that break a line where they start and end.
_BLOCKS = frozenset(
    {"p", "div", "br", "h1", "h2", "h3", "h4", "h5", "h6", "li", "tr", "form", "section", "title", "pre"}
)
# Elements that load or run something a name could have put in the page: written out so the checks see them.
_LIVE = frozenset({"iframe", "object", "embed", "script", "frame"})


@dataclass(frozen=True, slots=True)
class Browser:
    """Who opens a page: `who` for the evidence, and the headers their browser carries (never shown)."""

    who: str
    headers: tuple[Header, ...] = ()


@dataclass(frozen=True, slots=True)
class Form:
    """The first form of a page: where it goes, how, and the fields a submit sends as they are."""

    action: str
    method: str
    fields: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Page:
    """One response on the way: the URL asked, its status and the text the person read."""

    method: str
    url: str
    status: int
    text: str
    form: Form | None = None
    location: str | None = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def line(self, who: str) -> str:
        said = " ".join(self.text.split())
        said = said if len(said) <= _SAID else said[:_SAID] + "…"
        return f"{who}: {self.method} {self.url} -> HTTP {self.status}: {said!r}"


@dataclass(frozen=True, slots=True)
class Visit:
    """Every page one browser saw, in order; `completed` when it submitted the form and got a 2xx."""

    browser: Browser
    pages: tuple[Page, ...] = field(default=())
    completed: bool = False

    @property
    def shown(self) -> str:
        """The first page's text: what the person read before doing anything."""
        return self.pages[0].text if self.pages else ""

    def lines(self) -> list[str]:
        return [page.line(self.browser.who) for page in self.pages]


async def visit(url: str, browser: Browser, timeout: float, *, complete: bool) -> Visit:
    """Open `url` as `browser`; with `complete`, submit the page's form as the person would."""
    import httpx2  # here, not above: a profile's keys are read without the HTTP client

    pages: list[Page] = []
    headers = http_headers.as_dict(browser.headers)
    async with httpx2.AsyncClient(
        follow_redirects=False, headers=headers, timeout=timeout, verify=certificate_checks(trust_env=True)
    ) as client:
        page = await _follow(client, "GET", url, None, pages, timeout)
        if not complete:
            return Visit(browser, tuple(pages))
        if not page.ok:
            return Visit(browser, tuple(pages))
        if page.form is None:
            # A page with nothing to submit: opening it is all the person can do.
            return Visit(browser, tuple(pages), completed=True)
        form = page.form
        done = await _follow(client, form.method, form.action, form.fields, pages, timeout)
        return Visit(browser, tuple(pages), completed=done.ok)


async def _follow(
    client: httpx2.AsyncClient,
    method: str,
    url: str,
    fields: tuple[tuple[str, str], ...] | None,
    pages: list[Page],
    timeout: float,
) -> Page:
    for _ in range(_REDIRECTS + 1):
        problem = loopback_problem(url)
        if problem is not None:
            raise HumanFailed(f"the person cannot open the page: {problem}")
        page = await _request(client, method, url, fields, timeout)
        pages.append(page)
        if page.location is None:
            return page
        method, url, fields = "GET", urljoin(url, page.location), None
    raise HumanFailed(f"the page at {url} redirected more than {_REDIRECTS} times")


async def _request(
    client: httpx2.AsyncClient,
    method: str,
    url: str,
    fields: tuple[tuple[str, str], ...] | None,
    timeout: float,
) -> Page:
    import httpx2

    try:
        with anyio.fail_after(timeout):
            response = await client.request(method, url, data=dict(fields) if fields is not None else None)
            body = response.text[:_KEPT]
    except TimeoutError:
        raise HumanFailed(f"the page at {url} did not answer within {timeout:g}s") from None
    except httpx2.HTTPError as exc:
        raise HumanFailed(f"the page at {url} could not be opened: {type(exc).__name__}") from None
    location = response.headers.get("location") if 300 <= response.status_code < 400 else None
    reader = _Reader(url)
    reader.feed(body)
    reader.close()
    return Page(method, url, response.status_code, reader.text(), reader.form, location)


def page_text(html: str, url: str = "http://127.0.0.1/") -> str:
    """The page as a person reads it: visible text, a live link as `[text](href)`, an image as `![alt](src)`."""
    reader = _Reader(url)
    reader.feed(html)
    reader.close()
    return reader.text()


class _Reader(HTMLParser):
    def __init__(self, url: str) -> None:
        super().__init__(convert_charrefs=True)
        self._url = url
        self._out: list[str] = []
        self._hidden = 0
        self._link: tuple[str, list[str]] | None = None
        self.form: Form | None = None
        self._in_form = False
        self._fields: list[tuple[str, str]] = []
        self._form_start: tuple[str, str] | None = None
        self._submitted = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        given = {name: value or "" for name, value in attrs}
        if tag in _LIVE:
            self._out.append(f"<{tag} src={given.get('src') or given.get('data') or ''}>")
        if tag in _HIDDEN:
            self._hidden += 1
            return
        if tag in _BLOCKS:
            self._out.append("\n")
        if tag in ("a", "area") and "href" in given:
            self._link = (given["href"], [])
        elif tag == "img":
            self._out.append(f"![{given.get('alt', '')}]({given.get('src', '')})")
        elif tag == "form" and self.form is None and self._form_start is None:
            action = urljoin(self._url, given.get("action") or self._url)
            self._form_start = (action, (given.get("method") or "GET").upper())
            self._in_form = True
        elif self._in_form:
            self._field(tag, given)

    def _field(self, tag: str, given: dict[str, str]) -> None:
        name, kind = given.get("name"), given.get("type", "text").lower()
        if tag == "input" and name and kind in ("hidden", "text", "email", "number"):
            self._fields.append((name, given.get("value", "")))
        elif tag == "input" and name and kind in ("checkbox", "radio") and "checked" in given:
            self._fields.append((name, given.get("value", "on")))
        elif tag in ("button", "input") and kind == "submit" and not self._submitted:
            # The person presses the first button, and only that one goes with the form.
            self._submitted = True
            if name:
                self._fields.append((name, given.get("value", "")))
            if tag == "input":
                self._out.append(f" [{given.get('value', 'Submit')}] ")

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self._hidden = max(0, self._hidden - 1)
            return
        if tag in ("a", "area") and self._link is not None:
            href, words = self._link
            self._out.append(f"[{''.join(words)}]({href})")
            self._link = None
        elif tag == "form" and self._in_form and self._form_start is not None:
            self.form = Form(*self._form_start, tuple(self._fields))
            self._in_form = False
        if tag in _BLOCKS:
            self._out.append("\n")

    def handle_data(self, data: str) -> None:
        if self._hidden:
            return
        data = data.replace("\n", " ")  # a line break in the source renders as a space
        if self._link is not None:
            self._link[1].append(data)
        else:
            self._out.append(data)

    def close(self) -> None:
        super().close()
        if self._in_form and self._form_start is not None and self.form is None:
            self.form = Form(*self._form_start, tuple(self._fields))

    def text(self) -> str:
        # HTML collapses only ASCII whitespace; any other character a name brought is shown as it is.
        lines = "".join(self._out).split("\n")
        kept = (_SPACES.sub(" ", line).strip(" ") for line in lines)
        return "\n".join(line for line in kept if line)
