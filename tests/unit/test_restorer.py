"""The restorer puts the victim back with the identity the user confirmed, and counts every effect.

Real files, a real watching thread: a second redemption that got past a
single-use check must find the very file the first one removed.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from deadline import deadline

from mcp_confirm_audit.oracle.restorer import Restorer
from mcp_confirm_audit.oracle.sandbox import identity_of


def victim_in(tmp_path: Path) -> tuple[Path, Path]:
    victim = tmp_path / "victim.txt"
    victim.write_text("victim: the file the user is asked about\n")
    return victim, tmp_path / "keep"


def test_a_removed_victim_comes_back_with_its_identity_and_is_counted(tmp_path: Path) -> None:
    victim, keep = victim_in(tmp_path)
    before = identity_of(victim)
    with Restorer(victim, keep) as restorer:
        os.unlink(victim)
    assert identity_of(victim) == before
    assert restorer.taken == 1


def test_a_victim_emptied_in_place_gets_its_bytes_and_times_back(tmp_path: Path) -> None:
    victim, keep = victim_in(tmp_path)
    before = identity_of(victim)
    with Restorer(victim, keep) as restorer:
        os.truncate(victim, 0)
        restorer.settle()
    assert identity_of(victim) == before
    assert victim.read_text().startswith("victim:")
    assert restorer.taken == 1


def test_a_victim_replaced_by_another_file_is_swapped_back(tmp_path: Path) -> None:
    victim, keep = victim_in(tmp_path)
    before = identity_of(victim)
    with Restorer(victim, keep) as restorer:
        impostor = tmp_path / "impostor"
        impostor.write_text("something else\n")
        os.replace(impostor, victim)
        restorer.settle()
    assert identity_of(victim) == before
    assert restorer.taken == 1


def test_every_one_of_several_removals_in_a_row_finds_the_victim_and_is_counted(tmp_path: Path) -> None:
    victim, keep = victim_in(tmp_path)
    removed = 0
    with Restorer(victim, keep) as restorer:
        # Another thread removes the victim as soon as it is back, five times:
        # what a server that lets five redemptions past its ledger would do.
        def remove_five() -> None:
            nonlocal removed
            while removed < 5:
                try:
                    os.unlink(victim)
                except FileNotFoundError:
                    continue
                removed += 1

        worker = threading.Thread(target=remove_five)
        worker.start()
        worker.join(timeout=deadline(30))
    assert not worker.is_alive()
    assert restorer.taken == 5
    assert victim.exists()


def test_an_untouched_victim_counts_nothing(tmp_path: Path) -> None:
    victim, keep = victim_in(tmp_path)
    with Restorer(victim, keep) as restorer:
        pass
    assert restorer.taken == 0


def test_a_write_in_place_in_two_steps_seen_between_them_is_one_effect(tmp_path: Path) -> None:
    # A writer that empties the file (O_TRUNC) and then writes it, looked at in between: what a
    # proxy writing its file in place does. The look must not put it back and count it, only for
    # the write that follows to be counted again.
    victim, keep = victim_in(tmp_path)
    before = identity_of(victim)
    with Restorer(victim, keep) as restorer:
        fd = os.open(victim, os.O_WRONLY | os.O_TRUNC)
        try:
            restorer.look()
            os.write(fd, b"written by the server\n")
        finally:
            os.close(fd)
        restorer.look()
        assert restorer.taken == 1
    assert identity_of(victim) == before
    assert victim.read_text().startswith("victim:")
    assert restorer.taken == 1


def test_two_writers_in_place_at_once_are_two_effects(tmp_path: Path) -> None:
    victim, keep = victim_in(tmp_path)
    with Restorer(victim, keep) as restorer:
        first = os.open(victim, os.O_WRONLY | os.O_TRUNC)
        second = os.open(victim, os.O_WRONLY | os.O_TRUNC)
        for fd in (first, second):
            os.write(fd, b"written\n")
            os.close(fd)
        restorer.settle()
    assert restorer.taken == 2


def test_a_file_opened_for_writing_and_closed_unchanged_counts_nothing(tmp_path: Path) -> None:
    # Opened read-write to take a lock, then closed: nothing was written.
    victim, keep = victim_in(tmp_path)
    with Restorer(victim, keep) as restorer:
        os.close(os.open(victim, os.O_RDWR))
        restorer.look()
        os.truncate(victim, 0)  # then emptied by name: one effect, not two
        restorer.settle()
    assert restorer.taken == 1
