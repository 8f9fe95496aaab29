"""Reference MCP server: a file change proposed in one call and applied, once asked, in another.

    py:targets/staging/change_server.py:build_server  (factory_args: flaws, confine, answer_timeout)

`propose_change(path, content)` stages new content for a file under the root and
returns its id (`change_id`) without asking anyone. `apply_change(change_id)` asks
the person over 2025-era elicitation (`elicitation/create` in the middle of the call)
whether to write it, naming the path (escaped) and the size; a yes writes it, once.
The file the action touches is named only in the proposal: the shape of
safe-migrations-mcp (propose a config edit, then apply it), issue 31's bypass 3.

Two careful styles, each confining the staged path before the person is asked:
  confine="stage"  propose_change resolves the path (realpath) and refuses one whose real
                   place is not under the root (commonpath), a link, or no regular file;
                   apply re-resolves it and refuses one that moved since ("REFUSED: ...")
  confine="apply"  propose_change takes any text and mints a numbered id (`chg-7`);
                   apply_change walks the path from the root one component at a time
                   (dirfd, O_NOFOLLOW) before asking and writes through the folder it
                   opened, refusing in words of its own ("cannot apply chg-7: ...")

Flaws (each removes one defence):
  stage-path-unconfined  neither call confines the staged path: apply writes ROOT/PATH as
                         given, so `../x`, an absolute path or a link takes it outside the root

Both careful styles write, after the yes, only the file the person was asked about, as it was
then: opened without following a link, the same device and inode, size and mtime (the swap
families, through the proposal); confined at apply, the path walked again must lead to the folder
held open since the question (parent-swap). An id nobody proposed, or one applied already, is refused. A client that declared no form
elicitation is never sent the question (-32021, as every careful reference server that
asks through a form).
"""

from __future__ import annotations

import itertools
import os
import secrets
import stat
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

import anyio

_REFERENCE = str(Path(__file__).resolve().parents[1] / "reference")
if _REFERENCE not in sys.path:
    sys.path.insert(0, _REFERENCE)

import prompt  # noqa: E402
from capabilities import require_form_elicitation  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.types import ToolAnnotations  # noqa: E402

FLAWS = ("stage-path-unconfined",)
STYLES = ("stage", "apply")
_FORM = {
    "type": "object",
    "properties": {
        "confirm": {"type": "boolean", "title": "Apply it", "description": "Tick to write the file"}
    },
    "required": ["confirm"],
}


class _Refused(Exception):
    """A path the careful server will not write: its text is the tool error."""


def build_server(
    root: str | Path = "",
    *,
    flaws: Collection[str] = (),
    confine: str = "stage",
    answer_timeout: float = 5.0,
) -> MCPServer:
    active = frozenset(flaws)
    unknown = sorted(active - set(FLAWS))
    if unknown:
        raise ValueError(f"unknown flaw(s) {unknown}; valid: {', '.join(FLAWS)}")
    if confine not in STYLES:
        raise ValueError(f"unknown confine style {confine!r}; valid: {', '.join(STYLES)}")
    home = os.path.realpath(root or ".")
    unconfined = "stage-path-unconfined" in active
    numbers = itertools.count(1)
    # change id -> (the path as proposed, or as resolved at stage time; the content)
    waiting: dict[str, tuple[str, str]] = {}
    server = MCPServer("change-reference")

    def refusal(change_id: str) -> str:
        return "REFUSED" if confine == "stage" else f"cannot apply {change_id}"

    async def propose_change(path: str, content: str) -> dict[str, Any]:
        """Stage new content for a file under the workspace; apply_change asks the person to write it."""
        if confine == "stage" and not unconfined:
            try:
                path = _resolved_inside(home, path)
            except _Refused as exc:
                raise ToolError(f"REFUSED: {exc}") from None
            change_id = f"change-{secrets.token_hex(6)}"
        else:
            change_id = f"chg-{next(numbers)}"  # FLAW stage-path-unconfined: whatever path was given
        waiting[change_id] = (path, content)
        return {"change_id": change_id, "status": "proposed"}

    server.add_tool(propose_change, annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))

    async def apply_change(change_id: str, ctx: Context) -> str:
        """Write a proposed change, once the person says yes."""
        if change_id not in waiting:
            raise ToolError(f"no change waiting with the id {change_id!r}")
        path, content = waiting[change_id]
        folder: int | None = None
        try:
            if unconfined:
                target = os.path.join(home, path)  # FLAW stage-path-unconfined: written where it points
            elif confine == "stage":
                if _resolved_inside(home, path) != path:
                    raise _Refused(f"{path} moved since it was proposed")
                target = path
            else:
                folder, target = _walk(home, path)
        except _Refused as exc:
            raise ToolError(f"{refusal(change_id)}: {exc}") from None
        # What the person is asked about, by identity: the file written after the yes must be this one.
        asked_about = None if unconfined else _identity(target, folder)
        try:
            require_form_elicitation(ctx.client_capabilities)
            shown = prompt.shown_name(os.path.relpath(os.path.join(home, path), home), sanitiser="careful")
            message = (
                f"Write {len(content.encode())} bytes to {shown} (change {change_id})? Tick to apply it."
            )
            session = ctx.request_context.session
            try:
                with anyio.fail_after(answer_timeout):
                    answer = await session.elicit_form(message, _FORM, related_request_id=ctx.request_id)
            except TimeoutError:
                return "asked; no answer (timeout): nothing written"
            if answer.action != "accept" or (answer.content or {}).get("confirm") is not True:
                return "the person said no: nothing written"
            if waiting.pop(change_id, None) is None:
                raise ToolError(f"change {change_id} was applied already")
            if unconfined:
                with open(target, "w", encoding="utf-8") as out:
                    out.write(content)
            else:
                try:
                    if confine == "stage" and _resolved_inside(home, path) != path:
                        raise _Refused(f"{path} moved while the person was asked")
                    if folder is not None:
                        _same_folder(home, path, folder)
                    _write_same(target, folder, asked_about, content)
                except _Refused as exc:
                    raise ToolError(f"{refusal(change_id)}: {exc}") from None
        finally:
            if folder is not None:
                os.close(folder)
        return f"applied {change_id}: wrote {len(content.encode())} bytes"

    server.add_tool(apply_change, annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True))
    return server


