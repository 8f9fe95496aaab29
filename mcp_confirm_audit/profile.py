"""Target profiles: what to launch and how to talk to it, as checked data.

A profile is optional: zero configuration discovers the tool, its path
argument and the path style. A profile pins what discovery would guess, or
says what it cannot (an answer template, the environment, a TTL flag).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from .errors import UsageError

ROOT_FROM = ("arg", "cwd")
PATH_STYLES = ("auto", "relative", "absolute")


@dataclass(frozen=True, slots=True)
class Profile:
    name: str = "target"
    command: str = ""
    # The target's version as the reports should name it, for servers that do
    # not say it themselves (e.g. the PyPI release a profile pins).
    version: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    # "arg": the command has a {root} placeholder. "cwd": the server works in
    # its current directory (which is the root; MCP_AUDIT_ROOT says it too).
    root_from: str = "arg"
    tool: str | None = None
    path_arg: str | None = None
    paths: str = "auto"
    extra_args: Mapping[str, Any] = field(default_factory=dict)
    answer: Mapping[str, Any] | None = None
    negative_answer: Mapping[str, Any] | None = None
    call_timeout: float = 15.0
    start_timeout: float = 20.0
    source: str = "--mcp-target"

    @property
    def is_url(self) -> bool:
        return self.command.startswith(("http://", "https://"))

    @property
    def is_in_process(self) -> bool:
        return self.command.startswith("py:")

    def argv(self, root: Path) -> list[str]:
        """The command line with the sandbox root put where the server takes it."""
        words = shlex.split(self.command)
        return [word.replace("{root}", str(root)) for word in words]


_KNOWN = {f for f in Profile.__dataclass_fields__ if f != "source"}


def load_profile(path: Path) -> Profile:
    try:
        raw = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise UsageError(f"profile {path} does not exist; pass a YAML file from targets/ or your own") from None
    except yaml.YAMLError as exc:
        line = getattr(getattr(exc, "problem_mark", None), "line", None)
        where = f" (line {line + 1})" if line is not None else ""
        raise UsageError(f"profile {path} is not valid YAML{where}: fix the syntax") from None
    if not isinstance(raw, Mapping):
        raise UsageError(f"profile {path} must be a mapping of settings, e.g. 'command: my-server --root {{root}}'")
    return profile_from_mapping(raw, source=str(path))


def profile_from_mapping(raw: Mapping[str, Any], *, source: str) -> Profile:
    unknown = sorted(set(raw) - _KNOWN)
    if unknown:
        raise UsageError(f"profile {source}: unknown key {unknown[0]!r}; known keys: {', '.join(sorted(_KNOWN))}")
    values: dict[str, Any] = {"source": source}
    for key, value in raw.items():
        values[key] = _checked(source, key, value)
    return Profile(**values)


def _checked(source: str, key: str, value: Any) -> Any:
    def fail(expected: str) -> UsageError:
        return UsageError(f"profile {source}: {key!r} must be {expected}, got {value!r}")

    if key in ("name", "command"):
        if not isinstance(value, str) or not value.strip():
            raise fail("a non-empty string")
    elif key in ("tool", "path_arg", "version"):
        if value is not None and not isinstance(value, str):
            raise fail("a string")
    elif key == "root_from":
        if value not in ROOT_FROM:
            raise fail(f"one of {', '.join(ROOT_FROM)}")
    elif key == "paths":
        if value not in PATH_STYLES:
            raise fail(f"one of {', '.join(PATH_STYLES)}")
    elif key == "env":
        if not isinstance(value, Mapping) or not all(isinstance(v, str | int) for v in value.values()):
            raise fail("a mapping of names to strings")
        return {str(k): str(v) for k, v in value.items()}
    elif key in ("extra_args", "answer", "negative_answer"):
        if value is not None and not isinstance(value, Mapping):
            raise fail("a mapping")
    elif key in ("call_timeout", "start_timeout"):
        if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
            raise fail("a positive number of seconds")
        return float(value)
    return value


def resolve_profile(profile: Profile | None, target: str | None, root_from: str | None) -> Profile:
    """Combine a profile with --mcp-target (which overrides its command) and check it can run."""
    result = profile or Profile()
    if target:
        result = replace(result, command=target, source="--mcp-target")
    if root_from:
        result = replace(result, root_from=root_from)
    if not result.command:
        raise UsageError("no target: pass --mcp-target 'server --root {root}' or a profile with a 'command'")
    if not result.is_url and not result.is_in_process:
        try:
            words = shlex.split(result.command)
        except ValueError as exc:
            raise UsageError(f"{result.source}: cannot split the command line ({exc}); check its quotes") from None
        if not words:
            raise UsageError(f"{result.source}: the command is empty")
        has_placeholder = any("{root}" in word for word in words)
        if result.root_from == "arg" and not has_placeholder:
            raise UsageError(
                f"{result.source}: the command has no {{root}} placeholder; put {{root}} where the server takes "
                "its directory (e.g. 'my-server --root {root}'), or pass --mcp-root-from cwd if it works in its "
                "current directory or reads MCP_AUDIT_ROOT"
            )
    return result
