"""MCP tapes: the Python MCP SDK client against reel's example server and the SDK's own
server (`sdk_server.py`), recorded once and replayed offline, in each record mode, and
failing with reel's report when it drifts."""

from __future__ import annotations

from conftest import trace_lines

# An inner test: the live server is `SERVER`, the calls `CALLS`.
TEMPLATE = '''
import pytest
from conftest import REEL, SDK_SERVER

SERVER = {server}


@pytest.mark.reel(server=SERVER{marker})
def test_tools(reel_mcp, calls):
    answers = calls(reel_mcp.params, {calls})
    assert answers == {answers}
    {extra}
'''

LIVE = "[REEL, 'example', 'server']"
GONE = "['/nonexistent/mcp-server']"
ECHO_HI = "[('echo', {'text': 'hi'}), ('add', {'a': 2, 'b': 3})]"
ECHO_HI_ANSWERS = "['hi', '2 + 3 = 5']"


def inner(server=LIVE, calls=ECHO_HI, answers=ECHO_HI_ANSWERS, marker="", extra="") -> str:
    return TEMPLATE.format(server=server, calls=calls, answers=answers, marker=marker,
                           extra=extra or "pass")


def test_once_records_a_missing_tape_then_replays_it_offline(suite):
    suite.write("test_one", inner(extra="assert reel_mcp.mode == 'record'"))
    result = suite.run()
    result.assert_outcomes(passed=1)
    runs = suite.runs()
    assert [(r["label"], r["kind"]) for r in runs] == [("test_one-test_tools", "mcp")]
    recorded = trace_lines(runs[0]["path"])
    assert recorded[0]["command"][-3:] == [suite.reel, "example", "server"]

    # The live server no longer exists: only `reel play` can answer.
    suite.write("test_one", inner(
        server=GONE,
        extra="assert reel_mcp.mode == 'replay' and reel_mcp.args[0] == 'play' "
              "and reel_mcp.command == REEL",
    ))
    result = suite.run()
    result.assert_outcomes(passed=1)
    assert [r["path"] for r in suite.runs()] == [runs[0]["path"]]


def test_a_call_with_other_arguments_fails_with_the_miss_report(suite):
    suite.write("test_drift", inner())
    suite.run().assert_outcomes(passed=1)

    suite.write("test_drift", inner(
        server=GONE,
        calls="[('echo', {'text': 'bye'}), ('add', {'a': 2, 'b': 3})]",
        answers="['bye', '2 + 3 = 5']",
    ))
    result = suite.run()
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "reel play: the MCP tape `test_drift-test_tools` did not replay cleanly" in out
    assert "verdict misses, exit 3" in out
    # The call, its nearest recorded request and where they differ.
    assert 'request: {"arguments":{"text":"bye"},"name":"echo"}' in out
    assert '/params/arguments/text: "hi" -> "bye"' in out
    assert "pytest --reel-record test_drift.py::test_tools" in out
    # The tape is left as it was.
    assert len(suite.runs()) == 1


def test_a_tape_that_answers_but_is_not_used_up_still_passes(suite):
    suite.write("test_fewer", inner())
    suite.run().assert_outcomes(passed=1)
    suite.write("test_fewer", inner(server=GONE, calls="[('echo', {'text': 'hi'})]",
                                    answers="['hi']"))
    suite.run().assert_outcomes(passed=1)


def test_none_fails_without_a_tape_and_says_how_to_record(suite, monkeypatch):
    suite.write("test_none", inner())
    result = suite.run("--reel-record-mode=none")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "no MCP tape `test_none-test_tools`" in out
    assert "the record mode is `none`" in out
    assert "pytest --reel-record-mode=once test_none.py::test_tools" in out
    assert suite.runs() == []
    # The same from the environment, as CI sets it.
    monkeypatch.setenv("REEL_RECORD_MODE", "none")
    suite.run().assert_outcomes(errors=1)
    monkeypatch.delenv("REEL_RECORD_MODE")

    suite.run().assert_outcomes(passed=1)
    suite.write("test_none", inner(server=GONE))
    suite.run("--reel-record-mode=none").assert_outcomes(passed=1)


