"""Shared fixtures for the suite."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _quiet_inner_pytest(request: pytest.FixtureRequest) -> None:
    # Inner pytest runs (pytester) read their own ini; give them the setting
    # pytest-asyncio otherwise warns about, so warnings stay errors out here.
    if "pytester" in request.fixturenames:
        request.getfixturevalue("pytester").makeini(
            "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
        )
