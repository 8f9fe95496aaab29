"""`schemas/attacks.schema.json` is generated from the models the loader validates with, and holds."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from mcp_confirm_audit.catalogue import entries

ROOT = Path(__file__).resolve().parents[2]


@cache
def _validator() -> jsonschema.Draft202012Validator:
    schema = json.loads((ROOT / "schemas" / "attacks.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_checked_in_schema_is_not_stale() -> None:
    text = (ROOT / "schemas" / "attacks.schema.json").read_text(encoding="utf-8")
    assert text == entries.catalogue_schema_text(), (
        f"schemas/attacks.schema.json is stale: run `{entries.SCHEMA_COMMAND}`"
    )


@pytest.mark.parametrize("path", sorted((ROOT / "attacks").glob("*.yaml")), ids=lambda p: p.stem)
def test_the_schema_accepts_every_shipped_family(path: Path) -> None:
    errors = list(_validator().iter_errors(yaml.safe_load(path.read_text())))
    assert not errors, f"{path.name}: {errors[0].message}"


def _replay(entry: dict[str, Any], **family: Any) -> dict[str, Any]:
    return {
        "family": "replay",
        "code": "REPLAY",
        "technique": "replay",
        "severity": "high",
        "level": "MUST",
        "remedy": "Spend it.",
        "owasp": [],
        **family,
        "attacks": [{"id": "MCA-REPLAY-001", "slug": "x", **entry}],
    }


@pytest.mark.parametrize(
    "document",
    [
        _replay({"refused-by": ["tool"], "params": {"mode": "after-success"}}),
        _replay({"statuss": "retired", "params": {"mode": "after-success"}}),
        _replay({"parms": {"mode": "after-success"}}),
        _replay({"params": {"mode": "after-sucess"}}),
        _replay({"params": {"mode": "after-success", "extra": 1}}),
        _replay({}),
        _replay({"params": {"mode": "after-success"}}, technique="replya"),
        _replay({"params": {"mode": "after-success"}}, severity="dire"),
        _replay({"params": {"mode": "after-success"}}, owasp=["ASI11"]),
        _replay({"params": {"mode": "after-success"}, "refused_by": ["the-moon"]}),
    ],
    ids=[
        "refused-by",
        "statuss",
        "parms",
        "mode-typo",
        "params-extra",
        "params-missing",
        "technique",
        "severity",
        "owasp",
        "layer",
    ],
)
def test_the_schema_refuses_what_the_loader_refuses(document: dict[str, Any]) -> None:
    # A schema that accepts anything would pass the test above.
    assert list(_validator().iter_errors(document))


def test_the_schema_types_params_by_the_familys_technique() -> None:
    # out-of-root's `length` is an integer; replay takes no `length` at all.
    oor = _replay({"params": {"target": "overlong", "length": 10}}, technique="out-of-root")
    assert not list(_validator().iter_errors(oor))
    assert list(_validator().iter_errors(_replay({"params": {"target": "overlong", "length": 10}})))
    oor["attacks"][0]["params"]["length"] = "10"
    assert list(_validator().iter_errors(oor))
