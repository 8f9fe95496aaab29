"""The `file` effect: a changed cell is named as the cell, and nothing outside the root is read."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path

import pytest
from probe_env import FakeEnv, observe

from mcp_confirm_audit.oracle.beneath import Unread, _why_not, relative_path
from mcp_confirm_audit.oracle.effect_spec import parse_effect
from mcp_confirm_audit.oracle.effects import ProbeSpec, build_probe, changes
from mcp_confirm_audit.oracle.kinds.file_rows import read_file


def file_spec(path: str) -> ProbeSpec:
    return parse_effect({"file": path}, "test.yaml")


def test_a_csv_cell_the_action_changed_is_named_as_that_cell(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs.csv"
    jobs.write_text("id,title,status\n1,paint,open\n2,fix,open\n3,ship,open\n")
    env, spec = FakeEnv(tmp_path), file_spec("jobs.csv")
    before = observe(spec, env)
    jobs.write_text("id,title,status\n1,paint,open\n2,fix,open\n3,ship,done\n")
    after = observe(spec, env)
    assert before[2] == {"id": "3", "title": "ship", "status": "open"}
    assert changes(spec.name, before, after) == ["file:jobs.csv[2].status"]


def test_a_csv_row_longer_than_its_header_keeps_its_extra_cells(tmp_path: Path) -> None:
    (tmp_path / "jobs.csv").write_text("id,status\n1,open,surplus\n")
    assert read_file(tmp_path, relative_path("jobs.csv")) == [
        {"id": "1", "status": "open", "_extra": ["surplus"]}
    ]


def test_json_jsonl_and_yaml_are_parsed(tmp_path: Path) -> None:
    (tmp_path / "ledger.json").write_text(json.dumps({"balance": 10, "payments": [{"id": 1}]}))
    (tmp_path / "log.jsonl").write_text('{"n": 1}\n\nnot json\n{"n": 2}\n')
    (tmp_path / "arm.yaml").write_text("joints: [0, 15]\nmoved: 2026-12-01\n")
    assert read_file(tmp_path, relative_path("ledger.json")) == {"balance": 10, "payments": [{"id": 1}]}
    assert read_file(tmp_path, relative_path("log.jsonl")) == [{"n": 1}, "not json", {"n": 2}]
    assert read_file(tmp_path, relative_path("arm.yaml")) == {"joints": [0, 15], "moved": "2026-12-01"}


def test_a_ledger_that_does_not_parse_is_compared_as_lines(tmp_path: Path) -> None:
    (tmp_path / "ledger.json").write_text('{"balance": 10,\n')
    assert read_file(tmp_path, relative_path("ledger.json")) == ['{"balance": 10,']


def test_other_text_is_lines_and_binary_is_a_digest(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\n")
    (tmp_path / "photo.jpg").write_bytes(b"\xff\xd8\xff\x00binary")
    assert read_file(tmp_path, relative_path("notes.txt")) == ["one", "two"]
    binary = read_file(tmp_path, relative_path("photo.jpg"))
    assert binary == {"sha256": hashlib.sha256(b"\xff\xd8\xff\x00binary").hexdigest(), "size": 10}
    (tmp_path / "photo.jpg").write_bytes(b"\xff\xd8\xff\x00binarz")
    assert changes("file:photo.jpg", binary, read_file(tmp_path, relative_path("photo.jpg"))) == [
        "file:photo.jpg.sha256"
    ]


def test_a_missing_file_is_none_and_its_creation_a_change(tmp_path: Path) -> None:
    spec, env = file_spec("out/receipt.json"), FakeEnv(tmp_path)
    assert observe(spec, env) is None
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "receipt.json").write_text('{"paid": true}')
    assert changes(spec.name, None, observe(spec, env)) == ["file:out/receipt.json"]


def test_a_file_larger_than_the_cap_is_compared_by_size_and_first_bytes(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * 100)
    value = read_file(tmp_path, relative_path("big.txt"), cap=10)
    assert value["size"] == 100
    assert "larger than 10 bytes" in value["note"]


@pytest.mark.parametrize("path", ["/etc/passwd", "../outside/secret.txt", "logs/../../x", ""])
def test_a_path_outside_the_root_is_refused_when_the_profile_is_read(path: str) -> None:
    with pytest.raises(Exception, match=r"profile test.yaml: effect .*(absolute|leaves the root|must be)"):
        file_spec(path)


def test_a_learned_spec_outside_the_root_is_refused_too() -> None:
    with pytest.raises(ValueError, match="leaves the root"):
        build_probe(ProbeSpec("file", "file:../x", {"path": "../x"}))


def test_a_symlink_out_of_the_root_is_not_followed(tmp_path: Path) -> None:
    # The target replaced its ledger with a link to a secret outside the sandbox:
    # the probe reports the link, and never a byte of what it points to.
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("private key\n")
    os.symlink(outside / "secret.txt", root / "ledger.json")
    value = observe(file_spec("ledger.json"), FakeEnv(root))
    assert value == {"unread": "symlink", "at": "ledger.json", "link": str(outside / "secret.txt")}
    assert "private key" not in json.dumps(value)


def test_a_folder_on_the_way_swapped_for_a_symlink_is_not_followed(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "ledger.json").write_text('{"secret": 1}')
    os.symlink(outside, root / "data")
    value = read_file(root, relative_path("data/ledger.json"))
    assert value == {"unread": "symlink", "at": "data", "link": str(outside)}


def test_a_fifo_is_reported_not_waited_on(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "ledger.json")
    assert read_file(tmp_path, relative_path("ledger.json")) == {"unread": "fifo", "at": "ledger.json"}


def test_a_root_reached_through_a_link_is_the_harness_own_and_is_followed(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "notes.txt").write_text("hello\n")
    os.symlink(tmp_path / "real", tmp_path / "root")
    assert read_file(tmp_path / "root", relative_path("notes.txt")) == ["hello"]


def test_a_file_the_os_refuses_to_open_is_reported_not_raised(tmp_path: Path) -> None:
    # A target may chmod what it owns; the suite may run as root, where no mode refuses,
    # so the refusal the OS would give is handed in as it would come.
    (tmp_path / "ledger.json").write_text("{}")
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        denied = PermissionError(errno.EACCES, "Permission denied")
        assert _why_not(fd, "ledger.json", "ledger.json", denied) == Unread("not readable", "ledger.json")
    finally:
        os.close(fd)
