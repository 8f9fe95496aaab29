"""The `file` effect: a file under the root, read as rows and fields so one changed cell is named.

    effect:
      - file: jobs.csv      # -> file:jobs.csv[2].status when row 2's status changed

A CSV file is a list of rows keyed by its header, JSON and YAML are parsed,
JSON Lines is a list of parsed lines, other text a list of lines, anything
else its digest and size; a file that does not exist is None. Content that
does not parse as its extension says is compared as lines, so a half-written
ledger is still a change, not a crash.
"""

from __future__ import annotations

import csv
import datetime
import hashlib
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import anyio.to_thread
import yaml

from ..beneath import Unread, open_beneath, read_capped, relative_path
from ..effects import ProbeEnv, ProbeSpec, probe_kind

MAX_BYTES = 16 * 1024 * 1024
# Values a parsed YAML file may expand to (aliases share nodes; a copy would not).
MAX_NODES = 1_000_000


@dataclass(frozen=True, slots=True)
class FileProbe:
    name: str
    path: PurePosixPath

    async def observe(self, env: ProbeEnv) -> Any:
        return await anyio.to_thread.run_sync(read_file, env.root, self.path, abandon_on_cancel=True)


@probe_kind("file")
def file_probe(spec: ProbeSpec) -> FileProbe:
    return FileProbe(spec.name, relative_path(str(spec.options["path"])))


def read_file(root: Path, path: PurePosixPath, cap: int = MAX_BYTES) -> Any:
    """The JSON value of `root/path` (see the module's docstring)."""
    opened = open_beneath(root, path)
    if opened is None:
        return None
    if isinstance(opened, Unread):
        return opened.as_value()
    raw, size = read_capped(opened, cap + 1)
    if len(raw) > cap:
        return {
            "sha256_of_first_bytes": hashlib.sha256(raw[:cap]).hexdigest(),
            "size": size,
            "note": f"larger than {cap} bytes: only its size and its first {cap} bytes are compared",
        }
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is None or "\0" in text:
        return {"sha256": hashlib.sha256(raw).hexdigest(), "size": len(raw)}
    return parse_text(path.suffix.lower(), text)


def parse_text(suffix: str, text: str) -> Any:
    try:
        if suffix == ".csv":
            return _csv_rows(text)
        if suffix == ".json":
            return json.loads(text)
        if suffix == ".jsonl":
            return [_json_or_text(line) for line in text.splitlines() if line.strip()]
        if suffix in (".yaml", ".yml"):
            return jsonable(yaml.safe_load(text))
    except (ValueError, csv.Error, yaml.YAMLError, RecursionError):
        pass
    return text.splitlines()


def _csv_rows(text: str) -> list[dict[str, Any]]:
    # A row longer than the header keeps its extra cells under "_extra".
    reader = csv.DictReader(io.StringIO(text, newline=""), restkey="_extra")
    return [dict(row) for row in reader]


def _json_or_text(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return line


def jsonable(value: Any, budget: list[int] | None = None) -> Any:
    """A parsed YAML value as JSON would hold it: dates as ISO text, keys as text, sets as lists."""
    left = budget if budget is not None else [MAX_NODES]
    left[0] -= 1
    if left[0] < 0:
        raise ValueError("the document expands to too many values")
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, left) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v, left) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((jsonable(v, left) for v in value), key=repr)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return {"sha256": hashlib.sha256(value).hexdigest(), "size": len(value)}
    return value
