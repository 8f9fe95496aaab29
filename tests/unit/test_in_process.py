"""In-process targets: built by a factory named by module or by file, driven through `Client(server)`.

`Client(server)` runs the server's whole middleware chain; ablation builds the
same server with the SDK's request-state boundary taken out of that chain.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.server.request_state import RequestStateBoundary

from mcp_confirm_audit.errors import TargetError, UsageError
from mcp_confirm_audit.profile.loader import Profile
from mcp_confirm_audit.target.driver import connect, remove_boundary

pytestmark = pytest.mark.anyio

FACTORY = '''
from mcp.server.mcpserver import MCPServer

built = []

def build(root, *, greeting="hello"):
    server = MCPServer("in-process-" + greeting)

    @server.tool()
    def where() -> str:
        """The root the factory was given."""
        return str(root)

    built.append(server)
    return server

def broken(root):
    raise RuntimeError("no database configured")
'''


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    path = tmp_path / "inproc_factory.py"
    path.write_text(FACTORY)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield path
    sys.modules.pop("inproc_factory", None)


async def open_and_ask(profile: Profile, root: Path) -> str:
    async with connect(profile, root, root, "primary") as conn:
        assert conn.endpoint is not None  # more clients can attach to the same server
        result = await conn.client.session.call_tool("where", {})
        info = conn.client.session
        name = getattr(info, "server_info", None) or info.discover_result.server_info
        return f"{name.name} {result.content[0].text}"


@pytest.mark.parametrize("form", ["module", "file"])
async def test_a_factory_by_module_or_by_file_gets_the_root_and_its_arguments(
    module: Path, tmp_path: Path, form: str
) -> None:
    ref = "inproc_factory" if form == "module" else str(module)
    profile = Profile(command=f"py:{ref}:build", factory_args={"greeting": "hi"})
    assert await open_and_ask(profile, tmp_path) == f"in-process-hi {tmp_path}"


@pytest.mark.parametrize(
    ("command", "error", "message"),
    [
        ("py:inproc_factory", UsageError, "must look like py:package.module:factory"),
        ("py:no_such_module_xyz:build", UsageError, "cannot import 'no_such_module_xyz'"),
        ("py:inproc_factory:missing", UsageError, "has no callable 'missing'"),
        ("py:/nonexistent/file.py:build", UsageError, "is not a file"),
        ("py:inproc_factory:broken", TargetError, "the factory failed: RuntimeError: no database configured"),
    ],
)
async def test_a_bad_in_process_target_is_one_line_saying_what_is_wrong(
    module: Path, tmp_path: Path, command: str, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        await open_and_ask(Profile(command=command), tmp_path)


async def test_ablation_takes_the_sdk_boundary_out_of_the_chain_and_nothing_else(
    module: Path, tmp_path: Path
) -> None:
    import inproc_factory  # type: ignore[import-not-found]

    async with connect(Profile(command="py:inproc_factory:build"), tmp_path, tmp_path, "a", ablate=True):
        ablated = inproc_factory.built[-1]
    kept = inproc_factory.build(tmp_path)
    assert not any(isinstance(m, RequestStateBoundary) for m in ablated.middleware)
    assert any(isinstance(m, RequestStateBoundary) for m in kept.middleware)
    assert len(ablated.middleware) == len(kept.middleware) - 1


def test_a_server_without_a_middleware_chain_cannot_be_ablated() -> None:
    with pytest.raises(TargetError, match="no middleware list"):
        remove_boundary(object())
