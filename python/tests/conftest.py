"""The plugin tested as its users run it: each test writes a small test file of the kind a
user writes (the Python MCP SDK client against reel's example server, the `anthropic`
SDK against a mock model server), runs pytest on it in a subprocess with pytest's
`pytester`, and asserts on the outcomes, the output and the tapes left behind.

reel is found as the plugin finds it (`pytest_reel.find_reel`: `$REEL_BIN`, else the
`reel` of the `reel-cli` distribution, else PATH). Every package the tests use comes from
the venv they run in: `pip install -e 'python[test]'` installs them, pinned.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from pytest_reel import find_reel

pytest_plugins = ["pytester"]

HERE = Path(__file__).resolve().parent

# The reel every test drives, found once: the inner suites' live servers include
# `reel example server`, written into their conftest as an absolute path.
REEL = find_reel()

# A live server reel did not write: the Python MCP SDK's, on this venv's interpreter.
SDK_SERVER = [sys.executable, str(HERE / "sdk_server.py")]

# The inner suites' conftest: a client session that makes the given tool calls, and the
# live servers (`REEL`, `SDK_SERVER`: filled in by `suite`).
INNER_CONFTEST = '''
import anyio
import pytest
from mcp import ClientSession
from mcp.client.stdio import stdio_client

REEL = {reel!r}
SDK_SERVER = {sdk_server!r}


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


class Suite:
    """An inner test suite in a temporary directory."""

    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester
        self.reel = REEL
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
    pytester.makeconftest(INNER_CONFTEST.format(reel=REEL, sdk_server=SDK_SERVER))
    return Suite(pytester)


def trace_lines(path: str | Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
