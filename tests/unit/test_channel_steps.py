"""The person's steps: what each reads or does, what it saves, and one line for each way it fails.

Real subprocesses, a real loopback sink, a real pseudo-terminal with a real process on its other
end: nothing here is mocked.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from deadline import deadline

from mcp_confirm_audit.channels.base import HumanFailed, Place, Step, Where, take_all
from mcp_confirm_audit.channels.terminal import Answer, Pty
from mcp_confirm_audit.confirmations.pending import Pending
from mcp_confirm_audit.errors import UsageError
from mcp_confirm_audit.oracle.kinds.sink import Sink
from mcp_confirm_audit.profile.loader import profile_from_mapping


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _steps(raw: Any) -> tuple[Step, ...]:
    """The person's steps as a profile's `pending.human:` list says them, read by the profile's models."""
    pending = {"kind": "pending", "pending": {"human": raw}}
    stated = profile_from_mapping({"command": "srv {root}", "confirmation": pending}, source="p.yaml")
    assert isinstance(stated.confirmation, Pending)
    assert stated.confirmation.human is not None
    return stated.confirmation.human.approve


def _python(code: str) -> str:
    return shlex.join([sys.executable, "-c", code])


@pytest.mark.anyio
async def test_a_code_read_off_the_targets_stderr_goes_into_the_next_command_as_one_word(
    tmp_path: Path,
) -> None:
    output = tmp_path / "target.stderr"
    output.write_text("starting\npairing code 123456\nready\n")
    steps = _steps(
        [
            {"read": {"from": "stderr", "pattern": r"pairing code (\d{6})"}, "save": "code"},
            {
                "command": _python("import sys, json; print(json.dumps({'ref': sys.argv[1:]}))")
                + " {code} {id}",
                "save": {"evidence": "ref"},
            },
        ]
    )
    # An id the target chose, with spaces and a flag in it, stays one word.
    saved, taken = await take_all(steps, Where(tmp_path, 5.0, values={"id": "x --all"}, output=output))
    assert saved["code"] == "123456"
    assert json.loads(saved["evidence"]) == ["123456", "x --all"]
    assert taken[0].shown == "pairing code 123456"


