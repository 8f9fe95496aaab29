"""Which setup call argument names the action's file, for out-of-root through a setup call (issue 31, bypass 3)."""

from __future__ import annotations

from mcp_confirm_audit.profile.loader import SetupCall
from mcp_confirm_audit.techniques.out_of_root import staged_path


def test_a_setup_argument_that_is_the_case_file_is_found_with_its_spelling() -> None:
    first = SetupCall("login", {"user": "ops"})
    relative = SetupCall("propose_change", {"content": "x", "path": "{path}"}, {"change": "change_id"})
    absolute = SetupCall("propose_migration_or_edit", {"kind": "config", "path": "{root}/{path}"})
    assert staged_path((first, relative)) == (1, "path", False)
    assert staged_path((absolute,)) == (0, "path", True)


def test_a_path_the_operator_wrote_is_never_varied() -> None:
    # The operator's own file, or {path} inside a longer value: not the case file as the call takes it.
    assert staged_path((SetupCall("propose", {"path": "{root}/settings.json"}),)) is None
    assert staged_path((SetupCall("propose", {"path": "configs/{path}.bak"}),)) is None
    assert staged_path(()) is None
