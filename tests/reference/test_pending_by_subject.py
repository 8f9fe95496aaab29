"""The confirm-kinds pending store keyed by the subject (`--pending-key path`): careful as the random one.

A request staged under the path it names has no id of its own, so staging the same path again
must be a new request: a decision on the old one (the person's, or an agent's through the flawed
approve tool) never releases the new one, and what the person is shown and decides on is the
request last staged under that path (inbox_slots.newest_slot, read by approve_cli.py).
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType

import pytest
from rounds import import_by_path

KINDS = Path(__file__).resolve().parents[2] / "targets" / "confirm_kinds"


@pytest.fixture(scope="module")
def gates() -> ModuleType:
    sys.path.insert(0, str(KINDS))
    try:
        return import_by_path("confirm_kinds_gates_by_subject", KINDS / "gates.py")
    finally:
        sys.path.remove(str(KINDS))


@pytest.fixture(scope="module")
def inbox_slots() -> ModuleType:
    # What approve_cli.py imports to find the request: apart from the gates, so the person's command starts light.
    return import_by_path("confirm_kinds_inbox_slots", KINDS / "inbox_slots.py")


PATH = "001-case/names/a\nb.txt"


def test_a_path_staged_again_is_a_new_request_that_needs_a_decision_of_its_own(
    gates: ModuleType, inbox_slots: ModuleType, tmp_path: Path
) -> None:
    store = gates.PendingStore(tmp_path / "inbox", by_subject=True)
    assert store.stage("delete_file", PATH) == PATH  # the id handed out is the path itself
    store.card(PATH, "first")
    store.decide(PATH, "approved")
    assert store.release(PATH) == ("delete_file", PATH)
    with pytest.raises(gates.Refused, match="already executed"):
        store.release(PATH)
    # Staged again and approved, then staged once more before anything ran: each approval is of its request.
    store.stage("delete_file", PATH)
    store.card(PATH, "second")
    store.decide(PATH, "approved")
    store.stage("delete_file", PATH)
    store.card(PATH, "third")
    with pytest.raises(gates.Refused, match="awaiting the human's approval"):
        store.release(PATH)
    # The person's channel finds the request last staged under the path, and decides on it.
    newest = inbox_slots.newest_slot(tmp_path / "inbox", PATH)
    assert (tmp_path / "inbox" / f"{newest}.request").read_text() == "third"
    store.decide(PATH, "declined")
    with pytest.raises(gates.Refused, match="declined"):
        store.release(PATH)


def test_an_agent_approval_is_of_one_request_not_of_the_path(gates: ModuleType, tmp_path: Path) -> None:
    store = gates.PendingStore(tmp_path / "inbox", by_subject=True)
    store.stage("delete_file", PATH)
    store.approve_as_agent(PATH)  # FLAW agent-approval
    store.stage("delete_file", PATH)
    with pytest.raises(gates.Refused, match="awaiting the human's approval"):
        store.release(PATH)
