"""A file only the approved action creates is its effect; one the preview made or changed is not (issue 30).

`honest.Moved.with_made`, the rule the honest flow applies at the confirmation; proven on a
server in tests/matrix/test_zero_config_search.py (the outbox shape, both ways).
"""

from __future__ import annotations

from mcp_confirm_audit.confirmations.honest import Moved

PREVIEW_MADE_THE_LOG = Moved((), ("root/calls.log",), made=("root/calls.log",))
PREVIEW_CHANGED_THE_LOG = Moved(("root/calls.log",), ("root/calls.log",))
QUIET_PREVIEW = Moved((), ())


def test_an_outbox_the_confirmation_began_is_the_effect() -> None:
    sent = Moved((), ("root/sms.jsonl",), made=("root/sms.jsonl",), made_places=("added file:sms.jsonl",))
    counted = sent.with_made(QUIET_PREVIEW)
    assert counted
    assert counted.effect == ("root/sms.jsonl",)
    assert counted.places == ("added file:sms.jsonl",)


def test_a_log_the_preview_made_or_changed_is_not_the_effect_beside_a_made_file() -> None:
    confirm = Moved(
        ("root/calls.log",),
        ("root/calls.log", "root/outbox.jsonl"),
        places=("rewritten root/calls.log",),
        made=("root/outbox.jsonl",),
        made_places=("added file:outbox.jsonl",),
    )
    for preview in (PREVIEW_MADE_THE_LOG, PREVIEW_CHANGED_THE_LOG):
        counted = confirm.with_made(preview)
        assert counted.effect == ("root/outbox.jsonl",)
        assert counted.places == ("added file:outbox.jsonl",)


def test_nothing_made_leaves_the_step_as_it_was() -> None:
    confirm = Moved(("root/calls.log",), ("root/calls.log",), places=("rewritten root/calls.log",))
    assert confirm.with_made(PREVIEW_MADE_THE_LOG) is confirm
    assert not Moved((), ("root/calls.log",)).with_made(QUIET_PREVIEW)