def test_all_records_again_and_replaces_the_tape(suite):
    suite.write("test_all", inner())
    suite.run().assert_outcomes(passed=1)
    first = suite.runs()[0]["path"]

    changed = "[('echo', {'text': 'ho'})]"
    suite.write("test_all", inner(calls=changed, answers="['ho']",
                                  extra="assert reel_mcp.mode == 'record'"))
    suite.run("--reel-record").assert_outcomes(passed=1)
    runs = suite.runs()
    assert len(runs) == 1 and runs[0]["path"] != first

    suite.write("test_all", inner(server=GONE, calls=changed, answers="['ho']"))
    suite.run().assert_outcomes(passed=1)
    suite.write("test_all", inner(server=GONE))
    suite.run().assert_outcomes(failed=1)


def test_record_mode_all_from_the_option_and_a_marker_overrides_it(suite):
    suite.write("test_modes", inner())
    suite.run().assert_outcomes(passed=1)
    first = suite.runs()[0]["path"]
    suite.run("--reel-record-mode=all").assert_outcomes(passed=1)
    second = suite.runs()[0]["path"]
    assert second != first and len(suite.runs()) == 1

    # The marker's record_mode wins over the command line.
    suite.write("test_modes", inner(server=GONE, marker=", record_mode='once'",
                                    extra="assert reel_mcp.mode == 'replay'"))
    suite.run("--reel-record").assert_outcomes(passed=1)
    assert suite.runs()[0]["path"] == second


def test_a_bad_record_mode_in_a_marker_is_named(suite):
    suite.write("test_bad", inner(marker=", record_mode='sometimes'"))
    result = suite.run()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*unknown record mode 'sometimes'; one of none, once, "
                                 "new_episodes, all*"])


def test_new_episodes_answers_taped_tools_from_the_tape_and_records_the_others(suite):
    suite.write("test_new", inner(calls="[('echo', {'text': 'hi'})]", answers="['hi']"))
    suite.run().assert_outcomes(passed=1)
    old = suite.runs()[0]["path"]

    suite.write("test_new", inner(extra="assert reel_mcp.mode == 'new_episodes'"))
    result = suite.run("--reel-record-mode=new_episodes")
    result.assert_outcomes(passed=1)
    runs = suite.runs()
    assert len(runs) == 1 and runs[0]["path"] != old
    assert runs[0]["label"] == "test_new-test_tools"
    lines = trace_lines(runs[0]["path"])
    called, origin = {}, {}
    for line in lines:
        raw = line.get("raw")
        if not isinstance(raw, dict):
            continue
        if line.get("dir") == "in" and raw.get("method") == "tools/call":
            called[raw["id"]] = raw["params"]["name"]
        elif line.get("dir") == "out" and raw.get("id") in called:
            origin[called[raw["id"]]] = line.get("origin")
    # echo's answer came from the old tape; add was new and answered by the live server.
    assert origin == {"echo": "tape", "add": "live"}

    # The new tape replays both offline.
    suite.write("test_new", inner(server=GONE))
    suite.run("--reel-record-mode=none").assert_outcomes(passed=1)


def test_new_episodes_misses_a_taped_tool_called_with_new_arguments(suite):
    suite.write("test_new_args", inner())
    suite.run().assert_outcomes(passed=1)
    old = suite.runs()[0]["path"]
    suite.write("test_new_args", inner(calls="[('echo', {'text': 'other'})]",
                                       answers="['other']"))
    result = suite.run("--reel-record-mode=new_episodes")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert '/params/arguments/text: "hi" -> "other"' in out
    assert "record mode new_episodes answers calls of the tools the tape holds (add, echo)" in out
    assert [r["path"] for r in suite.runs()] == [old]