def _resolved_inside(home: str, path: str) -> str:
    """The real path `path` names under `home`: a regular file, or a new one in a folder there."""
    if "\x00" in path:
        raise _Refused("a path may not hold a NUL byte")
    joined = os.path.join(home, path)
    if os.path.islink(joined):
        raise _Refused(f"{_shown(path)} is a link")
    real = os.path.realpath(joined)
    if os.path.commonpath([home, real]) != home:
        raise _Refused(f"{_shown(path)} is outside the workspace")
    if os.path.lexists(real) and not os.path.isfile(real):
        raise _Refused(f"{_shown(path)} is not a regular file")
    if not os.path.isdir(os.path.dirname(real)):
        raise _Refused(f"{_shown(path)} is in no folder of the workspace")
    return real


def _walk(home: str, path: str) -> tuple[int, str]:
    """The folder (an open descriptor) holding `path`'s last component, and that name, walked without links."""
    if "\x00" in path:
        raise _Refused("the path holds a NUL byte")
    lexical = os.path.normpath(path if os.path.isabs(path) else os.path.join(home, path))
    inner = os.path.relpath(lexical, home)
    if inner == "." or inner == ".." or inner.startswith("../"):
        raise _Refused("the path is not a file inside the project folder")
    *folders, name = inner.split("/")
    fd = os.open(home, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for part in folders:
            try:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
            except OSError:
                raise _Refused(f"{_shown(part)} is no folder of the project (or a link)") from None
            os.close(fd)
            fd = nxt
        try:
            mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
        except FileNotFoundError:
            mode = stat.S_IFREG  # a new file in a folder of the project
        if not stat.S_ISREG(mode):
            raise _Refused(f"{_shown(name)} is not a plain file (a link, a folder or a device)")
    except BaseException:
        os.close(fd)
        raise
    return fd, name


def _identity(target: str, folder: int | None) -> tuple[int, int, int, int] | None:
    """The file as lstat sees it (device, inode, size, mtime), or None when it does not exist yet."""
    try:
        st = os.stat(target, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _same_folder(home: str, path: str, folder: int) -> None:
    """The path, walked again from the root, still leads to the folder held open since the question."""
    again, _ = _walk(home, path)
    try:
        now, held = os.fstat(again), os.fstat(folder)
    finally:
        os.close(again)
    if (now.st_dev, now.st_ino) != (held.st_dev, held.st_ino):
        raise _Refused("its folder was moved while the person was asked")


def _write_same(
    target: str, folder: int | None, asked_about: tuple[int, int, int, int] | None, content: str
) -> None:
    """Write `content` into the very file the person was asked about, as it was then.

    Never through a link, never into another file, never over content that changed since the question.
    """
    flags = (
        os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_CREAT | os.O_EXCL if asked_about is None else 0)
    )
    try:
        fd = os.open(target, flags, 0o644, dir_fd=folder)
    except OSError:
        raise _Refused("the file changed while the person was asked (a link, or gone)") from None
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        st = os.fstat(out.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise _Refused("the file is no longer a plain file")
        if asked_about is not None and (st.st_dev, st.st_ino) != asked_about[:2]:
            raise _Refused("the file was replaced while the person was asked")
        if asked_about is not None and (st.st_size, st.st_mtime_ns) != asked_about[2:]:
            raise _Refused("the file was changed while the person was asked")
        out.truncate(0)
        out.write(content)


def _shown(text: str) -> str:
    """A path as a refusal quotes it: escaped, and not thousands of characters long."""
    shown = prompt.shown_name(text, sanitiser="careful")
    return shown if len(shown) <= 120 else f"{shown[:60]}…{shown[-40:]}"
