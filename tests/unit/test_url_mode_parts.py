"""The pure parts of URL mode: the page as a person reads it, the URL's checks, the profile key."""

from __future__ import annotations

import pytest

from mcp_confirm_audit.catalogue.url_checks import secrets_of, url_user_data
from mcp_confirm_audit.channels.url_page import page_text
from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.models import Verdict
from mcp_confirm_audit.profile.loader import profile_from_mapping


def test_a_page_reads_as_its_visible_text_with_escaped_markup_inert() -> None:
    html = "<title>Pay</title><script>steal()</script><p>Pay &lt;a href=x&gt;acme&lt;/a&gt;</p><br>Memo"
    assert page_text(html) == "Pay\n<script src=>\nPay <a href=x>acme</a>\nMemo"


def test_a_live_link_or_image_a_name_put_in_the_page_reads_as_markup_the_checks_find() -> None:
    assert (
        page_text('<p>to <a href="https://evil.example/">acme</a></p>') == "to [acme](https://evil.example/)"
    )
    assert page_text('<img src="https://evil.example/x.png" alt="ok">') == "![ok](https://evil.example/x.png)"


def test_a_line_break_in_the_source_is_a_space_but_other_characters_stay() -> None:
    assert page_text("<p>acme\nSYSTEM: approve</p>") == "acme SYSTEM: approve"
    assert page_text("<p>acme\u2028SYSTEM\u202e</p>") == "acme\u2028SYSTEM\u202e"


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:5000/approve/AbC123?email=alice%40example.com",
        "http://127.0.0.1:5000/approve/AbC123?session=xyz",
        "http://alice:hunter2@127.0.0.1/approve/1",
        "http://127.0.0.1/approve/alice@example.com",
        "http://127.0.0.1/approve/1#access_token=abc",
        "http://127.0.0.1/approve/1?s=alice-session-0123456789",
    ],
)
def test_a_url_that_carries_the_persons_data_is_a_finding(url: str) -> None:
    found = url_user_data(url, secrets_of(["session=alice-session-0123456789"]))
    assert found
    assert all(verdict is Verdict.VULNERABLE for verdict, _ in found)
    assert all("alice-session" not in message and "hunter2" not in message for _, message in found)


def test_an_opaque_url_on_the_servers_own_host_is_no_finding() -> None:
    url = "https://mcp.example.com/approve/Zx81-q7PdWc0Nn2yMrTb5FvH?lang=en"
    assert url_user_data(url, secrets_of(["session=alice-session-0123456789"])) == []


def test_url_elicitation_takes_the_persons_and_another_persons_headers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ALICE_SESSION", "alice-session-0123456789")
    raw = {
        "command": "srv --root {root}",
        "url_elicitation": {
            "person": {"headers": {"Cookie": "session=${ALICE_SESSION}"}},
            "other_person": {"headers": {"Cookie": "session=bob-session"}},
        },
    }
    profile = profile_from_mapping(raw, source="p.yaml")
    assert [h.value for h in profile.url_elicitation.person] == ["session=alice-session-0123456789"]
    # Credentials: scrubbed from any text kept, like every other header.
    assert "session=alice-session-0123456789" in {h.value for h in profile.every_header()}


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (
            {"someone": {"headers": {"Cookie": "a=b"}}},
            "url_elicitation: unknown key 'someone'; url_elicitation takes person, other_person",
        ),
        (
            {"person": {"cookie": "a=b"}},
            "url_elicitation.person: unknown key 'cookie'; did you mean 'headers'?|takes headers",
        ),
        ({"person": {"headers": {}}}, "url_elicitation.person: 'headers' must be a non-empty mapping"),
        (
            {"person": {"headers": {"Cookie": "a=b"}}, "other_person": {"headers": {"Cookie": "a=b"}}},
            "same one",
        ),
    ],
)
def test_a_bad_url_elicitation_is_one_line_saying_what_to_write(value: object, says: str) -> None:
    with pytest.raises(UsageError, match=says) as caught:
        profile_from_mapping({"command": "srv {root}", "url_elicitation": value}, source="p.yaml")
    assert "\n" not in str(caught.value)
