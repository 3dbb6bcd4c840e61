"""The plugin tested as its users run it: each test writes a small test file of the kind a
user writes (the Python MCP SDK client against reel's example server, the `anthropic`
SDK against a mock model server), runs pytest on it in a subprocess with pytest's
`pytester`, and asserts on the outcomes, the output and the tapes left behind.

reel is `$REEL_BIN` (required); the peers are `$REEL_PEERS`, else `<checkout>/.peers`
(`cargo xtask peers` installs them).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CHECKOUT = Path(__file__).resolve().parents[2]

# The inner suites' conftest: a client session that makes the given tool calls.
INNER_CONFTEST = '''
import os

import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client

REEL = os.environ["REEL_BIN"]


def run_calls(params, calls):
    async def main():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                answers = []
                for name, arguments in calls:
                    result = await session.call_tool(name, arguments)
                    answers.append(result.content[0].text)
                return answers

    return anyio.run(main)


@pytest.fixture
def calls():
    return run_calls
'''


def reel_bin() -> str:
    path = os.environ.get("REEL_BIN", "")
    assert path and os.access(path, os.X_OK), (
        f"REEL_BIN must name the reel binary (got {path!r})"
    )
    return path


def peers_root() -> Path:
    root = os.environ.get("REEL_PEERS")
    return Path(root) if root else CHECKOUT / ".peers"


class Suite:
    """An inner test suite in a temporary directory."""

    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester
        self.reel = reel_bin()
        self.dir = Path(pytester.path)

    def write(self, name: str, source: str) -> Path:
        return self.pytester.makepyfile(**{name: source})

    def run(self, *args: str) -> pytest.RunResult:
        return self.pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rA", *args,
                                                   timeout=120)

    def runs(self, tapes: Path | None = None) -> list[dict]:
        """The runs `reel ls --json` lists in a tapes directory (default: `tapes/`)."""
        tapes = tapes or self.dir / "tapes"
        if not tapes.is_dir():
            return []
        out = subprocess.run([self.reel, "ls", "--json", "--dir", str(tapes)],
                             capture_output=True, text=True, check=True)
        return json.loads(out.stdout)["runs"]

    def labels(self, tapes: Path | None = None) -> list[str]:
        return sorted(r["label"] for r in self.runs(tapes))


@pytest.fixture
def suite(pytester: pytest.Pytester) -> Suite:
    pytester.makeconftest(INNER_CONFTEST)
    return Suite(pytester)


def trace_lines(path: str | Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
