"""`audit.json` has one declaration, `report.audit_model`: the generated schema and a real audit hold to it."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from mcp_confirm_audit.report import audit_json, audit_model

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "targets" / "reference" / "server.py"


@cache
def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((ROOT / "schemas" / "audit.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )


def _holds(text: str) -> None:
    """The document validates with the models (strict, every key declared) and the generated schema."""
    document: dict[str, Any] = json.loads(text)
    model = audit_model.AuditDocument.model_validate_json(text)
    # Every key the document has is one the models declare, with the value it had.
    assert model.model_dump(mode="json", exclude_unset=True) == document
    assert [e.message for e in _validator().iter_errors(document)] == []


@pytest.mark.parametrize(
    "path",
    [ROOT / "schemas" / "audit.schema.json", ROOT / "mcp_confirm_audit" / "report" / "audit.schema.json"],
    ids=["schemas", "package"],
)
def test_the_checked_in_schemas_are_generated_from_the_models(path: Path) -> None:
    assert path.read_text(encoding="utf-8") == audit_model.schema_text(), (
        f"{path.relative_to(ROOT)} is stale: run `mcp-confirm-audit schema audit -o {path.relative_to(ROOT)}`"
    )
    assert audit_json.schema() == audit_model.schema()


def test_the_checked_in_review_of_a_real_server_holds() -> None:
    _holds((ROOT / "reports" / "mcp-confirm" / "audit.json").read_text(encoding="utf-8"))


def test_an_audit_json_written_by_an_in_process_audit_holds(pytester: pytest.Pytester) -> None:
    pytester.syspathinsert(SERVER.parent)
    run = pytester.runpytest_inprocess(
        "--mcp-target",
        f"py:{SERVER}:build_server",
        "--mcp-report-dir",
        "out",
        "-k",
        "MCA-REPLAY-001 or MCA-FORGE-001 or control",
        "-p",
        "no:randomly",
    )
    assert run.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    text = (pytester.path / "out" / "audit.json").read_text()
    assert json.loads(text)["target"]["transport"] == "in-process"
    _holds(text)


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (lambda d: d["results"][0].update(verdic="refused"), "verdic"),
        (lambda d: d["results"][0].update(verdict="fine"), "verdict"),
        (lambda d: d["target"].update(transport="pigeon"), "transport"),
        (lambda d: d.update(schema_version=2), "schema_version"),
    ],
)
def test_the_models_and_the_schema_refuse_what_audit_json_may_not_hold(change: Any, key: str) -> None:
    document = json.loads((ROOT / "reports" / "mcp-confirm" / "audit.json").read_text(encoding="utf-8"))
    change(document)
    with pytest.raises(ValueError, match=key):
        audit_model.AuditDocument.model_validate_json(json.dumps(document))
    assert list(_validator().iter_errors(document))
