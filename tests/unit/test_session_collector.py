"""The garbage collector's older objects are set aside while sessions run, and given back after the last."""

from __future__ import annotations

import gc

from mcp_confirm_audit.engine.session import _Collector


def test_objects_are_frozen_while_any_session_holds_and_given_back_after_the_last() -> None:
    collector = _Collector()
    collector.hold()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0  # what the imports made is out of the collector's reach
        collector.hold()  # a second session (an ablation's, another target's)
        collector.release()
        # Still held by the first: not given back (the count would be 0). Not `>= frozen`: a frozen object
        # whose last reference goes (another thread's) leaves the permanent generation meanwhile.
        assert gc.get_freeze_count() > 0
    finally:
        collector.release()
    assert gc.get_freeze_count() == 0
    collector.release()  # a close without a start gives nothing back twice
    assert gc.get_freeze_count() == 0
