"""review.md shows what a hostile target chose, but never renders it: no link, image or HTML comes of it.

Rendered with a real CommonMark renderer (markdown-it-py) with raw HTML on,
GFM tables, and GitHub-style autolinking of bare URLs: the strictest way a
reviewer's viewer could render the file. review.md has no link, image or
HTML of its own, so any such element in the render came from the target.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token

from mcp_confirm_audit.models import Effect, Layer, Result, Verdict
from mcp_confirm_audit.report import build_report
from mcp_confirm_audit.report.review_md import ReviewMarkdown, inert

SERVER = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"
LIVE = {"link_open", "image", "html_inline", "html_block"}
HOSTILE = [
    "[Click here](https://evil.example)",
    "<a href=https://evil.example>update</a>",
    "![x](https://evil.example/pixel.png)",
    "<img src=x onerror=alert(1)>",
    "<https://evil.example>",
    "https://evil.example/bare",
    "www.evil.com",
    "`` ` ``[tick](https://evil.example)",
    "line one\n\n<script>alert(1)</script>",
    "a | b | [c](https://evil.example)",
]


def result(attack_id: str, verdict: Verdict, layer: Layer | None, **changes: Any) -> Result:
    values: dict[str, Any] = {
        "id": attack_id,
        "family": "replay",
        "title": "A hostile target",
        "tool": "delete_file",
        "variant": "hostile",
        "severity": "high",
        "level": "MUST",
        "verdict": verdict,
        "layer": layer,
        "asked_user": True,
        "effect": Effect(),
        "reason": "",
        "evidence": (),
        "refs": ("SPEC: a requirement",),
        "remedy": "Spend the approval.",
        "owasp": ("MCP07",),
    }
    return Result(**{**values, **changes})


def renderer() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True, "linkify": True}).enable(["table", "linkify"])


def live_elements(markdown: str) -> list[str]:
    def walk(tokens: list[Token]) -> Iterator[Token]:
        for token in tokens:
            yield token
            yield from walk(token.children or [])

    return [f"{t.type}: {t.content or t.attrs}" for t in walk(renderer().parse(markdown)) if t.type in LIVE]


@pytest.mark.parametrize("text", HOSTILE)
def test_the_renderer_would_make_each_hostile_string_live_if_it_were_not_made_inert(text: str) -> None:
    # The check can fail: raw, each of these renders as a link, an image or HTML.
    assert live_elements(f"Why: {text}") != []
    assert live_elements(f"Why: {inert(text)}") == []
    assert live_elements(f"| a | b |\n|---|---|\n| {inert(text).replace('|', chr(92) + '|')} | x |") == []


def test_a_review_whose_every_target_string_is_hostile_renders_nothing_live() -> None:
    hostile = "; ".join(HOSTILE)
    target = {
        "command": HOSTILE[5],
        "profile": HOSTILE[0],
        "server": {"name": HOSTILE[3], "version": HOSTILE[0]},
        "tools": [HOSTILE[1]],
    }
    results = [
        result(
            "MCA-REPLAY-001",
            Verdict.VULNERABLE,
            Layer.NONE,
            tool=HOSTILE[1],
            reason=f"the attack took effect on disk: {hostile}",
            effect=Effect(removed=(HOSTILE[2],)),
            evidence=(f"[attack] x <- complete {hostile}", f"note: {hostile}", "```", "````"),
        ),
        result("MCA-XTARGET-004", Verdict.INCONCLUSIVE, None, tool=HOSTILE[1], reason=hostile),
    ]
    review = ReviewMarkdown().render(build_report(results, (), target))
    assert live_elements(review) == []
    assert "onerror=alert(1)" in review  # shown, not dropped


@pytest.mark.slow  # a real target process (tests/README.md)
@pytest.mark.usefixtures("forked_targets")
def test_the_review_of_a_prompt_forging_run_renders_no_element_from_the_target(
    pytester: pytest.Pytester,
) -> None:
    # The reference server with its question unsanitised: every hostile name,
    # fixed and generated, reaches the question and so the evidence. The run is in this process, its
    # target's processes forked from the SDK's zygote (tests/forking.py): what is read is the review.
    command = shlex.join([sys.executable, str(SERVER), "--root", "{root}", "--flaw", "unsanitised-question"])
    run = pytester.runpytest(
        "--mcp-target", command, "--mcp-report-dir", "out", "--mcp-examples", "5", "-k", "PROMPT"
    )
    assert run.ret == pytest.ExitCode.TESTS_FAILED
    review = (pytester.path / "out" / "review.md").read_text()
    assert "MCA-PROMPT-007" in review
    assert "[Click here](https:evil.example)" in review  # the hostile name is there, as text
    assert live_elements(review) == []


def test_inert_picks_a_fence_longer_than_any_backtick_run_and_escapes_line_breaks() -> None:
    assert inert("a ``` b") == "````a ``` b````"
    assert inert("`x`") == "`` `x` ``"
    assert inert("one\n\ntwo\u202e") == "`one\\x0a\\x0atwo\\u202e`"
    token: Any = renderer().parseInline(inert("a\n\n<b>"))[0].children[0]
    assert (token.type, token.content) == ("code_inline", "a\\x0a\\x0a<b>")
