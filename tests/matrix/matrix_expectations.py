"""Which layer of the careful reference server refuses each family.

The answer to "which layer refuses what" that the project exists to give,
shared by every test that audits the careful server.
"""

from __future__ import annotations

from mcp_confirm_audit.models import Layer

CAREFUL_LAYER = {
    "replay": Layer.TOOL,
    "cross-target": Layer.SDK_BOUNDARY,
    "forged-state": Layer.SDK_BOUNDARY,
    "fabricated-approval": Layer.TOOL,
    "consent": Layer.TOOL,
    "out-of-root": Layer.TOOL,
    "robustness": Layer.TOOL,
    "symlink-swap": Layer.TOOL,
    "parent-swap": Layer.TOOL,
    "identity-swap": Layer.TOOL,
    # It asks, about every hostile name, with a question that shows the name safely.
    "prompt-forging": Layer.TOOL,
    "double-spend": Layer.TOOL,
    # Replicas with keys of their own refuse each other's approvals at the boundary.
    "cross-replica": Layer.SDK_BOUNDARY,
    "expiry": Layer.SDK_BOUNDARY,
    # Over HTTP with bearer tokens, the boundary binds each state to the token's principal.
    "cross-principal": Layer.SDK_BOUNDARY,
    # Confirmations that are not MRTR (the rest do not apply to it; see CAREFUL_NOT_APPLICABLE):
    # the agent alone gets only the question; the other tool asks too; a client that
    # cannot be asked gets -32021.
    "self-approval": Layer.TOOL,
    "ungated": Layer.TOOL,
    "capability-downgrade": Layer.PROTOCOL,
}

# Families of another mechanism, not applicable to an MRTR tool: attack id -> what the reason says.
NOT_MRTR = {
    **{f"MCA-TOKMINT-00{n}": "confirms with mrtr" for n in (1, 2)},
    **{f"MCA-TOKREUSE-00{n}": "confirms with mrtr" for n in (1, 2, 3)},
    **{f"MCA-TOKOTHER-00{n}": "confirms with mrtr" for n in (1, 2)},
    # A wrong guess needs a token or pending id (test_confirmation_kinds.py proves the family).
    "MCA-BURN-001": "confirms with mrtr",
    # A staged item edited between approval and commit (test_two_servers.py proves the family).
    **{f"MCA-STAGED-00{n}": "confirms with mrtr" for n in (1, 2, 3)},
    # A stage whose stated amount decides whether a person is asked (test_stage_time_fields.py).
    **{f"MCA-STAGEDECL-00{n}": "confirms with mrtr" for n in (1, 2)},
    **{f"MCA-FLAGBYPASS-00{n}": "no boolean or enum argument" for n in (1, 2)},
    # A pending request left past its lifetime (tests/matrix/test_lapsed_request.py proves the family).
    "MCA-LAPSE-001": "confirms with mrtr",
    "MCA-LAPSE-002": "confirms with mrtr",
    "MCA-POLICY-001": "no agent-callable tool changes the gate's rules",
    # A command chained after one the gate lets through: delete_file runs no command line
    # (tests/matrix/test_chained_command.py proves the family on the shell reference server).
    **{f"MCA-CHAIN-00{n}": "runs no command line" for n in range(1, 8)},
    # A command's program spelled another way: the same (tests/matrix/test_spelled_program.py proves it).
    **{f"MCA-SPELL-00{n}": "runs no command line" for n in range(1, 3)},
    # URL-mode elicitation's families: a form has no page to open (tests/matrix/test_url_mode.py).
    **{
        attack: "not URL-mode elicitation"
        for attack in (
            "MCA-URLDATA-001",
            "MCA-URLPREAUTH-001",
            "MCA-URLCONSENT-001",
            "MCA-URLWHO-001",
            "MCA-URLBOUND-001",
        )
    },
    # No argument names who approves (tests/matrix/test_signoff.py proves the family).
    "MCA-APPROVER-001": "names who approves",
    # A person who never answers holds nothing open on an MRTR server (test_eras.py proves the family).
    "MCA-NOANSWER-001": "holds no call open on the server",
    # A change to the subject after the question needs a drift: call, and a file action has the swaps
    # instead (tests/matrix/test_subject_drift.py proves the family).
    "MCA-DRIFT-001": "no drift call",
    # Its MRTR tool cannot answer a legacy connection at all (-32603): the era's honest flow never
    # completes, so nothing there is refused (test_eras.py proves the family on servers of both eras).
    **{f"MCA-ERAS-00{n}": "completes no honest flow over 2025-11-25" for n in range(1, 6)},
    # The person's approvals elsewhere: an MRTR tool hands the agent none (test_elsewhere.py proves them).
    **{
        attack: "has no person's approval"
        for attack in (
            "MCA-OOBREPLAY-001",
            "MCA-OOBREPLAY-002",
            "MCA-OOBMOVE-001",
            "MCA-OOBSELF-001",
            "MCA-OOBLATE-001",
            "MCA-OOBWHO-001",
        )
    },
    # A person at a terminal of the server's: an MRTR question is on no terminal (test_type_ahead.py).
    "MCA-TYPEAHEAD-001": "not on a terminal of the server's",
}