def test_tape_names_come_from_the_node_id(suite):
    suite.write("test_names", '''
import pytest
from conftest import REEL


class TestNames:
    @pytest.mark.parametrize("text", ["a b", "c/d"])
    @pytest.mark.reel(server=[REEL, "example", "server"])
    def test_echo(self, reel_mcp, calls, text):
        assert calls(reel_mcp.params, [("echo", {"text": text})]) == [text]
''')
    suite.run().assert_outcomes(passed=2)
    assert suite.labels() == ["test_names-TestNames-test_echo-a-b",
                              "test_names-TestNames-test_echo-c-d"]
    suite.run("--reel-record-mode=none").assert_outcomes(passed=2)


def test_the_factory_opens_one_tape_per_server(suite):
    suite.write("test_factory", '''
from conftest import REEL


def test_two(reel_mcp_factory, calls):
    first = reel_mcp_factory([REEL, "example", "server"], name="first")
    second = reel_mcp_factory([REEL, "example", "server"], name="second")
    assert calls(first.params, [("echo", {"text": "1"})]) == ["1"]
    assert calls(second.params, [("add", {"a": 1, "b": 1})]) == ["1 + 1 = 2"]


def test_same_name_twice(reel_mcp_factory, calls):
    first = reel_mcp_factory([REEL, "example", "server"], name="first")
    assert calls(first.params, [("echo", {"text": "1"})]) == ["1"]
    reel_mcp_factory([REEL, "example", "server"], name="first")
''')
    result = suite.run("-k", "test_two")
    result.assert_outcomes(passed=1, deselected=1)
    assert suite.labels() == ["first", "second"]
    result = suite.run("-k", "test_same_name_twice", "--reel-record-mode=none")
    result.assert_outcomes(failed=1, deselected=1)
    assert "the tape `first` is already open in this test" in result.stdout.str()


def test_a_server_never_started_fails_at_teardown(suite):
    suite.pytester.makeini("[pytest]\nreel_report_timeout = 1\n")
    suite.write("test_unused", inner())
    suite.run().assert_outcomes(passed=1)
    suite.write("test_unused", '''
import pytest


@pytest.mark.reel(server=["/nonexistent/mcp-server"], name="test_unused-test_tools")
def test_tools(reel_mcp):
    pass


@pytest.mark.reel(server=["/nonexistent/mcp-server"], name="test_unused-test_tools")
def test_skipped(reel_mcp):
    pytest.skip("not today")
''')
    result = suite.run()
    # A test skipped inside has nothing to judge.
    result.assert_outcomes(passed=1, errors=1, skipped=1)
    out = result.stdout.str()
    assert "ERROR at teardown of test_tools" in out
    assert "no report from the tape `test_unused-test_tools` within 1 s" in out


def test_tapes_directory_from_the_option_the_ini_file_and_the_marker(suite):
    suite.write("test_where", inner())
    suite.run("--reel-tapes", "from-option").assert_outcomes(passed=1)
    assert suite.labels(suite.dir / "from-option") == ["test_where-test_tools"]

    suite.pytester.makeini("[pytest]\nreel_tapes = from-ini\n")
    suite.run().assert_outcomes(passed=1)
    assert suite.labels(suite.dir / "from-ini") == ["test_where-test_tools"]

    suite.write("test_where", inner(marker=", tapes='from-marker'"))
    suite.run().assert_outcomes(passed=1)
    assert suite.labels(suite.dir / "from-marker") == ["test_where-test_tools"]
    assert suite.runs() == []


def test_reel_is_found_by_option_then_environment_and_a_missing_one_is_named(suite, monkeypatch):
    suite.write("test_bin", inner())
    monkeypatch.setenv("REEL_BIN", "/nonexistent/reel")
    result = suite.run()
    result.assert_outcomes(errors=1)
    assert ("reel not found: REEL_BIN names '/nonexistent/reel', which is not an executable "
            "file") in result.stdout.str()
    # The message once, not again as the cause of the failure that reports it.
    assert "During handling of the above exception" not in result.stdout.str()

    result = suite.run("--reel-bin", "/nonexistent/other-reel")
    result.assert_outcomes(errors=1)
    assert "reel not found: --reel-bin names '/nonexistent/other-reel'" in result.stdout.str()

    # The option wins over the environment.
    suite.write("test_bin", inner(server=f"[{suite.reel!r}, 'example', 'server']"))
    suite.run("--reel-bin", suite.reel).assert_outcomes(passed=1)


