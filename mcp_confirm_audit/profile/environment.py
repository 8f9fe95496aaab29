"""The profile's `env:`: variables the target is started with, some of them secrets.

A value is a string (`${NAME}` taken from the harness's environment, as in
`headers:`), or `{value: "...", secret: true}` for a credential: a secret's
value is scrubbed, like every header value, from everything the harness keeps
or reports, the target's command line included (a server that also takes
the same token as `--token T`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from ..errors import UsageError
from .headers import expand

_FORM = "a mapping of names to strings, or to {value: '${TOKEN}', secret: true} for a credential"


@dataclass(frozen=True, slots=True)
class TargetEnv(Mapping[str, str]):
    """The variables (a read-only mapping, as before) and which of them hold a secret."""

    variables: Mapping[str, str] = field(default_factory=dict)
    secret_names: frozenset[str] = frozenset()

    def __getitem__(self, name: str) -> str:
        return self.variables[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.variables)

    def __len__(self) -> int:
        return len(self.variables)

    def __repr__(self) -> str:
        # Never a secret's value in a repr: a Profile may end up in a traceback.
        shown = {k: ("***" if k in self.secret_names else v) for k, v in self.variables.items()}
        return f"TargetEnv({shown!r})"

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(self.variables[name] for name in sorted(self.secret_names))

    def replaced(self, old: str, new: str) -> TargetEnv:
        """Every value with `old` replaced (the sink's URL put in), secrets still secret."""
        return TargetEnv({k: v.replace(old, new) for k, v in self.variables.items()}, self.secret_names)

    def at(self, root: str, port: int | None = None) -> TargetEnv:
        """The values as the target gets them: `{root}` (and, served over HTTP, `{port}`) put in."""
        env = self.replaced("{root}", root)
        return env.replaced("{port}", str(port)) if port is not None else env

    def with_secret(self, name: str, value: str) -> TargetEnv:
        return TargetEnv({**self.variables, name: value}, self.secret_names | {name})


def parse_env(raw: object, *, source: str, environ: Mapping[str, str]) -> TargetEnv:
    """A profile's `env:` mapping, `${NAME}`s filled in from `environ`."""
    if not isinstance(raw, Mapping):
        raise UsageError(f"profile {source}: 'env' must be {_FORM}, got {type(raw).__name__}")
    variables, secret = {}, set()
    for name, spec in raw.items():
        where = f"profile {source}: env {name}"
        if isinstance(spec, Mapping):
            unknown = sorted(set(spec) - {"value", "secret"})
            if (
                unknown
                or not isinstance(spec.get("value"), str | int)
                or not isinstance(spec.get("secret", False), bool)
            ):
                raise UsageError(f"{where} must be a string or {{value: '${{TOKEN}}', secret: true}}")
            value, is_secret = str(spec["value"]), bool(spec.get("secret", False))
        elif isinstance(spec, str | int) and not isinstance(spec, bool):
            value, is_secret = str(spec), False
        else:
            raise UsageError(f"{where} must be a string or {{value: '${{TOKEN}}', secret: true}}")
        variables[str(name)] = _expanded(value, str(name), source, environ)
        if is_secret:
            secret.add(str(name))
    return TargetEnv(variables, frozenset(secret))


def _expanded(value: str, name: str, source: str, environ: Mapping[str, str]) -> str:
    try:
        return expand(value, name=name, source=f"profile {source}", environ=environ)
    except UsageError as exc:
        # headers.expand speaks of a header; this is a variable of the target's environment.
        raise UsageError(str(exc).replace(f"header {name} names", f"env {name} names")) from None
