"""What a style decides: how the name is written, the question around it, the refusal texts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import paths
import prompt

Effect = Literal["delete", "truncate"]
VERBS: dict[Effect, str] = {"delete": "delete", "truncate": "empty"}


@dataclass(frozen=True, slots=True)
class Style:
    escaping: prompt.Escaping
    # (the name as shown, the form kind, the effect, whether the name is named at all)
    question: Callable[[str, str, Effect, bool], str]
    # What the result says when the user did not confirm ("decline", "cancel", or
    # "keep" for an accepted no); a style may raise ToolError instead.
    not_confirmed: Callable[[Effect, str], str]
    # What the result says when it acted: (effect, name as shown, size in bytes).
    done: Callable[[Effect, str, int], str]
    # A single-use record of its own (tickets), instead of the shared nonce ledger.
    own_state: bool = False
    # What a refusal before asking says (the path given, the check's refusal); None: the check's words.
    input_refused: Callable[[object, paths.Refused], str] | None = None