@pytest.mark.anyio
async def test_the_webhook_for_this_action_is_read_at_the_sink_by_its_json_path(tmp_path: Path) -> None:
    with Sink() as sink:
        for rid in ("r-1", "r-2"):
            body = json.dumps({"request_id": rid, "links": {"approve": f"http://127.0.0.1:9/approve/{rid}"}})
            sent = urllib.request.Request(
                f"{sink.url}/hook", data=body.encode(), headers={"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(sent, timeout=deadline(5)):
                pass
        steps = _steps(
            [{"read": {"from": "sink", "json": "links.approve", "containing": "{id}"}, "save": "link"}]
        )
        saved, taken = await take_all(steps, Where(tmp_path, 5.0, values={"id": "r-1"}, sink=sink.requests))
    assert saved["link"] == "http://127.0.0.1:9/approve/r-1"
    assert taken[0].shown is not None
    assert '"r-1"' in taken[0].shown


@pytest.mark.anyio
async def test_a_message_that_never_comes_fails_the_step_within_its_bound(tmp_path: Path) -> None:
    steps = _steps([{"read": {"from": "file:outbox/card.txt", "pattern": "card (\\w+)"}, "save": "card"}])
    with pytest.raises(
        HumanFailed, match=r"nothing /card \(\\w\+\)/ reached the person on file:outbox/card.txt within 0.2s"
    ):
        await take_all(steps, Where(tmp_path, 0.2))


@pytest.mark.anyio
async def test_a_followed_link_must_stay_on_loopback(tmp_path: Path) -> None:
    steps = _steps(
        [{"read": {"from": "file:mail.json", "json": "link"}, "save": "link"}, {"follow": {"link": "link"}}]
    )
    (tmp_path / "mail.json").write_text(json.dumps({"link": "http://approvals.example.com/ok?id=1"}))
    with pytest.raises(HumanFailed, match="is not on loopback"):
        await take_all(steps, Where(tmp_path, 2.0))


@pytest.mark.anyio
async def test_a_signature_is_what_the_sign_command_prints_for_the_challenge(tmp_path: Path) -> None:
    steps = _steps(
        [{"sign": {"command": _python("import sys; print('signed:' + sys.argv[1])") + " {challenge}"}}]
    )
    saved, _ = await take_all(steps, Where(tmp_path, 5.0, values={"challenge": '{"nonce": "n1"}'}))
    assert saved == {"evidence": 'signed:{"nonce": "n1"}'}


@pytest.mark.anyio
async def test_the_person_answers_the_prompt_on_the_targets_own_terminal(tmp_path: Path) -> None:
    # A process whose controlling terminal is the pty asks on /dev/tty, as a terminal approver does.
    asker = (
        "import io; t = io.TextIOWrapper(open('/dev/tty', 'r+b', buffering=0)); "
        "t.write('Delete \"a.txt\"? allow? [y/N] '); t.flush(); print(t.readline().strip())"
    )
    pty = Pty()
    try:
        process = subprocess.Popen(
            pty.hosted([sys.executable, "-c", asker]), stdout=subprocess.PIPE, start_new_session=True
        )
        steps = _steps([{"terminal": {"expect": r"allow\? \[y/N\] ", "answer": "y"}}])
        _, taken = await take_all(steps, Where(tmp_path, 10.0, terminal=pty))
        out, _ = process.communicate(timeout=deadline(10))
    finally:
        pty.close()
    assert out.decode().strip() == "y"
    assert taken[0].medium == "terminal"
    assert taken[0].shown is not None
    assert 'Delete "a.txt"? allow? [y/N] ' in taken[0].shown


# A terminal approver as the type-ahead family finds it: `flush` throws away what was typed before the
# prompt (the careful way), else the first line already waiting is the answer.
_ASKS_WITH_FLUSH = (
    "import io, sys, termios; raw = open('/dev/tty', 'r+b', buffering=0); t = io.TextIOWrapper(raw); "
    "flush = sys.argv[1] == 'flush'; flush and termios.tcflush(raw.fileno(), termios.TCIFLUSH); "
    "t.write('Delete a.txt? allow? [y/N] '); t.flush(); print(t.readline().strip())"
)


def _typed_ahead(answer: str) -> tuple[Step, ...]:
    """The person's answer of a terminal step, typed before any question is shown."""
    (step,) = _steps([{"terminal": {"expect": r"allow\? \[y/N\] ", "answer": answer}}])
    assert isinstance(step, Answer)
    return (step.typed_ahead(),)


@pytest.mark.anyio
async def test_an_answer_typed_ahead_waits_unread_until_thrown_away(tmp_path: Path) -> None:
    # Nobody reads the terminal: the line typed ahead is there, whole, before the step returns.
    pty = Pty()
    try:
        (answer,) = _steps([{"terminal": {"expect": "allow", "answer": "y"}}])
        assert isinstance(answer, Answer)
        _, taken = await take_all((answer.typed_ahead(),), Where(tmp_path, deadline(5), terminal=pty))
        assert pty.unread() == 2
        assert taken[0].values == {"typed": "2"}
        assert "before any question was shown" in taken[0].said
        saved, _ = await take_all((answer.unread_after(),), Where(tmp_path, deadline(5), terminal=pty))
        assert saved == {"unread": "2"}
        assert pty.unread() == 0
    finally:
        pty.close()


@pytest.mark.anyio
@pytest.mark.parametrize(("asker", "reads"), [("reads-as-is", "y"), ("flush", "n")])
async def test_a_line_typed_before_the_prompt_answers_it_unless_the_asker_throws_it_away(
    tmp_path: Path, asker: str, reads: str
) -> None:
    # y is typed before the process even starts; the prompt is then answered n. The asker that reads its
    # terminal as it is takes the y it never showed a question for; the one that flushes first reads the n.
    pty = Pty()
    try:
        where = Where(tmp_path, deadline(10), terminal=pty)
        await take_all(_typed_ahead("y"), where)
        process = subprocess.Popen(
            pty.hosted([sys.executable, "-c", _ASKS_WITH_FLUSH, asker]),
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        if reads == "n":
            await take_all(_steps([{"terminal": {"expect": r"allow\? \[y/N\] ", "answer": "n"}}]), where)
        out, _ = process.communicate(timeout=deadline(10))
    finally:
        pty.close()
    assert out.decode().strip() == reads


@pytest.mark.anyio
async def test_an_answer_typed_ahead_without_a_terminal_says_to_set_tty(tmp_path: Path) -> None:
    with pytest.raises(HumanFailed, match="set tty: true in the profile"):
        await take_all(_typed_ahead("y"), Where(tmp_path, 1.0))


@pytest.mark.anyio
async def test_without_a_terminal_the_step_says_to_set_tty(tmp_path: Path) -> None:
    steps = _steps([{"terminal": {"expect": "allow", "answer": "y"}}])
    with pytest.raises(HumanFailed, match="set tty: true in the profile"):
        await take_all(steps, Where(tmp_path, 1.0))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([{"read": {"from": "stderr", "pattern": "code"}}], "saves nothing: add save: NAME"),
        (
            [{"read": {"from": "/etc/passwd", "pattern": "x"}, "save": "x"}],
            "'from' must be sink, stderr or stdout, or 'file:PATH'",
        ),
        ([{"read": {"from": "file:../x", "pattern": "x"}, "save": "x"}], "must name a file under the root"),
        ([{"read": {"from": "sink", "pattern": "("}, "save": "x"}], "is not a regular expression"),
        ([{"command": "approve {evidence}"}], "names {evidence}, which no step before it saves"),
        ([{"sign": {"command": "signer --key k"}}], "'command' must be a command line with {challenge}"),
        ([{"command": "a", "http": {"url": "{url}/x"}}], "must name one kind of step"),
        ([{"follow": {"link": "approve_url", "verb": "GET"}}], "unknown key 'verb'"),
        ([{"http": {"url": "http://10.0.0.1/approve"}}], "is not on loopback"),
        ([{"terminal": {"expect": "allow"}}], "terminal needs 'answer', text (or a number"),
        ([], "a list of one or more of the person's steps"),
    ],
)
def test_a_step_the_harness_cannot_take_is_one_line_saying_what_to_write(raw: Any, message: str) -> None:
    with pytest.raises(UsageError, match=r"^profile p\.yaml: confirmation\.pending[.:]") as caught:
        _steps(raw)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_new_keys_as_a_profile_states_them() -> None:
    profile = profile_from_mapping(
        {
            "command": "srv --root {root}",
            "tty": True,
            "confirmation": {
                "kind": "waits",
                "waits": {
                    "human": [{"terminal": {"expect": "allow", "answer": "y"}}],
                    "decline": [{"terminal": {"expect": "allow", "answer": "n"}}],
                },
            },
        },
        source="p.yaml",
    )
    assert profile.tty is True
    assert profile.confirmation is not None
    assert profile.confirmation.kind == "waits"
    with pytest.raises(UsageError, match="'tty' must be true or false"):
        profile_from_mapping({"command": "srv {root}", "tty": "yes"}, source="p.yaml")
    with pytest.raises(UsageError, match=r"pending.execute.args.evidence names \{evidence\}"):
        profile_from_mapping(
            {
                "command": "srv {root}",
                "confirmation": {
                    "kind": "pending",
                    "pending": {
                        "human": [{"command": "approve {id}"}],
                        "execute": {"tool": "confirm", "args": {"evidence": "{evidence}"}},
                    },
                },
            },
            source="p.yaml",
        )


def _steps_on(raw: Any) -> tuple[Step, ...]:
    """As `_steps`, with two servers, so a step may name one."""
    pending = {"kind": "pending", "pending": {"human": raw}}
    servers = {"stage": "stage {root}", "post": "post {root}"}
    stated = profile_from_mapping({"servers": servers, "confirmation": pending}, source="p.yaml")
    assert isinstance(stated.confirmation, Pending)
    assert stated.confirmation.human is not None
    return stated.confirmation.human.approve


@pytest.mark.anyio
async def test_a_step_that_names_a_server_reads_that_servers_output_and_no_other(tmp_path: Path) -> None:
    stage, post = tmp_path / "stage.stderr", tmp_path / "post.stderr"
    stage.write_text("approval code for inv_1: 424242\n")
    post.write_text("posted nothing\n")
    places = {"stage": Place(None, stage), "post": Place("http://127.0.0.1:9", post)}
    read = {"read": {"from": "stderr", "pattern": r"approval code for inv_1: (\d+)"}, "save": "code"}
    # The default output here is the post server's; a step that names the stage server reads there.
    where = Where(tmp_path, 0.2, output=post, servers=places)
    saved, _ = await take_all(_steps_on([{**read, "server": "stage"}]), where)
    assert saved == {"code": "424242"}
    with pytest.raises(HumanFailed, match="nothing /approval code"):
        await take_all(_steps_on([{**read, "server": "post"}]), where)
    with pytest.raises(HumanFailed, match="nothing /approval code"):
        await take_all(_steps_on([read]), where)
    assert where.on("post").target_url == "http://127.0.0.1:9"
    with pytest.raises(HumanFailed, match="names server 'gone', which this run did not start"):
        where.on("gone")


@pytest.mark.anyio
async def test_the_harness_changes_the_file_after_the_person_read_the_message_and_before_they_approve(
    tmp_path: Path,
) -> None:
    # A swap family over a waits flow: the person's reads first, then the change, then their answers.
    output = tmp_path / "target.stderr"
    output.write_text("approve deletion of victim.txt with code 424242\n")
    approvals = tmp_path / "approvals.log"
    approved_before_the_change: list[str] = []

    async def swapped() -> None:
        approved_before_the_change.append(approvals.read_text() if approvals.exists() else "")

    append = _python("import sys; open(sys.argv[1], 'a').write(' '.join(sys.argv[2:]) + '\\n')")
    steps = _steps(
        [
            {"read": {"from": "stderr", "pattern": r"code (\d{6})"}, "save": "code"},
            {"command": f"{append} {approvals} approved {{code}}"},
            {"command": f"{append} {approvals} again"},
        ]
    )
    saved, _ = await take_all(steps, Where(tmp_path, 5.0, output=output, before_answer=swapped))
    # Once, after the read (its code was saved) and before the first step that answers.
    assert saved == {"code": "424242"}
    assert approved_before_the_change == [""]
    assert approvals.read_text() == "approved 424242\nagain\n"


@pytest.mark.anyio
async def test_on_the_terminal_the_change_comes_between_the_prompt_and_the_answer(tmp_path: Path) -> None:
    # The asker says whether the harness's change was there before it asked, and after the answer.
    asker = (
        "import io, os, sys; before = os.path.exists(sys.argv[1]); "
        "t = io.TextIOWrapper(open('/dev/tty', 'r+b', buffering=0)); "
        "t.write('Delete a.txt? allow? [y/N] '); t.flush(); answer = t.readline().strip(); "
        "print(answer, before, os.path.exists(sys.argv[1]))"
    )
    change = tmp_path / "swapped"

    async def swapped() -> None:
        change.write_text("the harness's change\n")

    pty = Pty()
    try:
        process = subprocess.Popen(
            pty.hosted([sys.executable, "-c", asker, str(change)]),
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        steps = _steps([{"terminal": {"expect": r"allow\? \[y/N\] ", "answer": "y"}}])
        await take_all(steps, Where(tmp_path, 10.0, terminal=pty, before_answer=swapped))
        out, _ = process.communicate(timeout=deadline(10))
    finally:
        pty.close()
    assert out.decode().split() == ["y", "False", "True"]


@pytest.mark.anyio
async def test_a_credential_read_is_used_but_never_shown_in_any_steps_line(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text('{"port": 4242, "session_token": "tok-8f2e9a-never-shown"}')
    steps = _steps(
        [
            {
                "read": {"from": "file:manifest.json", "json": "session_token", "secret": True},
                "save": "session",
            },
            {"command": _python("import sys; print('opened', sys.argv[1])") + " http://x/{session}/{id}"},
        ]
    )
    saved, taken = await take_all(steps, Where(tmp_path, 5.0, values={"id": "r-1"}))
    assert saved["session"] == "tok-8f2e9a-never-shown"  # the next step had it
    said = " ".join(t.said for t in taken)
    assert "tok-8f2e9a" not in said, said
    assert "<secret, 22 characters>" in said
    assert "opened http://x/<secret>/r-1" in said
    assert taken[0].shown is None  # no question put to the person: nothing for the prompt checks
