"""LLM tapes: the `anthropic` SDK through `reel llm`, recorded against the mock model
server llmock (its own pytest fixture `llmock`: a real HTTP server in this process) and
replayed with the upstream unreachable."""

from __future__ import annotations

import pytest

# A port nothing listens on: recording through it would fail, so a pass is a replay.
UNREACHABLE = "http://127.0.0.1:9/anthropic"

INNER = '''
import anthropic
import pytest


@pytest.mark.reel({marker})
def test_chat(reel_llm):
    client = anthropic.Anthropic(base_url=reel_llm.base_url, api_key="test-key", max_retries=0)
    message = client.messages.create(
        model="reel-text",
        max_tokens=64,
        messages=[{{"role": "user", "content": {prompt!r}}}],
    )
    assert message.content[0].text == "Hello from the mock model."
    {extra}
'''


def inner(prompt="Say hello.", marker="", extra="") -> str:
    return INNER.format(prompt=prompt, marker=marker, extra=extra or "pass")


@pytest.fixture
def upstream(llmock):
    """llmock answering every request with the text the inner tests expect: its
    Anthropic API's base URL."""
    llmock.reply("Hello from the mock model.", times=None)
    return llmock.base_url("anthropic")


def test_once_records_then_replays_with_the_upstream_gone(suite, upstream):
    suite.write("test_chat", inner(extra="assert reel_llm.mode == 'record'"))
    suite.run("--reel-llm-upstream", upstream).assert_outcomes(passed=1)
    runs = suite.runs()
    assert [(r["label"], r["kind"]) for r in runs] == [("test_chat-test_chat", "llm")]

    suite.write("test_chat", inner(extra="assert reel_llm.mode == 'replay'"))
    suite.run("--reel-llm-upstream", UNREACHABLE).assert_outcomes(passed=1)
    assert [r["path"] for r in suite.runs()] == [runs[0]["path"]]


def test_another_prompt_fails_with_the_miss_report(suite, upstream):
    suite.write("test_chat", inner())
    suite.run("--reel-llm-upstream", upstream).assert_outcomes(passed=1)

    suite.write("test_chat", inner(prompt="Say goodbye."))
    result = suite.run("--reel-llm-upstream", UNREACHABLE)
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "reel llm: the LLM tape `test_chat-test_chat` answered requests with a miss (exit 3)" in out
    assert "POST /v1/messages" in out
    assert 'which differs at /messages/0/content: "Say hello." -> "Say goodbye."' in out
    assert "pytest --reel-record test_chat.py::test_chat" in out


def test_none_without_a_tape_fails_and_all_records_again(suite, upstream):
    suite.write("test_chat", inner())
    result = suite.run("--reel-record-mode=none")
    result.assert_outcomes(errors=1)
    assert "no LLM tape `test_chat-test_chat`" in result.stdout.str()

    suite.run("--reel-llm-upstream", upstream).assert_outcomes(passed=1)
    first = suite.runs()[0]["path"]
    suite.write("test_chat", inner(marker=f"upstream={upstream!r}",
                                   extra="assert reel_llm.mode == 'record'"))
    suite.run("--reel-record").assert_outcomes(passed=1)
    runs = suite.runs()
    assert len(runs) == 1 and runs[0]["path"] != first


def test_new_episodes_replays_an_existing_llm_tape(suite, upstream):
    suite.write("test_chat", inner(marker=f"upstream={upstream!r}"))
    suite.run("--reel-record-mode=new_episodes").assert_outcomes(passed=1)
    first = suite.runs()[0]["path"]
    suite.write("test_chat", inner(marker=f"upstream={UNREACHABLE!r}",
                                   extra="assert reel_llm.mode == 'replay'"))
    suite.run("--reel-record-mode=new_episodes").assert_outcomes(passed=1)
    suite.write("test_chat", inner(prompt="Something new.", marker=f"upstream={upstream!r}"))
    result = suite.run("--reel-record-mode=new_episodes")
    result.assert_outcomes(failed=1)
    assert "record mode new_episodes replays an LLM tape that exists" in result.stdout.str()
    assert [r["path"] for r in suite.runs()] == [first]
