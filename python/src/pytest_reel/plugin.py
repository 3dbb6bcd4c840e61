"""The pytest side: options, the `reel` marker, the fixtures, and the hook that turns
reel's verdict into the test's outcome.

Settings are resolved in one place (`_Settings`), most specific first: the fixture
call's arguments, the `@pytest.mark.reel(...)` marker, the command line, the environment,
the ini file, the defaults. Every tape a test opens is kept on its item; right after
the test function returns (or raises) each is judged (`pytest_runtest_call`), so a tape
that did not replay cleanly fails the test itself, with reel's report as the message.
One reel has not finished with yet is judged again at the fixture's teardown, waiting up
to `reel_report_timeout` seconds.
"""

from __future__ import annotations

import os
import traceback
from pathlib import Path
from typing import Any, Callable

import pytest

from .llm_tape import LlmTape
from .mcp_tape import McpTape
from .tapes import (
    DEFAULT_RECORD_MODE,
    RECORD_MODES,
    ReelError,
    check_mode,
    check_name,
    find_reel,
    name_from_nodeid,
)

_TAPES = pytest.StashKey[list]()
# Set once the test function has run: a test skipped in it, or whose setup failed, has
# nothing to judge.
_CALLED = pytest.StashKey[bool]()
# How long the call phase waits for an MCP report before leaving it to teardown: the
# client has normally closed the server (and reel written its report) by then.
_CALL_GRACE = 1.0
_MARKER_KEYS = {"server", "name", "record_mode", "tapes", "upstream", "env", "cwd"}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("reel", "replay MCP and LLM tapes recorded by reel")
    group.addoption(
        "--reel-record",
        action="store_const",
        const="all",
        dest="reel_record_mode",
        help="record every tape again (record mode `all`)",
    )
    group.addoption(
        "--reel-record-mode",
        choices=RECORD_MODES,
        dest="reel_record_mode",
        help="none: replay only; once (default): record missing tapes, replay the others; "
        "new_episodes: replay the tools a tape holds, record the rest; all: record every tape",
    )
    group.addoption("--reel-tapes", metavar="DIR", help="the tapes directory for every test")
    group.addoption(
        "--reel-bin",
        metavar="PATH",
        help="the reel binary (else $REEL_BIN, else the one the reel-cli distribution "
        "installed, else reel on PATH)",
    )
    group.addoption(
        "--reel-llm-upstream",
        metavar="URL",
        help="where `reel llm` forwards model calls when recording (else $REEL_LLM_UPSTREAM, "
        "else the providers' APIs)",
    )
    parser.addini("reel_tapes", "the tapes directory, relative to the ini file (default: "
                  "`tapes/` beside each test file)")
    parser.addini("reel_record_mode", f"default record mode ({DEFAULT_RECORD_MODE})")
    parser.addini("reel_llm_upstream", "where `reel llm` forwards model calls when recording")
    parser.addini("reel_report_timeout", "seconds teardown waits for reel's verdict (10)",
                  default="10")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "reel(server=[...], name=..., record_mode=..., tapes=..., upstream=...): the live MCP "
        "server command, tape name, record mode, tapes directory and LLM upstream of a test "
        "using reel's fixtures",
    )
    mode = config.getini("reel_record_mode")
    if mode:
        try:
            check_mode(mode, "ini option reel_record_mode")
        except ReelError as e:
            raise pytest.UsageError(str(e)) from None


class _Settings:
    """A test's reel settings, resolved once."""

    def __init__(self, request: pytest.FixtureRequest, overrides: dict[str, Any]) -> None:
        config = request.config
        marker = request.node.get_closest_marker("reel")
        marked = dict(marker.kwargs) if marker else {}
        unknown = set(marked) - _MARKER_KEYS
        if unknown:
            raise ReelError(
                f"@pytest.mark.reel: unknown arguments {sorted(unknown)}; known: "
                f"{sorted(_MARKER_KEYS)}"
            )
        given = {k: v for k, v in overrides.items() if v is not None}
        self.values = {**marked, **given}
        self.nodeid = request.node.nodeid
        self.reel = find_reel(config.getoption("reel_bin"))
        self.name = check_name(self.values.get("name") or name_from_nodeid(self.nodeid))
        self.record_mode = self._record_mode(config, marked, given)
        self.tapes = self._tapes(request)
        self.timeout = float(config.getini("reel_report_timeout") or 10)

    def _record_mode(self, config, marked, given) -> str:
        if "record_mode" in given:
            return check_mode(given["record_mode"], "record_mode argument")
        if "record_mode" in marked:
            return check_mode(marked["record_mode"], "@pytest.mark.reel(record_mode=...)")
        if config.getoption("reel_record_mode"):
            return config.getoption("reel_record_mode")
        if os.environ.get("REEL_RECORD_MODE"):
            return check_mode(os.environ["REEL_RECORD_MODE"], "REEL_RECORD_MODE")
        return config.getini("reel_record_mode") or DEFAULT_RECORD_MODE

    def _tapes(self, request: pytest.FixtureRequest) -> Path:
        config = request.config
        if self.values.get("tapes"):
            tapes = Path(self.values["tapes"])
            base = Path(request.node.path).parent
        elif config.getoption("reel_tapes"):
            tapes = Path(config.getoption("reel_tapes"))
            base = config.invocation_params.dir
        elif config.getini("reel_tapes"):
            tapes = Path(config.getini("reel_tapes"))
            base = config.inipath.parent if config.inipath else config.rootpath
        else:
            return Path(request.node.path).parent.resolve() / "tapes"
        return (tapes if tapes.is_absolute() else Path(base) / tapes).resolve()

    def upstream(self, config: pytest.Config) -> str | None:
        return (
            self.values.get("upstream")
            or config.getoption("reel_llm_upstream")
            or os.environ.get("REEL_LLM_UPSTREAM")
            or config.getini("reel_llm_upstream")
            or None
        )


