"""Reference MCP server: a job tracker kept in a CSV file in its root, one status change per confirmation.

    python targets/jobs/server.py --root DIR [--flaw decline-acts] [--flaw no-ledger] [--flaw format-only-id]
                                  [--ids J|inv] [--id-refusals error|result]

The confirmed action edits one cell of one row of ROOT/jobs.csv (and bumps the
row's revision); no tool shows it, so the file is the only place it can be
seen. Every call is also logged to ROOT/jobs.log, which is bookkeeping. The
question quotes the job's title and the new status in a code span; the answer
is a one-field form; the request state is the SDK's sealed state around a
nonce spent on first use. An id must name a row: `--ids inv` names them `inv-0041`, `inv-0042`
(`J1`, `J2` by default), and `--id-refusals result` says an id is unknown in an ordinary result
(`{"ok": false, "error": ...}`), not as a tool error: another style of the same careful server.

Flaws (each removes one defence):
  decline-acts   a declined or cancelled question changes the status anyway
  no-ledger      the nonce is never spent: one approval changes the row again
  format-only-id a job id is only checked to start like one (J and digits, or inv- and four); an
                 unknown one is a new job, and the question shows the id as it was sent, unescaped
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import logging
import os
import re
import secrets
import sys
from pathlib import Path
from typing import Annotated, Literal

# The reference server's directory supplies the shared capability check.
_REFERENCE = str(Path(__file__).resolve().parents[1] / "reference")
if _REFERENCE not in sys.path:
    sys.path.insert(0, _REFERENCE)

from capabilities import require_form_elicitation  # noqa: E402
from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.server.request_state import RequestStateSecurity  # noqa: E402
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult  # noqa: E402
from pydantic import Field  # noqa: E402

FIELDS = ("id", "title", "status", "revision")
SEED = [("Ship the release notes", "todo"), ("Rotate the signing key", "todo")]
Status = Literal["done", "todo", "blocked"]
JobId = str  # annotated with the style's example id when the tool is made
FLAWS = ("decline-acts", "no-ledger", "format-only-id")
# Each style of id: the seed rows' ids, and the start the format-only-id flaw checks (no anchor at the end).
IDS = {
    "J": (("J1", "J2"), r"J[0-9]+", "J and digits, as J1"),
    "inv": (("inv-0041", "inv-0042"), r"inv-[0-9]{4}", "inv- and four digits, as inv-0041"),
}


def build_server(
    root: str | Path, *, flaws: frozenset[str] = frozenset(), ids: str = "J", id_refusals: str = "error"
) -> MCPServer:
    table = Path(root) / "jobs.csv"
    log = Path(root) / "jobs.log"
    seeded, shape, said = IDS[ids]
    if not table.exists():
        rows = [
            {"id": i, "title": t, "status": s, "revision": "1"}
            for i, (t, s) in zip(seeded, SEED, strict=True)
        ]
        _write(table, rows)
    issued: set[str] = set()
    server = MCPServer("jobs-reference", request_state_security=RequestStateSecurity.ephemeral(ttl=300))

    def note(**entry: object) -> None:
        with log.open("a") as out:
            out.write(json.dumps(entry) + "\n")

    def unknown(error: str) -> str:
        """An id no row has: a tool error, or (`--id-refusals result`) an ordinary result that says no."""
        if id_refusals == "result":
            return json.dumps({"ok": False, "error": error})
        raise ToolError(error)

    async def set_status(
        job_id: JobId,
        status: Status,
        ctx: Context,
    ) -> str | InputRequiredResult:
        """Change one job's status, after the user confirms."""
        note(tool="set_status", job=job_id, answered=bool(ctx.input_responses))
        rows = _read(table)
        row = next((r for r in rows if r["id"] == job_id), None)
        if row is None and "format-only-id" in flaws:
            # The flaw: the id's start is checked (no anchor at its end), and any such id is a new job.
            if not re.match(shape, job_id):
                return unknown(f"a job id is {said}")
            row = {"id": job_id, "title": "a new job", "status": "todo", "revision": "0"}
            rows.append(row)
        if row is None:
            return unknown(f"no job {job_id!r} in jobs.csv")
        answer = (ctx.input_responses or {}).get("change")
        if answer is None:
            require_form_elicitation(ctx.client_capabilities)  # -32021 to a client that cannot be asked
            nonce = secrets.token_hex(16)
            issued.add(nonce)
            fence = "`" * (max((len(run) for run in row["title"].split("`")[1::2]), default=0) + 1)
            question = f"Set job {row['id']} ({fence}{row['title']}{fence}) to `{status}`?"
            form = {"type": "object", "properties": {"yes": {"type": "boolean"}}, "required": ["yes"]}
            request = ElicitRequest(
                params=ElicitRequestFormParams(mode="form", message=question, requested_schema=form)
            )
            return InputRequiredResult(input_requests={"change": request}, request_state=nonce)
        if ctx.request_state is None or ctx.request_state not in issued:
            raise ToolError("that confirmation is unknown or already used")
        if "no-ledger" not in flaws:
            issued.discard(ctx.request_state)
        if not isinstance(answer, ElicitResult):
            raise ToolError("the answer is not an elicitation result")
        declined = answer.action != "accept" or (answer.content or {}).get("yes") is not True
        if declined and not ("decline-acts" in flaws and answer.action != "accept"):
            return "Left unchanged."
        row["status"], row["revision"] = status, str(int(row["revision"]) + 1)
        _write(table, rows)
        return f"Job {row['id']} is now {status}."

    # The example is the style's first id: set on the annotation itself, as the SDK reads it.
    example = Field(description="The job's id, as in jobs.csv", examples=[seeded[0]])
    set_status.__annotations__["job_id"] = Annotated[str, example]
    server.tool()(set_status)
    return server


def _read(table: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(table.read_text())))


def _write(table: Path, rows: list[dict[str, str]]) -> None:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=FIELDS)
    writer.writeheader()
    writer.writerows(rows)
    # Replaced whole, as spreadsheets and most trackers save: a new inode every time.
    tmp = table.with_suffix(".tmp")
    tmp.write_text(out.getvalue())
    os.replace(tmp, table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--flaw", action="append", default=[], choices=FLAWS)
    parser.add_argument("--ids", default="J", choices=sorted(IDS))
    parser.add_argument("--id-refusals", default="error", choices=["error", "result"])
    args = parser.parse_args()
    build_server(args.root, flaws=frozenset(args.flaw), ids=args.ids, id_refusals=args.id_refusals).run()


if __name__ == "__main__":
    # The SDK's default log handler renders every record with rich (a refusal's traceback
    # syntax-highlighted): CPU the audit waits on; a plain one says the same, and the SDK's own
    # basicConfig then leaves it in place.
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    main()
