"""A form that makes the person say what and where: `py:targets/elsewhere/form.py:build_server`, in-process.

delete_file(path) asks (MRTR, a form) for a decision (`delete` or `keep`), the file's name, its path
as the call gave it and the folder the person answers from (the folder this script is in). An answer
naming anything else is refused: a profile's `answer:` or `negative_answer:` whose `{name}`, `{path}`
or `{profile_dir}` were passed on unfilled cannot approve, nor decline ("kept ..."), so
targets/elsewhere-placeholders-form.yaml proves each filled (tests/matrix/test_profile_placeholders.py).
Careful otherwise: the state is the server's own nonce, spent once, for that path; the file is deleted
beneath the root through descriptors that follow no link, and only if it is the file that was asked about.
"""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for _path in (str(_HERE), str(_HERE.parent / "reference")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import paths  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.server.request_state import RequestStateSecurity  # noqa: E402
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult  # noqa: E402

_FORM = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "title": "Delete or keep?", "enum": ["delete", "keep"]},
        "confirm_name": {"type": "string", "title": "Type the file's name"},
        "path": {"type": "string", "title": "Type its path, as asked"},
        "profile": {"type": "string", "title": "The folder you answer from"},
    },
    "required": ["decision", "confirm_name", "path", "profile"],
}


def build_server(root: str | Path) -> MCPServer:
    policy = paths.PathPolicy.create(root)
    asked: dict[str, tuple[str, paths.Target]] = {}
    server = MCPServer("elsewhere-form", request_state_security=RequestStateSecurity.ephemeral(ttl=300))

    def resolved(path: str) -> paths.Target:
        try:
            return policy.resolve(path)
        except paths.Refused as exc:
            raise ToolError(f"refused: {exc}") from None

    @server.tool()
    async def delete_file(path: str, ctx: Context) -> str | InputRequiredResult:
        """Delete one file under the root, once the person has said which, from where."""
        answer = (ctx.input_responses or {}).get("confirm")
        if answer is None:
            target = resolved(path)
            nonce = secrets.token_hex(16)
            asked[nonce] = (path, target)
            request = ElicitRequest(
                params=ElicitRequestFormParams(
                    mode="form",
                    message=f"Delete `{'/'.join(target.parts)}`? Type its name and path, and your folder.",
                    requested_schema=_FORM,
                )
            )
            return InputRequiredResult(input_requests={"confirm": request}, request_state=nonce)
        seen = asked.pop(ctx.request_state or "", None)
        if seen is None or seen[0] != path:
            raise ToolError("refused: that confirmation is unknown, spent, or for another file")
        if not isinstance(answer, ElicitResult) or answer.action != "accept":
            return f"left {path} alone"
        content = answer.content or {}
        script = Path(str(content.get("profile", ""))) / "elsewhere" / "form.py"
        if content.get("confirm_name") != Path(path).name or content.get("path") != path:
            raise ToolError("refused: the answer names another file")
        if not script.is_file() or not os.path.samefile(script, __file__):
            raise ToolError("refused: the answer comes from another folder")
        if content.get("decision") == "keep":
            return f"kept {path}: the person said keep"
        if content.get("decision") != "delete":
            raise ToolError("refused: the decision is neither delete nor keep")
        target = seen[1]
        try:
            paths.unlink_beneath(policy.root, target.parts, target.identity)
        except paths.Refused as exc:
            raise ToolError(f"refused: {exc}") from None
        return f"deleted {path}"

    return server
