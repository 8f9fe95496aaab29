"""How many hostile names to generate, and from which seed.

One seed per run, printed, so a run can be repeated with `--mcp-seed`; each
attack derives its own from it and its id. Under `CI=true` (and no explicit
seed) the seed is fixed, so CI runs are derandomized.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import UsageError

# Per generated attack; the nine of them make well over 200 names a run.
DEFAULT_EXAMPLES = 25
CI_SEED = 0
# Candidates sent while shrinking one failure: a long name would otherwise
# cost a round trip per character.
MAX_SHRINK_TRIES = 100


@dataclass(frozen=True, slots=True)
class Generation:
    examples: int = DEFAULT_EXAMPLES
    seed: int = CI_SEED
    derandomized: bool = False
    # Round trips spent making a failing name smaller: 0 reports it as drawn (a test that reads
    # only that a flaw is found, where each round trip costs a person's step, need not pay for it).
    shrink_tries: int = MAX_SHRINK_TRIES

    def seed_for(self, attack_id: str) -> int:
        return self.seed ^ zlib.crc32(attack_id.encode())

    def describe(self) -> str:
        why = "derandomized because CI=true" if self.derandomized else f"repeat with --mcp-seed {self.seed}"
        return f"hostile names: {self.examples} generated per attack, seed {self.seed} ({why})"


def generation_for(examples: object, seed: object, environ: Mapping[str, str]) -> Generation:
    """From the options (or ini values, which arrive as strings) and the environment."""
    count = _integer("--mcp-examples", examples, DEFAULT_EXAMPLES)
    if count < 1:
        raise UsageError(f"--mcp-examples must be at least 1, got {count}")
    if seed is not None and seed != "":
        return Generation(count, _integer("--mcp-seed", seed, CI_SEED))
    if environ.get("CI", "").strip().lower() in ("true", "1", "yes"):
        return Generation(count, CI_SEED, derandomized=True)
    import random  # here: the plugin imports this module in every pytest run

    return Generation(count, random.SystemRandom().randrange(2**32))


def _integer(option: str, value: object, default: int) -> int:
    if value is None or value == "":
        return default
    try:
        return int(str(value))
    except ValueError:
        raise UsageError(f"{option} must be a whole number, got {value!r}") from None