def _opened(item: pytest.Item) -> list:
    return item.stash.setdefault(_TAPES, [])


def _judge(item: pytest.Item, final: bool) -> list[str]:
    failures = []
    for tape, timeout in _opened(item):
        failure = tape.finish(timeout if final else _CALL_GRACE, final)
        if failure:
            failures.append(failure)
    return failures


def _format_test_exception(exc: BaseException) -> str:
    """The exception with the frames of pytest, pluggy and this plugin left out."""
    tb = exc.__traceback__
    while tb is not None and any(
        part in tb.tb_frame.f_code.co_filename for part in ("pluggy", "_pytest", "pytest_reel")
    ):
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(exc), exc, tb))


def _leaf(exc: BaseException) -> BaseException:
    """The first exception inside exception groups (anyio's task groups wrap the client's
    error in one or two)."""
    while isinstance(getattr(exc, "exceptions", None), tuple) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    item.stash[_CALLED] = True
    try:
        result = yield
    except (pytest.skip.Exception, pytest.xfail.Exception):
        # Skipped inside the test, or pytest.xfail(): the client may not have run at all.
        for tape, _ in _opened(item):
            tape.abandon()
        raise
    except pytest.fail.Exception:
        failures = _judge(item, final=False)
        if failures:
            pytest.fail("\n\n".join(failures), pytrace=False)
        raise
    except Exception as exc:
        failures = _judge(item, final=False)
        if failures:
            # reel's report explains the failure; the test's own exception (typically the
            # client's error for a miss) is kept whole as a section of the report.
            item.add_report_section(
                "call", "exception the test raised", _format_test_exception(exc)
            )
            leaf = _leaf(exc)
            failures.append(f"(the test raised {type(leaf).__name__}: {leaf})")
            raise pytest.fail.Exception("\n\n".join(failures), pytrace=False) from None
        raise
    failures = _judge(item, final=False)
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)
    return result


def _finalize(item: pytest.Item, own: list) -> None:
    __tracebackhide__ = True
    if not item.stash.get(_CALLED, False):
        for tape, _ in own:
            tape.abandon()
        return
    failures = []
    for tape, timeout in own:
        failure = tape.finish(timeout, True)
        if failure:
            failures.append(failure)
    if failures:
        pytest.fail("\n\n".join(failures), pytrace=False)


def _open(request: pytest.FixtureRequest, kind: type, make: Callable[[_Settings, Path], Any],
          own: list, overrides: dict[str, Any]):
    """Opens a tape of `kind` made by `make`, kept on the item and in the fixture's `own`
    list (which its teardown judges); a setting or tape problem fails the test."""
    __tracebackhide__ = True
    try:
        settings = _Settings(request, overrides)
        if any(t.name == settings.name and type(t) is kind for t, _ in _opened(request.node)):
            raise ReelError(
                f"the tape `{settings.name}` is already open in this test: give each server or "
                "model its own name=..."
            )
        tmp = request.getfixturevalue("tmp_path_factory").mktemp("reel", numbered=True)
        tape = make(settings, tmp)
    except ReelError as e:
        problem = str(e)
    else:
        problem = None
    if problem is not None:
        # Outside the except block: the message is the whole report, not printed twice
        # as the cause of its own failure.
        pytest.fail(problem, pytrace=False)
    _opened(request.node).append((tape, settings.timeout))
    own.append((tape, settings.timeout))
    return tape


@pytest.fixture
def reel_mcp_factory(request: pytest.FixtureRequest):
    """`open(server=None, *, name=None, record_mode=None, tapes=None, env=None, cwd=None)
    -> McpTape`: a tape per MCP server the test starts; what is not given comes from the
    `reel` marker, the options, the defaults."""
    own: list = []

    def make(settings: _Settings, tmp: Path) -> McpTape:
        return McpTape(
            reel=settings.reel,
            name=settings.name,
            tapes=settings.tapes,
            record_mode=settings.record_mode,
            server=settings.values.get("server"),
            nodeid=settings.nodeid,
            workdir=tmp,
            env=settings.values.get("env"),
            cwd=settings.values.get("cwd"),
        )

    def open_tape(server=None, *, name=None, record_mode=None, tapes=None, env=None, cwd=None):
        __tracebackhide__ = True
        given = {"server": server, "name": name, "record_mode": record_mode, "tapes": tapes,
                 "env": env, "cwd": cwd}
        return _open(request, McpTape, make, own, given)

    yield open_tape
    _finalize(request.node, own)


@pytest.fixture
def reel_mcp(reel_mcp_factory) -> McpTape:
    """The test's MCP tape, set up by `@pytest.mark.reel(server=[...], ...)`: give
    `reel_mcp.params` to `mcp.client.stdio.stdio_client`."""
    return reel_mcp_factory()


@pytest.fixture
def reel_llm(request: pytest.FixtureRequest):
    """A running `reel llm` for the test's LLM tape: `reel_llm.base_url` for the
    `anthropic` SDK, `reel_llm.openai_base_url` for the `openai` SDK."""
    own: list = []

    def make(settings: _Settings, tmp: Path) -> LlmTape:
        return LlmTape(
            reel=settings.reel,
            name=settings.name,
            tapes=settings.tapes,
            record_mode=settings.record_mode,
            upstream=settings.upstream(request.config),
            nodeid=settings.nodeid,
            workdir=tmp,
        )

    tape = _open(request, LlmTape, make, own, {})
    try:
        yield tape
    finally:
        _finalize(request.node, own)