def test_a_python_sdk_server_records_and_replays_offline(suite):
    """A server reel did not write: the Python MCP SDK's MCPServer (`sdk_server.py`)."""
    calls = "[('echo', {'message': 'hi'}), ('get_sum', {'a': 2, 'b': 3})]"
    answers = "['Echo: hi', 'The sum of 2 and 3 is 5.']"
    suite.write("test_sdk", inner(server="SDK_SERVER", calls=calls, answers=answers))
    suite.run().assert_outcomes(passed=1)
    recorded = trace_lines(suite.runs()[0]["path"])
    assert recorded[0]["command"][-1].endswith("sdk_server.py")

    suite.write("test_sdk", inner(server=GONE, calls=calls, answers=answers))
    suite.run("--reel-record-mode=none").assert_outcomes(passed=1)
    suite.write("test_sdk", inner(server=GONE, calls="[('echo', {'message': 'ho'})]",
                                  answers="['Echo: ho']"))
    result = suite.run()
    result.assert_outcomes(failed=1)
    assert '/params/arguments/message: "hi" -> "ho"' in result.stdout.str()


PROGRESS = '''
import anyio
import pytest
from conftest import SDK_SERVER
from mcp import ClientSession
from mcp.client.stdio import stdio_client


@pytest.mark.reel(server={server})
def test_count(reel_mcp):
    seen = []

    async def progress(done, total, message):
        seen.append((done, total, message))

    async def main():
        async with stdio_client(reel_mcp.params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("count", {{"steps": 3}},
                                                 progress_callback=progress)
                return result.content[0].text

    assert anyio.run(main) == "counted to 3"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
'''


def test_a_tools_progress_is_replayed_to_the_clients_callback(suite):
    """The SDK server's progress notifications, recorded with the client's progress token,
    reach the replayed client's callback with its own token, before the result."""
    suite.write("test_progress", PROGRESS.format(server="SDK_SERVER"))
    suite.run().assert_outcomes(passed=1)
    suite.write("test_progress", PROGRESS.format(server=GONE))
    suite.run("--reel-record-mode=none").assert_outcomes(passed=1)


ROOTS = '''
import anyio
import pytest
from conftest import REEL
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from mcp_types import ListRootsResult, Root


@pytest.mark.reel(server={server})
def test_roots(reel_mcp):
    async def roots(context):
        return ListRootsResult(roots=[Root(uri={uri!r}, name="work")])

    async def main():
        async with stdio_client(reel_mcp.params) as (read, write):
            async with ClientSession(read, write, list_roots_callback=roots) as session:
                await session.initialize()
                result = await session.call_tool("roots", {{}})
                return result.content[0].text

    assert anyio.run(main) == "the client shares 1 root(s): file:///work"
'''


def test_a_client_answering_the_server_differently_fails_as_client_drift(suite):
    """The server's roots/list request is replayed from the tape; the client's answer is
    compared with the recorded one. The test's own assertion passes (the tool's answer is
    the recorded one), and the plugin still fails it."""
    suite.write("test_roots", ROOTS.format(server=LIVE, uri="file:///work"))
    suite.run().assert_outcomes(passed=1)
    suite.write("test_roots", ROOTS.format(server=GONE, uri="file:///work"))
    suite.run().assert_outcomes(passed=1)

    suite.write("test_roots", ROOTS.format(server=GONE, uri="file:///elsewhere"))
    result = suite.run()
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "the client answered the server's requests differently than recorded" in out
    assert "verdict client-drift, exit 4" in out
    assert "client drift: the client's answer to roots/list differs from the recorded one" in out
    assert '/result/roots/0/uri: "file:///work" -> "file:///elsewhere"' in out
    assert "(the test raised" not in out
