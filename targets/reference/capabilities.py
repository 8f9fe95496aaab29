"""MRTR: a server MUST NOT send an input request the client has not declared; it answers -32021 instead.

Shared by every careful reference server that asks through a form.
"""

from __future__ import annotations

from mcp.shared.exceptions import MCPError
from mcp.types import MISSING_REQUIRED_CLIENT_CAPABILITY, ClientCapabilities

__all__ = ["require_form_elicitation"]


def require_form_elicitation(declared: ClientCapabilities | None) -> None:
    """Raise -32021 naming form elicitation, unless the client declared it."""
    elicitation = declared.elicitation if declared is not None else None
    # An empty `elicitation: {}` is form mode, as before modes existed.
    if elicitation is not None and (elicitation.form is not None or elicitation.url is None):
        return
    required = ClientCapabilities.model_validate({"elicitation": {"form": {}}})
    raise MCPError(
        code=MISSING_REQUIRED_CLIENT_CAPABILITY,
        message="Client did not declare the elicitation capability (form mode) this confirmation needs",
        data={"requiredCapabilities": required.model_dump(by_alias=True, mode="json", exclude_none=True)},
    )
