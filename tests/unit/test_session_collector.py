"""The garbage collector is set for an audit while sessions run (older objects set aside, the youngest
generation collected less often), and given back as it was after the last."""

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


def test_the_youngest_generation_is_collected_less_often_while_a_session_holds_and_as_before_after() -> None:
    before = gc.get_threshold()
    collector = _Collector()
    collector.hold()
    try:
        young, older, oldest = gc.get_threshold()
        assert young >= 50_000
        assert (older, oldest) == before[1:]
        collector.hold()
        collector.release()
        assert gc.get_threshold()[0] == young  # the first session still holds
    finally:
        collector.release()
    assert gc.get_threshold() == before


def test_a_collector_switched_off_by_the_caller_stays_off() -> None:
    before = gc.get_threshold()
    gc.set_threshold(0, *before[1:])
    try:
        collector = _Collector()
        collector.hold()
        assert gc.get_threshold()[0] == 0
        collector.release()
        assert gc.get_threshold()[0] == 0
    finally:
        gc.set_threshold(*before)
