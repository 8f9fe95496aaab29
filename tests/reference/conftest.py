"""Fixtures for the reference-server smoke tests."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
from rounds import import_by_path

SERVER_PY = Path(__file__).resolve().parents[2] / "targets" / "reference" / "server.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def server_py() -> Path:
    return SERVER_PY


@pytest.fixture(scope="session")
def reference() -> ModuleType:
    """targets/reference/server.py, imported by file path (it is not an installed package)."""
    return import_by_path("mcp_confirm_reference_server", SERVER_PY)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """tmp/root with a.txt and sub/b.txt; tmp/outside.txt and tmp/root-evil/f.txt beside it."""
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("hello")
    (root / "sub" / "b.txt").write_text("bee")
    (tmp_path / "outside.txt").write_text("outside")
    (tmp_path / "root-evil").mkdir()
    (tmp_path / "root-evil" / "f.txt").write_text("evil")
    return root
