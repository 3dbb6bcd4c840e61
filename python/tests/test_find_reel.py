"""Finding reel: `--reel-bin`, else `$REEL_BIN`, else the `reel` the `reel-cli`
distribution installed beside the plugin, else PATH, else an error that says how to get
one."""

from __future__ import annotations

import sys
import sysconfig
from importlib import metadata
from pathlib import Path

import pytest
from pytest_reel import ReelError, find_reel

from test_mcp import inner


def reel_cli_script() -> Path:
    """Where pip puts the `reel` of an installed `reel-cli` wheel: this venv's scripts."""
    try:
        metadata.distribution("reel-cli")
    except metadata.PackageNotFoundError:
        pytest.fail(
            "the reel-cli distribution is not installed in this venv (pytest-reel depends on "
            "it): pip install -e 'python[test]' --find-links DIR-WITH-THE-REEL-CLI-WHEEL"
        )
    return Path(sysconfig.get_path("scripts")) / "reel"


def test_without_reel_bin_the_reel_cli_distributions_reel_runs(suite, monkeypatch):
    script = reel_cli_script()
    monkeypatch.delenv("REEL_BIN", raising=False)
    # Not on PATH either: an un-activated venv, its scripts directory not on PATH.
    monkeypatch.setenv("PATH", "/nonexistent")
    suite.write("test_found", inner(extra=f"assert reel_mcp.command == {str(script)!r}"))
    suite.run().assert_outcomes(passed=1)
    suite.run("--reel-record-mode=none").assert_outcomes(passed=1)


def test_reel_bin_wins_over_the_reel_cli_distribution(monkeypatch, tmp_path):
    own = tmp_path / "my-reel"
    own.write_text("#!/bin/sh\n")
    own.chmod(0o755)
    monkeypatch.setenv("REEL_BIN", str(own))
    assert find_reel() == str(own)


def test_no_reel_anywhere_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.delenv("REEL_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    # An environment without the reel-cli distribution: nothing on the import path.
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    with pytest.raises(ReelError) as error:
        find_reel()
    message = str(error.value)
    assert message.startswith("reel not found: the `reel-cli` distribution, which installs it,")
    assert "`pip install reel-cli`" in message
    assert "--reel-bin PATH or REEL_BIN=PATH" in message
