"""`confirmations.values.fields`: a reply's scalar fields, flattened, the first of a name kept."""

from __future__ import annotations

import json

from mcp_confirm_audit.confirmations.values import fields
from mcp_confirm_audit.models import Outcome, Response

DEEP = {"a": {"b": {"c": {"d": {"too_deep": 1}, "kept": 2}}}}


def test_fields_flatten_nested_objects_keep_the_first_of_a_name_and_read_the_error_data_last() -> None:
    text = json.dumps(
        {"id": "outer", "inner": {"id": "inner", "ok": False, "n": 1.5}, "list": [1], "none": None}
    )
    response = Response(Outcome.RPC_ERROR, text, data={"id": "data", "record": 7, **DEEP})
    assert fields(response) == {"id": "outer", "ok": False, "n": 1.5, "record": 7, "kept": 2}
    assert list(fields(response)) == ["id", "ok", "n", "record", "kept"]


def test_a_reply_that_is_no_json_object_has_no_fields() -> None:
    assert fields(Response(Outcome.COMPLETE, "done: id=4")) == {}
    assert fields(Response(Outcome.COMPLETE, "[1, 2]", data=["x"])) == {}
